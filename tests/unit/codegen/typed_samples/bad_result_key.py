from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> object:
    page = ShopTable(client).items_of_an_order(order_id="o1")
    return [line["qty"] for line in page.items]  # E: typeddict-item

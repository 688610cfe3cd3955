from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).put_order_item({"order_id": "o1", "line": 1, "sku": "SKU-1"})  # E: typeddict-item

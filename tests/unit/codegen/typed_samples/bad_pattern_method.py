from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).user_orders_newest_first(user_id="u1")  # E: attr-defined

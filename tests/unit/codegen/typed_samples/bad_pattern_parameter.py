from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).users_orders_newest_first(usr_id="u1")  # E: call-arg

from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).get_user(user_id="u1", attributes=["emial"])  # E: list-item

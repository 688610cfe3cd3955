from constructs_lib.runtime import TableClient
from constructs_lib.runtime.conditions import attr
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).user_profile(user_id="u1", filter=attr("name") == "Ada")  # E: call-arg

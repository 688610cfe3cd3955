from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).put_user({"user_id": "u1", "email": "e@example.com", "nmae": "Ada"})  # E: typeddict-unknown-key

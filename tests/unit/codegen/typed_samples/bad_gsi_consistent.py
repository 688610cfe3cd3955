from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).user_by_email(email="e@example.com", consistent=True)  # E: call-arg

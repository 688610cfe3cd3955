from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).orders_in_a_date_range(user_id="u1", created_at="2024-06-01T00:00:00Z")  # E: arg-type

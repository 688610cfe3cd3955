from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).update_order(user_id="u1", created_at="2024-06-01T00:00:00Z", order_id="o1",
                                   set={"status": "SHIPED"})  # E: arg-type

from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    with ShopTable(client).transaction() as tx:
        tx.condition_check_user(usr_id="u1")  # E: call-arg

from constructs_lib.runtime import TableClient
from examples.shop.models_typed import PatternName


def use(client: TableClient) -> None:
    pattern: PatternName = "user profil"  # E: assignment
    client.query(pattern, user_id="u1")

from constructs_lib.runtime import TableClient
from examples.shop.models_typed import ShopTable


def use(client: TableClient) -> None:
    ShopTable(client).put_product({"sku": "SKU-1", "name": "Teapot", "price_cents": "25.00"})  # E: typeddict-item

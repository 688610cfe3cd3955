"""The one item-size rule (runtime.values) against DynamoDB Local's 400 KB item limit: an item
the rule sizes at exactly 400 KB is stored, one byte more is refused — by DynamoDB itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import TableClient, _aws
from constructs_lib.runtime.limits import MAX_ITEM_BYTES
from constructs_lib.runtime.values import item_size

pytestmark = pytest.mark.integration

MODEL = Model("sized", entities=[Entity("Blob", pk="BLOB#{id}", sk="B", fields=["id"])])


@pytest.fixture(scope="module")
def table(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[TableClient]:
    from constructs_lib.testing import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(synth_table_template(MODEL), client=client, name_prefix="sized-")
    (name,) = deployment.tables.values()
    try:
        yield TableClient(MODEL, name, client=client)
    finally:
        deployment.delete()


@pytest.mark.parametrize("extras", [
    {},
    {"n": Decimal("123.456"), "x": Decimal("-0.5"), "z": 0, "ns": {7, 88, 999, -4}, "b": b"ab", "bs": {b"c"}, "名前": "é",
     "t": True},
    {"m": {"k": "v", "é": {"t": None}}, "ss": {"ab", "c"}},
    {"l": ["a", 1, {"k": [True, None]}], "m": {"l": [Decimal("-1.5"), "x"]}},
    # negative numbers of 38 digits spanning 20 base-100 pairs: no byte for the sign
    {"n": Decimal("-9." + "9" * 37), "ns": {Decimal("-1." + "0" * 36 + "1E-120"), Decimal("-99." + "9" * 36)},
     "l": [Decimal("-" + "9" * 38 + "E+1")]},
])
def test_an_item_the_rule_sizes_at_400_kb_is_stored_and_one_byte_more_is_refused(
    table: TableClient, extras: dict[str, Any]
) -> None:
    # GIVEN an item padded so the rule sizes it at exactly 400 KB (and the same item one byte larger)
    base = table.mapper.build_item(MODEL.entity("Blob"), {"id": repr(extras)[:20], **extras, "pad": ""}, check=False)
    pad = MAX_ITEM_BYTES - item_size(base)
    fits, over = {**base, "pad": "x" * pad}, {**base, "pad": "x" * (pad + 1)}
    assert item_size(fits) == MAX_ITEM_BYTES and item_size(over) == MAX_ITEM_BYTES + 1
    # WHEN both are written with the raw client, past the runtime's own check
    _aws.call(table.client, "put_item", TableName=table.table_name, Item=_aws.serialize(fits))
    with pytest.raises(ClientError) as refused:
        table.client.put_item(TableName=table.table_name, Item=_aws.serialize(over))
    # THEN DynamoDB stores the first and refuses the second for its size
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "size" in refused.value.response["Error"]["Message"].lower()


def test_the_runtime_stores_a_400_kb_item_of_long_negative_numbers(table: TableClient) -> None:
    # GIVEN an item holding negative numbers of 38 digits, padded to the most DynamoDB stores (found
    # by DynamoDB itself: the longest padding it accepts, one byte more refused)
    entity = MODEL.entity("Blob")
    numbers = {f"n{i}": Decimal(f"-{i}." + "9" * 37) for i in range(1, 10)}
    base = table.mapper.build_item(entity, {"id": "long-negatives", **numbers, "pad": ""}, check=False)

    def stored(pad: int) -> bool:
        try:
            table.client.put_item(TableName=table.table_name, Item=_aws.serialize({**base, "pad": "x" * pad}))
        except ClientError as exc:
            assert "size" in exc.response["Error"]["Message"].lower()
            return False
        return True

    low, high = MAX_ITEM_BYTES - item_size(base) - 64, MAX_ITEM_BYTES - item_size(base) + 64
    assert stored(low) and not stored(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if stored(mid) else (low, mid)
    # WHEN the runtime puts it (its own size check first)
    table.put("Blob", {"id": "long-negatives", **numbers, "pad": "x" * low})
    # THEN it is stored, and the rule sizes it at exactly 400 KB
    assert table.get("Blob", id="long-negatives")["pad"] == "x" * low
    assert item_size({**base, "pad": "x" * low}) == MAX_ITEM_BYTES

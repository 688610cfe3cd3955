"""Regenerate ``records.json``: real stream records of DynamoDB Local in Lambda's shape.

Run on purpose only: ``PYTHONPATH=$PWD .venv/bin/python tests/unit/runtime/audit_golden/capture_records.py``,
then ``python tests/unit/runtime/test_audit_golden.py --write-expected`` — which records what the
*current* code builds from them, so run it only on code whose output is the reference.

One table (PK, SK, a TTL attribute, NEW_AND_OLD_IMAGES stream) gets INSERTs, MODIFYs, a REMOVE and a
TTL deletion covering every attribute type: S (non-ASCII, an astral character), N (exponent,
negative, trailing zeros, tiny and huge), B, SS, NS, BS, BOOL, NULL, nested M and L.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from constructs_lib.testing.dynamodb_local import DynamoDBLocal
from constructs_lib.testing.streams import to_lambda_record

OUT = Path(__file__).with_name("records.json")
TABLE = "AuditGoldenSource"


def S(v: str) -> dict[str, Any]:
    return {"S": v}


def N(v: str) -> dict[str, Any]:
    return {"N": v}


def main() -> None:
    with DynamoDBLocal() as ddb:
        client, streams = ddb.client(), ddb.streams_client()
        client.create_table(
            TableName=TABLE, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        client.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})
        user = {
            "PK": S("USER#ann|1"), "SK": S("PROFILE"), "_type": S("User"), "email": S("ann@example.com"),
            "name": S("Zoë \U0001F600 \"quoted\" \\ back"), "age": N("42"), "score": N("1.5E+3"),
            "ratio": N("-0.00100"), "tiny": N("1E-130"), "huge": N("9.9999999999999999999999999999999999999E+125"),
            "profile": {"M": {"city": S("Zürich"), "zip": N("8001"),
                              "prefs": {"M": {"mail": {"BOOL": True}, "sms": {"NULL": True}}},
                              "history": {"L": [S("a"), N("1.0"), {"M": {"deep": {"L": [{"B": b"\x00\x01"}]}}}]}}},
            "avatar": {"B": b"\x89PNG\r\n\x1a\n\x00\xff"}, "roles": {"SS": ["admin", "dev", "ops"]},
            "lucky": {"NS": ["7", "1.50", "1E+2", "-3"]}, "keys": {"BS": [b"\x00", b"\xff\xfe", b"abc"]},
            "active": {"BOOL": False}, "nothing": {"NULL": True}, "updated_by": S("signup"),
        }
        client.put_item(TableName=TABLE, Item=user)
        product = {
            "PK": S("PRODUCT#SKU-1"), "SK": S("PRODUCT"), "_type": S("Product"), "name": S("Thing"),
            "price_cents": N("1999"), "tags": {"SS": ["shop", "cat-1"]}, "updated_by": S("catalog"),
            "lines": {"L": [{"M": {"sku": S("SKU-1"), "quantity": N("2")}}]},
        }
        client.put_item(TableName=TABLE, Item=product)
        # MODIFY: a redacted attribute, a nested map, a set and a number change; one attribute removed, one added
        client.update_item(
            TableName=TABLE, Key={"PK": user["PK"], "SK": user["SK"]},
            UpdateExpression="SET email = :e, profile.city = :c, score = :s, updated_by = :u, nickname = :n, "
                             "lucky = :l REMOVE active",
            ExpressionAttributeValues={":e": S("ann@new.example.com"), ":c": S("Genève"), ":s": N("15E+2"),
                                       ":u": S("support"), ":n": S("annie"), ":l": {"NS": ["-3", "7", "100", "1.5"]}},
        )
        # MODIFY that changes only the actor
        client.update_item(TableName=TABLE, Key={"PK": product["PK"], "SK": product["SK"]},
                           UpdateExpression="SET updated_by = :u", ExpressionAttributeValues={":u": S("pricing")})
        client.delete_item(TableName=TABLE, Key={"PK": product["PK"], "SK": product["SK"]})
        session = {"PK": S("SESSION#s1"), "SK": S("SESSION"), "_type": S("Session"), "user": S("ann"),
                   "expires_at": N(str(int(time.time()) - 5)), "updated_by": S("login")}
        client.put_item(TableName=TABLE, Item=session)
        deadline = time.monotonic() + 60
        while client.get_item(TableName=TABLE, Key={"PK": session["PK"], "SK": session["SK"]}).get("Item"):
            if time.monotonic() > deadline:
                raise SystemExit("DynamoDB Local did not expire the session within 60 s")
            time.sleep(0.5)
        arn = client.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
        records: list[dict[str, Any]] = []
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            it = streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while it:
                resp = streams.get_records(ShardIterator=it)
                for raw in resp["Records"]:
                    local = to_lambda_record(raw, stream_arn=arn, normalize_ttl=False)
                    aws = to_lambda_record(raw, stream_arn=arn)
                    records += [local] if aws == local else [local, aws]  # a TTL deletion: DynamoDB Local's and AWS's form
                if not resp["Records"]:
                    break
                it = resp.get("NextShardIterator")
        OUT.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(records)} records to {OUT}: {[r['eventName'] for r in records]}")


if __name__ == "__main__":
    main()

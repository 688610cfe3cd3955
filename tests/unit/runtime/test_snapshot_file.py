"""A traffic snapshot written to a JSON file reads back equal (every aggregate, the model); a file
that is missing, not JSON, of another format or version, or with a bad field raises
``SnapshotFileError`` naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_lib.runtime.exceptions import SnapshotFileError, TrafficInsightError
from constructs_lib.runtime.stats import TrafficRecorder, read_snapshot, snapshot_to_dict, write_snapshot
from examples.shop.model import shop_model


def _recorded() -> TrafficRecorder:
    clock = iter([0.0, 12.5]).__next__
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=clock)
    key = {"PK": "USER#u1", "SK": "ORDER#o1"}
    wire = {k: {"S": v} for k, v in key.items()}
    recorder.observe("put_item", {"TableName": "shop", "Item": {**wire, "GSI1PK": {"S": "ORDER#o1"}}},
                     {"ConsumedCapacity": {"TableName": "shop", "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                                           "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}},
                     entities=[("Order", key)])
    recorder.observe("put_item", {"TableName": "shop", "Item": {"PK": {"S": "RAW"}, "SK": {"S": "RAW"}}}, None)
    recorder.observe("query", {"TableName": "shop", "KeyConditionExpression": "#pk = :pk",
                               "ExpressionAttributeNames": {"#pk": "PK"}, "ExpressionAttributeValues": {":pk": {"S": "USER#u1"}}},
                     {"Count": 3, "ScannedCount": 5}, pattern="user's orders newest first")
    recorder.observe("get_item", {"TableName": "shop", "Key": wire}, None, error_code="ThrottlingException")
    return recorder


def test_a_snapshot_round_trips_through_its_file(tmp_path: Path) -> None:
    # GIVEN a snapshot of reads, writes per entity, an unattributed write, a throttle
    snapshot = _recorded().snapshot()
    assert snapshot.entity_writes == {("Order", "put"): (1, 2.0)} and snapshot.unattributed_writes == {"put": (1, 0.0)}
    # WHEN written and read back
    path = write_snapshot(snapshot, tmp_path / "traffic.json")
    back = read_snapshot(path)
    # THEN every aggregate is equal, and so is the model
    assert back.model is not None and snapshot.model is not None
    assert back.model.to_json() == snapshot.model.to_json()
    assert snapshot_to_dict(back) == snapshot_to_dict(snapshot)
    for name in ("table_name", "sample_rate", "sampled_requests", "duration_seconds", "sketches", "operations",
                 "errors", "index_reads", "index_writes", "patterns", "shapes", "entity_writes", "unattributed_writes"):
        assert getattr(back, name) == getattr(snapshot, name), name
    # AND the file says what it is
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert (raw["format"], raw["version"]) == ("constructs_lib.traffic_snapshot", 1)


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda d: d.update(version=2), "version: 2 is not supported: this library reads version 1"),
    (lambda d: d.update(format="x"), "format: 'x' is not a traffic snapshot's"),
    (lambda d: d.update(sample_rate=1.5), r"sample_rate: 1.5 must be a number in \(0, 1\]"),
    (lambda d: d.pop("duration_seconds"), "has no 'duration_seconds'"),
    (lambda d: d["entity_writes"][0].update(writes=-1), r"entity_writes\[0\].writes: -1 must be a whole number"),
    (lambda d: d["sketches"][0]["top"][0].update(key=7), r"sketches\[0\].top\[0\].key: 7 must be a string"),
    (lambda d: d["shapes"].append("x"), r"shapes\[1\]: must be a JSON object"),
    (lambda d: d.update(model={"name": 3}), "model: is not a valid model"),
])
def test_a_bad_snapshot_file_names_the_file_and_the_field(tmp_path: Path, edit: object, problem: str) -> None:
    # GIVEN a snapshot file with one field broken
    data = snapshot_to_dict(_recorded().snapshot())
    assert callable(edit)
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    # WHEN read / THEN a SnapshotFileError (a TrafficInsightError) names the file and the problem
    with pytest.raises(SnapshotFileError, match=f"traffic snapshot {path}: .*{problem}") as caught:
        read_snapshot(path)
    assert isinstance(caught.value, TrafficInsightError) and caught.value.path == str(path)


def test_a_missing_or_broken_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SnapshotFileError, match="nothing.json: cannot be read: No such file"):
        read_snapshot(tmp_path / "nothing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  oops", encoding="utf-8")
    with pytest.raises(SnapshotFileError, match=r"broken.json: is not JSON \(line 2: "):
        read_snapshot(broken)

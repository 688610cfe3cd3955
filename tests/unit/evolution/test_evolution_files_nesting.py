"""Deeply nested JSON in model evolution's files: a model lock and the project's ``cdk.json``
refuse more than ``MAX_JSON_DEPTH`` nested arrays and objects with a typed error naming the file
and the limit (a ``RecursionError`` before); nested exactly to the limit they read as before."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from constructs_lib.evolution.cli import lock_path
from constructs_lib.evolution.exceptions import EvolutionError
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.model import ModelFormatError
from constructs_lib.model.jsontext import MAX_JSON_DEPTH
from examples.shop.model import shop_model

LIMIT = MAX_JSON_DEPTH
REFUSED = rf"nests arrays and objects more than {LIMIT} levels deep \(line \d+, column \d+\); at most {LIMIT} levels"


def with_extra(document: dict[str, object], total: int) -> str:
    return json.dumps({**document, "extra": "@"}).replace('"@"', "[" * (total - 1) + "]" * (total - 1))


def test_a_model_lock_nested_past_the_limit_is_refused_naming_the_file(tmp_path: Path) -> None:
    # GIVEN the shop's lock with an extra key nesting it exactly to the limit, and one level more
    lock = json.loads(ModelLock({"Shop/Data": TableLock.of(shop_model)}).to_json())
    path = tmp_path / "constructs_lib.lock.json"
    path.write_text(with_extra(lock, LIMIT), encoding="utf-8")
    # WHEN each is loaded THEN the first is the lock
    assert list(ModelLock.load(path).tables) == ["Shop/Data"]
    # AND the second is refused with ModelFormatError naming the file and the limit
    for levels in (LIMIT + 1, 4096):
        path.write_text(with_extra(lock, levels), encoding="utf-8")
        with pytest.raises(ModelFormatError, match=rf"^model lock {re.escape(str(path))} {REFUSED}"):
            ModelLock.load(path)


def test_a_cdk_json_nested_past_the_limit_or_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    # GIVEN an app whose cdk.json names the lock, with an extra key nesting it exactly to the limit
    (tmp_path / "app.py").write_text("", encoding="utf-8")
    cdk_json = tmp_path / "cdk.json"
    context = {"app": "python app.py", "context": {"constructs_lib:lock": "locks/shop.lock.json"}}
    cdk_json.write_text(with_extra(context, LIMIT), encoding="utf-8")
    args = argparse.Namespace(target=str(tmp_path / "app.py"), lock=None)
    # WHEN the lock's path is looked up THEN it is the one cdk.json names
    assert lock_path(args) == tmp_path / "locks" / "shop.lock.json"
    # AND one level more, or text that is not JSON, is an EvolutionError naming cdk.json
    cdk_json.write_text(with_extra(context, LIMIT + 1), encoding="utf-8")
    with pytest.raises(EvolutionError, match=rf"^{re.escape(str(cdk_json))} {REFUSED}"):
        lock_path(args)
    cdk_json.write_text('{"context": ', encoding="utf-8")
    with pytest.raises(EvolutionError, match=rf"^{re.escape(str(cdk_json))} is not valid JSON \(Expecting value: line 1"):
        lock_path(args)

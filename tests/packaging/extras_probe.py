"""Run by tests/packaging/test_dist.py with the interpreter of a virtualenv holding the wheel and one
extra (``python extras_probe.py <extra>``): prints, as JSON, what that environment can import and
what asking for the missing parts says."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path


def importable(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def main() -> None:
    import constructs_lib
    import constructs_lib.model
    import constructs_lib.runtime
    import constructs_lib.testing

    facts: dict[str, object] = {
        "extra": sys.argv[1],
        "version": constructs_lib.__version__,
        "package": str(Path(constructs_lib.__file__).resolve().parent),
        "py_typed": (Path(constructs_lib.__file__).parent / "py.typed").is_file(),
        "prices": sorted(p.name for p in (Path(constructs_lib.__file__).parent / "capacity" / "prices").glob("*.json")),
        "modules": {name: importable(name) for name in ("boto3", "aws_cdk", "constructs", "jsii", "pytest")},
    }
    try:
        from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction

        facts["constructs"] = [c.__name__ for c in (SingleTable, TableFunction, ShardedCounter, StreamAudit)]
    except ImportError as exc:
        facts["constructs"] = f"{type(exc).__name__}: {exc}"
    try:
        from constructs_lib.testing import DynamoDBLocal, StreamRunner

        importlib.import_module("constructs_lib.testing.plugin")
        facts["testing"] = [DynamoDBLocal.__name__, StreamRunner.__name__, "plugin"]
    except ImportError as exc:
        facts["testing"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(facts))


if __name__ == "__main__":
    main()

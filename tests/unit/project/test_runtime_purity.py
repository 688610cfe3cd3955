"""The runtime and model packages are bundled into Lambdas: they must not import the AWS CDK,
and the runtime must not import boto3 until a client is actually needed.

Each check runs in a fresh interpreter so modules imported by other tests do not interfere.
An import hook records every attempt to import a watched package (even one hidden inside a
``try``), and refuses the CDK packages so an accidental import cannot succeed silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

PRELUDE = textwrap.dedent(
    """
    import importlib.abc, json, sys

    CDK = ("aws_cdk", "constructs", "jsii")
    AWS = ("boto3", "botocore")
    attempts = []

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.split(".")[0]
            if top in CDK + AWS:
                attempts.append(name)
            if top in CDK:  # as if the cdk extra were not installed
                raise ModuleNotFoundError(f"No module named {name!r} (blocked in test)", name=name)
            return None

    sys.meta_path.insert(0, Watch())

    def loaded(tops):
        return sorted(m for m in sys.modules if m.split(".")[0] in tops)

    def report(**extra):
        print(json.dumps({"attempts": attempts, "cdk": loaded(CDK), "aws": loaded(AWS),
                          "ours": loaded(("constructs_lib",)), **extra}))
    """
)


def run(body: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "AWS_EC2_METADATA_DISABLED": "true"}
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def after_runtime_and_model_import() -> dict:
    return run(
        """
        import constructs_lib.runtime, constructs_lib.model
        from constructs_lib.runtime import TableClient, items, key_segments, keys  # noqa: F401
        report()
        """
    )


def test_runtime_and_model_never_import_cdk(after_runtime_and_model_import: dict) -> None:
    # GIVEN a fresh interpreter
    # WHEN constructs_lib.runtime and constructs_lib.model are imported
    result = after_runtime_and_model_import
    # THEN they really were loaded, and no CDK package was imported or even attempted
    assert "constructs_lib.runtime.client" in result["ours"]
    assert "constructs_lib.model.model" in result["ours"]
    assert result["cdk"] == []
    assert [a for a in result["attempts"] if a.split(".")[0] in ("aws_cdk", "constructs", "jsii")] == []


def test_runtime_import_does_not_import_boto3(after_runtime_and_model_import: dict) -> None:
    # GIVEN a fresh interpreter / WHEN the runtime is imported
    result = after_runtime_and_model_import
    # THEN boto3/botocore are neither loaded nor attempted (cold start stays cheap)
    assert result["aws"] == []
    assert result["attempts"] == []


def test_boto3_is_imported_on_first_client_use() -> None:
    # GIVEN a fresh interpreter with the runtime imported and boto3 not yet loaded
    # WHEN a TableClient builds its default boto3 client
    result = run(
        """
        import sys
        from constructs_lib.runtime import TableClient
        from constructs_lib.model import Entity, Model
        before = sorted(m for m in sys.modules if m.split(".")[0] == "boto3")
        model = Model("m", entities=[Entity("User", pk="USER#{id}", fields=["id"])])
        TableClient(model, "t", region_name="us-east-1")
        report(before=before)
        """
    )
    # THEN boto3 is loaded only then, and still no CDK package
    assert result["before"] == []
    assert "boto3" in result["aws"]
    assert result["cdk"] == []


def test_package_root_import_is_lazy() -> None:
    # GIVEN a fresh interpreter
    # WHEN the package root is imported and its plain attributes are used
    result = run(
        """
        import constructs_lib, constructs_lib.runtime, constructs_lib.model
        version = constructs_lib.__version__
        try:
            constructs_lib.SingleTable
        except ImportError as exc:
            lazy = str(exc)
        else:
            lazy = "imported"
        report(version=version, lazy=lazy)
        """
    )
    # THEN nothing from the CDK was imported until a construct was asked for ...
    assert result["version"]
    assert result["cdk"] == []
    # ... and asking for SingleTable is what triggers the (here blocked) CDK import
    assert result["lazy"].startswith("constructs_lib.SingleTable needs the AWS CDK")
    assert any(a.split(".")[0] in ("aws_cdk", "constructs") for a in result["attempts"])


def test_a_construct_without_the_cdk_extra_says_which_extra_to_install() -> None:
    # GIVEN a fresh interpreter in which the CDK packages are missing (the import hook refuses them)
    # WHEN a construct is imported from the package root
    result = run(
        """
        from constructs_lib.constructs.exceptions import MissingExtraError
        try:
            from constructs_lib import SingleTable  # noqa: F401
        except ImportError as exc:
            caught = {"type": type(exc).__name__, "is_extra": isinstance(exc, MissingExtraError), "message": str(exc),
                      "name": exc.name, "cause": type(exc.__cause__).__name__}
        report(caught=caught)
        """
    )
    # THEN it raises an ImportError subclass naming the missing module and the one command that fixes it
    caught = result["caught"]
    assert caught["is_extra"] and caught["type"] == "MissingExtraError" and caught["cause"] == "ModuleNotFoundError"
    assert caught["name"] in ("aws_cdk", "constructs")
    assert f"No module named {caught['name']!r}" in caught["message"]
    assert 'pip install "constructs_lib[cdk]"' in caught["message"]


def test_an_unrelated_missing_module_is_not_blamed_on_the_cdk_extra() -> None:
    # GIVEN a lazy construct name whose module fails to import for a reason other than the CDK
    # WHEN it is asked for
    result = run(
        """
        import constructs_lib
        constructs_lib._LAZY["Broken"] = "constructs_lib_no_such_module"
        try:
            constructs_lib.Broken
        except ImportError as exc:
            caught = {"type": type(exc).__name__, "message": str(exc)}
        report(caught=caught)
        """
    )
    # THEN the original ModuleNotFoundError comes through unchanged
    assert result["caught"] == {"type": "ModuleNotFoundError", "message": "No module named 'constructs_lib_no_such_module'"}


def test_a_generated_typed_module_loads_like_the_runtime() -> None:
    # GIVEN a fresh interpreter WHEN the shop's generated typed module is imported
    result = run(
        """
        import examples.shop.models_typed as typed
        report(table=typed.ShopTable.__name__)
        """
    )
    # THEN it loaded no CDK and no boto3 (it can ship in a Lambda asset beside the handler), and of
    # the package only the runtime and the model it reads
    assert result["table"] == "ShopTable"
    assert result["cdk"] == [] and result["aws"] == [] and result["attempts"] == []
    assert {m.split(".")[1] for m in result["ours"] if "." in m} <= {"runtime", "model"}
    assert "constructs_lib.runtime.contract" in result["ours"]


def test_asset_building_never_imports_the_cdk() -> None:
    # GIVEN a fresh interpreter in which the CDK packages cannot be imported
    # WHEN every module of constructs_lib.assets is imported and a function's asset is staged with it
    result = run(
        """
        import pkgutil, importlib
        import constructs_lib.assets as assets
        for info in pkgutil.iter_modules(assets.__path__):
            importlib.import_module("constructs_lib.assets." + info.name)
        from constructs_lib.assets.bundling import bundle
        from constructs_lib.model import Entity, Model
        model = Model("m", entities=[Entity("User", pk="USER#{id}", fields=["id"])])
        staged = bundle(model, what="test")  # no handler: every runtime module, no bytecode
        report(files=len(staged.runtime_files), model_json=(staged.directory / "model.json").is_file())
        """
    )
    # THEN the asset was staged (the runtime modules and model.json) and no CDK module was even
    # attempted: the asset layer sits below the constructs
    assert result["model_json"] and result["files"] > 5
    assert "constructs_lib.assets.requirements" in result["ours"] and "constructs_lib.assets.pyc_worker" in result["ours"]
    assert result["cdk"] == []
    assert [a for a in result["attempts"] if a.split(".")[0] in ("aws_cdk", "constructs", "jsii")] == []

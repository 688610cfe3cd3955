"""TableFunction: the orders API Lambda of app.py, its bundled asset and its props checks.

The showcase app is synthesized once per session (``shop`` fixture in conftest.py); its
template and the asset directory in the cloud assembly are read from disk.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

import constructs_lib
from constructs_lib import ConstructPropsError, SingleTable, TableFunction
from constructs_lib.assets import bundling, bytecode
from constructs_lib.assets.slim import blank_type_checking, slim_source
from constructs_lib.model import Model

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(constructs_lib.__file__).resolve().parent
HANDLER = REPO / "examples" / "shop" / "handlers" / "orders_api.py"
#: DESIGN.md: a generated Lambda's asset stays small (cold start is a feature).
ASSET_BUDGET_ZIPPED = 100 * 1024
#: What the hooks answering for 0.1.0's names add to the runtime part a table client ships
#: (``_exports.py``, ``items.py``, ``cursors.py``: 159 bytes zipped; their table ships only with
#: code using an old name), allowed beside the handler until 1.0.0 removes them (docs/adr/0075).
DEPRECATION_HOOKS_ZIPPED = 160
FORBIDDEN_IN_ASSET = ("aws_cdk", "jsii", "constructs import")


def asset_files(asset: Path) -> set[str]:
    return {p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file()}


def zipped_size(asset: Path, files: set[str] | None = None) -> int:
    """*asset* (or only *files* of it) zipped in memory with deflate, as CDK would upload it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(asset.rglob("*")):
            rel = path.relative_to(asset).as_posix()
            if path.is_file() and (files is None or rel in files):
                archive.write(path, rel)
    return len(buffer.getvalue())


def single(resources: dict[str, Any], prefix: str = "DataTable") -> tuple[str, dict[str, Any]]:
    """The one resource whose logical id starts with ``prefix`` (the shop's SingleTable by default)."""
    matching = {lid: r for lid, r in resources.items() if lid.startswith(prefix)}
    assert len(matching) == 1, list(resources)
    return next(iter(matching.items()))


# The function resource --------------------------------------------------------------------------
def test_function_runs_python3_and_the_handler_module(shop) -> None:
    # GIVEN app.py's orders API (entry orders_api.py, handler="handler")
    # WHEN it is synthesized
    props = shop.function["Properties"]
    # THEN it is a Python 3 function whose handler is <module>.<function>
    assert re.fullmatch(r"python3\.\d+", props["Runtime"]), props["Runtime"]
    assert props["Handler"] == "orders_api.handler"


def test_table_name_env_is_a_ref_to_the_table(shop) -> None:
    # GIVEN the function wired to the shop table
    # WHEN it is synthesized
    table_id, _ = single(shop.resources_of_type("AWS::DynamoDB::GlobalTable"))
    # THEN TABLE_NAME is a Ref to that table (not a hard-coded name)
    variables = shop.function["Properties"]["Environment"]["Variables"]
    assert variables["TABLE_NAME"] == {"Ref": table_id}
    # AND the bound counter family adds its spec and table (see test_sharded_counter.py), and the
    # declared access scope its client enforces (see test_scope_grants.py)
    assert set(variables) == {"TABLE_NAME", "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS",
                              "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS_TABLE", "CONSTRUCTS_LIB_ACCESS_SCOPE"}


def test_role_policy_is_the_declared_scope(shop, shop_model: Model) -> None:
    # GIVEN the function with a declared scope (patterns and writes; see examples/shop/stack.py)
    # WHEN it is synthesized
    table_id, _ = single(shop.resources_of_type("AWS::DynamoDB::GlobalTable"))
    role_id = shop.function["Properties"]["Role"]["Fn::GetAtt"][0]
    policies = [
        p for p in shop.resources_of_type("AWS::IAM::Policy").values() if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    statements = [s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]]
    # THEN one statement writes to the function's own log group, nothing else
    logs = [s for s in statements if any(a.startswith("logs:") for a in s["Action"])]
    log_group_id = shop.function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    assert logs == [{"Action": ["logs:CreateLogStream", "logs:PutLogEvents"], "Effect": "Allow",
                     "Resource": {"Fn::GetAtt": [log_group_id, "Arn"]}}]
    # AND every other statement carries a LeadingKeys condition (no table-wide grant)
    assert [s for s in statements if s not in logs and "Condition" not in s] == []
    # AND the scope's statements are exactly: Query on the table (USER#, ORDER#) and on GSI1 (ORDER#),
    # UpdateItem on USER#, PutItem only inside TransactWriteItems, Query on GSI3 — no Scan, no GSI2, no DescribeTable
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    gsi1 = {"Fn::Join": ["", [table_arn, "/index/GSI1"]]}
    gsi3 = {"Fn::Join": ["", [table_arn, "/index/GSI3"]]}
    scoped = {
        (tuple(s["Action"]) if isinstance(s["Action"], list) else (s["Action"],), repr(s["Resource"]),
         tuple(s["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]),
         s["Condition"].get("StringEquals", {}).get("dynamodb:EnclosingOperation"))
        for s in statements if s not in logs and not any("COUNTER#" in k for k in
                                                         s["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"])
    }
    assert scoped == {
        (("dynamodb:Query",), repr(table_arn), ("ORDER#*", "USER#*"), None),
        (("dynamodb:UpdateItem",), repr(table_arn), ("USER#*",), None),
        (("dynamodb:PutItem",), repr(table_arn), ("ORDER#*", "USER#*"), "TransactWriteItems"),
        (("dynamodb:Query",), repr(gsi1), ("ORDER#*",), None),
        (("dynamodb:Query",), repr(gsi3), ("STATUS#*#*",), None),  # every shard of the write-sharded GSI3
    }


def test_role_has_no_managed_policies(shop) -> None:
    # GIVEN the function's role
    role_id = shop.function["Properties"]["Role"]["Fn::GetAtt"][0]
    # WHEN it is synthesized
    role = shop.resources_of_type("AWS::IAM::Role")[role_id]
    # THEN it carries no managed policy (AWSLambdaBasicExecutionRole would grant logs:* on "*")
    assert "ManagedPolicyArns" not in role["Properties"]
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "lambda.amazonaws.com"}


def test_function_waits_for_its_policy_but_has_no_redundant_role_dependency(shop) -> None:
    # GIVEN the function's role (referenced by Fn::GetAtt) and the role's policy
    # WHEN it is synthesized
    role_id = shop.function["Properties"]["Role"]["Fn::GetAtt"][0]
    policy_ids = [
        lid for lid, p in shop.resources_of_type("AWS::IAM::Policy").items() if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    # THEN the function DependsOn the policy (no invocation before its permissions exist)
    # AND not on the role, which the GetAtt already orders (cfn-lint W3005)
    assert shop.function["DependsOn"] == policy_ids


# The asset ----------------------------------------------------------------------------------------
def test_asset_directory_is_the_one_the_function_code_names(shop) -> None:
    # GIVEN the function's Code (S3Key "<hash>.zip") and the cloud assembly's asset manifest
    digest = shop.function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
    manifest = json.loads((shop.outdir / "ShopStack.assets.json").read_text(encoding="utf-8"))
    entry = manifest["files"][digest]
    # WHEN locating the asset
    # THEN the manifest packages the directory we inspect as a zip
    assert entry["source"] == {"path": shop.asset_dir.name, "packaging": "zip"}
    assert shop.asset_dir.is_dir()
    # AND the function's asset metadata (enabled in conftest.py, as the CDK CLI does) agrees
    assert shop.asset_metadata_path == shop.asset_dir.name, (
        "Metadata['aws:asset:path'] missing or different: was jsii started before tests/synth/conftest.py "
        "could enable aws:cdk:enable-asset-metadata?"
    )


def test_asset_contains_exactly_runtime_model_json_and_handler(shop) -> None:
    # GIVEN the synthesized asset directory
    # WHEN listing its files
    files = asset_files(shop.asset_dir)
    sources = {f for f in files if not f.endswith(".pyc")}
    # THEN it holds the package stub, model.json, the handler and exactly the model and runtime modules
    # the handler can import, at cold start or in a later call (imports inside functions included)
    package = {f"constructs_lib/{p.relative_to(PACKAGE).as_posix()}": p.read_bytes()
               for sub in ("model", "runtime") for p in (PACKAGE / sub).rglob("*.py") if "__pycache__" not in p.parts}
    closure = bytecode.import_closure({**package, "constructs_lib/__init__.py": b"", "orders_api.py": HANDLER.read_bytes()},
                                      ["orders_api"])
    # but the synth-time model modules (a contract file's reader, a consumer view's builder), on a
    # table it owns the published contract's cold-start check, without traffic_insight=True the
    # traffic recorder behind the stats package's front, and, bound to a family aggregated from the
    # stream, the counters' recompute layout, and on a model without a tenant field the tenant client
    # (bundling.SYNTH_ONLY, CONTRACT_CHECK_ONLY, TRAFFIC_INSIGHT_ONLY, RECOMPUTE_ONLY, TENANT_ONLY)
    stats = {f for f in closure if f.startswith("constructs_lib/runtime/stats/")}
    left_out = {f"constructs_lib/{rel}" for rel in (*bundling.SYNTH_ONLY, *bundling.CONTRACT_CHECK_ONLY,
                                                    *bundling.RECOMPUTE_ONLY, *bundling.TENANT_ONLY)} | (
        stats - {f"constructs_lib/{bundling.TRAFFIC_INSIGHT_FRONT}"})
    assert left_out <= closure and "constructs_lib/runtime/stats/recorder.py" in left_out
    assert sources == ({"constructs_lib/__init__.py", "model.json", "orders_api.py"} | closure) - left_out
    # (the client, the counter client the handler uses; not the stream handlers, the audit writer or
    # the backfill job, which nothing it imports reaches)
    assert {"constructs_lib/runtime/client.py", "constructs_lib/runtime/stats/__init__.py",
            "constructs_lib/runtime/patterns/counter/client.py", "constructs_lib/model/model.py"} <= sources
    assert not [f for f in sources if "backfill" in f or "handlers/" in f or "patterns/audit" in f]
    # AND nothing of the documentation writers, model evolution, the typed-module generator or the
    # constructs came along
    assert not [f for f in files if f.startswith(("constructs_lib/docgen/", "constructs_lib/evolution/",
                                                  "constructs_lib/codegen/", "constructs_lib/constructs/"))]
    # AND the compiled files are exactly the Python 3.13 bytecode of the modules importing the
    # handler loads and of the model package its first call loads (when a 3.13 interpreter exists
    # here), next to their sources
    compiler = bytecode.compiler_for("3.13")
    compiled = {f for f in files if f.endswith(".pyc")}
    if compiler is None:
        assert compiled == set()
    else:
        # (analysed as the bundler does, before the shipped copies' TYPE_CHECKING blocks were blanked)
        def original(f: str) -> Path:
            return PACKAGE.parent / f if f.startswith("constructs_lib/") and f != "constructs_lib/__init__.py" \
                else shop.asset_dir / f

        path = bytecode.import_path({f: original(f).read_bytes() for f in sources if f.endswith(".py")},
                                    ["orders_api", "constructs_lib.model"])
        assert {"orders_api.py", "constructs_lib/runtime/client.py", "constructs_lib/runtime/__init__.py",
                "constructs_lib/model/model.py"} <= path
        assert "constructs_lib/runtime/handlers/audit.py" not in path
        assert compiled == {bytecode.pyc_path(f, "cpython-313") for f in path}


def test_asset_modules_are_the_source_modules(shop) -> None:
    # GIVEN the bundled runtime/model modules and handler
    bundled = [p for p in (shop.asset_dir / "constructs_lib").rglob("*.py") if p.parent.name != "constructs_lib"]
    assert not [p for p in bundled if "__pycache__" in p.parts]
    assert len(bundled) > 20
    for shipped in bundled:
        source = PACKAGE / shipped.relative_to(shop.asset_dir / "constructs_lib")
        # WHEN comparing each to the source it was made from
        # THEN it is the source slimmed (docstrings, comments and type-checking-only imports
        # blanked), with the same line count
        assert shipped.read_text(encoding="utf-8") == blank_type_checking(slim_source(source.read_text(encoding="utf-8")))
        assert len(shipped.read_text(encoding="utf-8").splitlines()) == len(source.read_text(encoding="utf-8").splitlines())
    # AND the user's handler is shipped exactly as written
    assert (shop.asset_dir / "orders_api.py").read_bytes() == HANDLER.read_bytes()


def test_asset_never_mentions_the_cdk(shop) -> None:
    # GIVEN every text file of the asset
    # WHEN searching it for the CDK and jsii
    offenders = {
        f"{path.relative_to(shop.asset_dir)}: {word}"
        for path in shop.asset_dir.rglob("*")
        if path.is_file() and path.suffix != ".pyc"
        for word in FORBIDDEN_IN_ASSET
        if word in path.read_text(encoding="utf-8")
    }
    # THEN nothing in the Lambda can import them
    assert not offenders


def test_bundled_model_json_is_the_shop_model(shop, shop_model: Model) -> None:
    # GIVEN model.json at the asset root
    # WHEN it is loaded
    bundled = Model.from_json((shop.asset_dir / "model.json").read_text(encoding="utf-8"))
    # THEN it is the model the table was built from
    assert bundled == shop_model
    assert bundled.to_json() == shop_model.to_json()


def test_asset_zipped_size_within_budget(shop) -> None:
    # GIVEN the asset directory, split into the runtime part's sources (constructs_lib/ + model.json),
    # the bytecode compiled for the handler's import path, and the user's handler code
    files = asset_files(shop.asset_dir)
    compiled = {f for f in files if f.endswith(".pyc")}
    runtime = {f for f in files if f.startswith("constructs_lib/") or f == "model.json"} - compiled
    user = files - runtime - compiled
    # WHEN each is zipped (deflate, in memory) as CDK would upload it
    runtime_size, user_size = zipped_size(shop.asset_dir, runtime), zipped_size(shop.asset_dir, user)
    bytecode_size = zipped_size(shop.asset_dir, compiled) if compiled else 0
    size = zipped_size(shop.asset_dir)
    print(f"\norders API asset: {len(files)} files, {size} bytes zipped ({size / 1024:.1f} KiB): runtime part "
          f"{runtime_size / 1024:.1f} KiB, handler {user_size / 1024:.1f} KiB, bytecode {bytecode_size / 1024:.1f} KiB "
          f"({len(compiled)} pycs)")
    # THEN the runtime part's sources stay within DESIGN.md's budget of 100 KB zipped (user code and
    # dependencies are the user's to size: tests/synth/test_table_function_package.py)
    assert 0 < runtime_size <= ASSET_BUDGET_ZIPPED
    # AND this single-module handler adds little to it
    assert 0 < user_size < 4 * 1024 and runtime_size + user_size <= ASSET_BUDGET_ZIPPED + DEPRECATION_HOOKS_ZIPPED
    # AND the bytecode (the handler's import path and the model package its first call loads: about
    # 12 ms less on that call for ~38 KiB, docs/adr/0018) adds at most 1.65 budgets more (1.5 until
    # the model's overlap analysis, cursor binding and request tokens joined that path: 155 KiB; 1.6
    # until the per-entity write plans, fast value paths and value classes without generated code
    # halved the import and cut the client's per-call CPU, docs/adr/0057 and 0058: 160 KiB, the
    # library's docstrings already left out of its bytecode)
    assert bytecode_size <= 1.65 * ASSET_BUDGET_ZIPPED and size <= 2.65 * ASSET_BUDGET_ZIPPED


# Props errors -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch_table(scratch_stack: cdk.Stack, shop_model: Model) -> SingleTable:
    return SingleTable(scratch_stack, "FunctionErrorsTable", model=shop_model)


def test_missing_handler_file_is_rejected(scratch_stack: cdk.Stack, scratch_table: SingleTable, tmp_path: Path) -> None:
    # GIVEN an entry path that does not exist
    missing = tmp_path / "no_such_handler.py"
    # WHEN the function is built
    # THEN construction fails naming the file
    with pytest.raises(ConstructPropsError, match="no_such_handler.py"):
        TableFunction(scratch_stack, "MissingHandler", table=scratch_table, entry=missing)


def test_table_name_in_environment_is_rejected(scratch_stack: cdk.Stack, scratch_table: SingleTable) -> None:
    # GIVEN an environment that tries to set the reserved TABLE_NAME
    # WHEN the function is built
    # THEN construction fails naming the reserved key
    with pytest.raises(ConstructPropsError, match="TABLE_NAME"):
        TableFunction(
            scratch_stack, "ReservedEnv", table=scratch_table, entry=HANDLER, environment={"TABLE_NAME": "other"}
        )


@pytest.mark.parametrize("access", ["admin", "READ", ""])
def test_bad_access_value_is_rejected(scratch_stack: cdk.Stack, scratch_table: SingleTable, access: str) -> None:
    # GIVEN an access level that is not read / write / read_write
    # WHEN the function is built
    # THEN construction fails naming the value and the allowed ones
    with pytest.raises(ConstructPropsError, match=rf"access {access!r} must be 'read', 'write', 'read_write' or None"):
        TableFunction(scratch_stack, f"BadAccess{access}", table=scratch_table, entry=HANDLER, access=access)  # type: ignore[arg-type]


@pytest.mark.parametrize(("counters", "message"), [
    ("video_views", r"counters='video_views' must be a list of constructs with bind\(function\)"),
    (["video_views"], r"counters entry 'video_views' has no bind\(function\) method"),
])
def test_counters_must_be_things_a_function_can_be_bound_to(
    scratch_stack: cdk.Stack, scratch_table: SingleTable, counters: object, message: str
) -> None:
    # GIVEN a counter family named by a string instead of the ShardedCounter construct
    # WHEN the function is built THEN construction fails naming the entry and what it lacks
    with pytest.raises(ConstructPropsError, match=message):
        TableFunction(scratch_stack, f"BadCounters{len(str(counters))}", table=scratch_table, entry=HANDLER,
                      counters=counters)  # type: ignore[arg-type]


@pytest.mark.parametrize("traffic_insight", ["yes", 1, None])
def test_traffic_insight_must_be_a_bool(scratch_stack: cdk.Stack, scratch_table: SingleTable,
                                        traffic_insight: object) -> None:
    # GIVEN traffic_insight given as something other than True or False
    # WHEN the function is built THEN construction fails naming the value
    with pytest.raises(ConstructPropsError, match=rf"traffic_insight {traffic_insight!r} must be True or False"):
        TableFunction(scratch_stack, f"BadTraffic{traffic_insight}", table=scratch_table, entry=HANDLER,
                      traffic_insight=traffic_insight)  # type: ignore[arg-type]


def test_runtime_option_sets_the_runtime_and_the_bytecode_version(scratch_stack: cdk.Stack, scratch_table: SingleTable) -> None:
    from aws_cdk import aws_lambda as lambda_

    # GIVEN a function on Python 3.12
    fn = TableFunction(scratch_stack, "Py312", table=scratch_table, entry=HANDLER, runtime=lambda_.Runtime.PYTHON_3_12)
    # WHEN it is synthesized
    props = cdk.assertions.Template.from_stack(scratch_stack).find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": "orders_api.handler", "Runtime": "python3.12"}})
    # THEN the function runs python3.12, and any bytecode in its asset is 3.12's
    assert len(props) == 1
    compiled = [f for f in fn.bundle.runtime_files + fn.bundle.user_files if f.endswith(".pyc")]
    assert all(f.endswith(".cpython-312.pyc") for f in compiled)
    if bytecode.compiler_for("3.12") is not None:
        assert "__pycache__/orders_api.cpython-312.pyc" in compiled


@pytest.mark.parametrize("runtime", ["PYTHON_3_10", "NODEJS_20_X"])
def test_a_runtime_other_than_python_3_11_or_later_is_refused(scratch_stack: cdk.Stack, scratch_table: SingleTable,
                                                               runtime: str) -> None:
    from aws_cdk import aws_lambda as lambda_

    # GIVEN a runtime the bundled package cannot run on WHEN the function is built THEN construction fails naming it
    with pytest.raises(ConstructPropsError, match=r"runtime '(python3\.10|nodejs20\.x)' must be a Python runtime of 3\.11"):
        TableFunction(scratch_stack, f"Bad{runtime}", table=scratch_table, entry=HANDLER,
                      runtime=getattr(lambda_.Runtime, runtime))

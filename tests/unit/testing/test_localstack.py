"""constructs_lib.testing.localstack without LocalStack: the patches, the prerequisites, the
Lambda worker's protocol, the settings and the command line (``make deploy-check`` runs the rest)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from constructs_lib.testing.exceptions import LocalStackError, LocalStackSetupError
from constructs_lib.testing.localstack import __main__ as cli
from constructs_lib.testing.localstack.install import Installation, find_java_home, find_localstack_python
from constructs_lib.testing.localstack.patches import GSI_UPDATES, PATCHES, Patch, apply
from constructs_lib.testing.localstack.server import client_environment, server_environment

install_module = importlib.import_module("constructs_lib.testing.localstack.install")
WORKER = Path(install_module.__file__).with_name("plugin") / "constructs_lib_lambda_worker.py"


def _package(tmp_path: Path) -> Path:
    """A ``localstack`` package holding the unpatched code of every patched file."""
    root = tmp_path / "localstack"
    for patch in PATCHES:
        path = root / patch.path
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.read_text() if path.exists() else "import os\n\n"
        path.write_text(before + patch.old + "\n# unrelated code\n")
    return root


def test_patches_apply_once_keep_the_original_and_follow_a_changed_patch(tmp_path):
    # GIVEN the unpatched files
    root = _package(tmp_path)
    # WHEN the patches are applied twice
    first = apply(root)
    second = apply(root)
    # THEN each file is written once, holds every new piece and none of the old, its original kept
    assert sorted(first) == sorted({p.path for p in PATCHES}) and second == []
    for patch in PATCHES:
        text = (root / patch.path).read_text()
        assert patch.new in text and patch.old not in text and "# unrelated code" in text
        assert (root / (patch.path + ".orig")).read_text().count(patch.old) == 1
    # WHEN one patch changes: THEN it is applied to the original, not on top of the old patch
    changed = Patch(PATCHES[0].name, PATCHES[0].path, PATCHES[0].old, "# the new patch\n", PATCHES[0].why)
    assert apply(root, (changed, *PATCHES[1:])) == [PATCHES[0].path]
    text = (root / PATCHES[0].path).read_text()
    assert "# the new patch" in text and PATCHES[0].new not in text and PATCHES[1].new in text


def test_a_patch_that_does_not_fit_is_refused_naming_it(tmp_path):
    # GIVEN a file where the code a patch replaces is not found (another LocalStack release)
    root = _package(tmp_path)
    path = root / PATCHES[0].path
    path.write_text(path.read_text().replace(PATCHES[0].old, "something else\n"))
    # WHEN / THEN
    with pytest.raises(LocalStackSetupError, match=f"{PATCHES[0].name}.*found 0 times, not once"):
        apply(root)


class _Status:
    SUCCESS, FAILED = "SUCCESS", "FAILED"


class _Event:
    def __init__(self, status: str, resource_model: dict, message: str = "") -> None:
        self.status, self.resource_model, self.message = status, resource_model, message


class _DynamoDB:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def update_table(self, **params: object) -> None:
        self.calls.append(("update_table", params))

    def update_time_to_live(self, **params: object) -> None:
        self.calls.append(("update_time_to_live", params))


def _patched_update() -> object:
    """The GlobalTable provider's ``update`` as the patch writes it, on stand-ins of LocalStack's types."""
    source = 'class Provider:\n    def update(self, request):\n        """\n' + GSI_UPDATES.new
    namespace = {"ProgressEvent": _Event, "OperationStatus": _Status}
    exec(compile(source, GSI_UPDATES.path, "exec"), namespace)  # noqa: S102 - the patch's own code
    return namespace["Provider"]()


def _request(previous: dict, desired: dict) -> SimpleNamespace:
    return SimpleNamespace(previous_state=previous, desired_state=desired,
                           aws_client_factory=SimpleNamespace(dynamodb=_DynamoDB()))


def _table(*gsis: str, **extra: object) -> dict:
    return {"TableName": "t", "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}],
            "GlobalSecondaryIndexes": [{"IndexName": g, "KeySchema": [{"AttributeName": f"{g}PK", "KeyType": "HASH"}],
                                        "Projection": {"ProjectionType": "ALL"}} for g in gsis],
            "Replicas": [{"Region": "us-east-1", "GlobalSecondaryIndexes": [{"IndexName": g} for g in gsis]}], **extra}


def test_the_patched_global_table_update_creates_one_gsi_per_update():
    # GIVEN a table with GSI1, updated to GSI1 + GSI2 (each replica's GSI list following)
    provider = _patched_update()
    request = _request(_table("GSI1"), _table("GSI1", "GSI2"))
    # WHEN the patched provider updates it
    event = provider.update(request)
    # THEN one UpdateTable creates GSI2, and the update succeeds
    calls = request.aws_client_factory.dynamodb.calls
    assert event.status == "SUCCESS" and [c[0] for c in calls] == ["update_table"]
    assert calls[0][1]["GlobalSecondaryIndexUpdates"] == [{"Create": _table("GSI2")["GlobalSecondaryIndexes"][0]}]


def test_the_patched_global_table_update_refuses_what_it_does_not_do():
    provider = _patched_update()
    # GIVEN two GSIs created at once: refused as DynamoDB refuses it
    two = _request(_table("GSI1"), _table("GSI1", "GSI2", "GSI3"))
    assert "more than one GSI creation" in provider.update(two).message
    # GIVEN another property changed (a replica Region added): refused naming it, not dropped
    moved = _table("GSI1")
    moved["Replicas"].append({"Region": "eu-west-1"})
    event = provider.update(_request(_table("GSI1"), moved))
    assert event.status == "FAILED" and "['Replicas']" in event.message
    # GIVEN a TTL setting added: applied
    ttl = _request(_table("GSI1"), _table("GSI1", TimeToLiveSpecification={"AttributeName": "ttl", "Enabled": True}))
    assert provider.update(ttl).status == "SUCCESS"
    assert ttl.aws_client_factory.dynamodb.calls[0][0] == "update_time_to_live"
    # THEN nothing was sent for the refused updates
    assert two.aws_client_factory.dynamodb.calls == []


def test_missing_python_is_named_with_how_to_get_it(monkeypatch):
    # GIVEN no Python 3.12 or 3.13 anywhere
    monkeypatch.delenv(install_module.ENV_PYTHON, raising=False)
    monkeypatch.setattr(install_module, "candidates", lambda version: [])
    # WHEN / THEN the error names the version needed and the ways to get one
    with pytest.raises(LocalStackSetupError, match=r"needs Python >= 3\.12.*pyenv install 3\.13"):
        find_localstack_python()


def test_an_explicit_python_older_than_3_12_is_refused(monkeypatch):
    # GIVEN CONSTRUCTS_LIB_LOCALSTACK_PYTHON naming this (3.11) interpreter
    if sys.version_info >= (3, 12):
        pytest.skip("needs an interpreter older than 3.12")
    monkeypatch.setenv(install_module.ENV_PYTHON, sys.executable)
    # WHEN / THEN
    with pytest.raises(LocalStackSetupError, match=r"is Python 3\.11; LocalStack .* needs Python >= 3\.12"):
        find_localstack_python()


def test_missing_java_is_named_with_how_to_get_it(monkeypatch, tmp_path):
    # GIVEN no JAVA_HOME and no java on PATH
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    # WHEN / THEN
    with pytest.raises(LocalStackSetupError, match=r"needs Java 17 or later.*apt-get install -y openjdk-17"):
        find_java_home()


def test_only_python_runtimes_run_locally():
    with pytest.raises(LocalStackSetupError, match="'nodejs20.x': only Python runtimes"):
        install_module._runtime_python("nodejs20.x")


def _worker(tmp_path: Path, code: str, handler: str = "app.handler") -> subprocess.Popen[str]:
    (tmp_path / "app.py").write_text(code)
    env = {"PATH": os.environ["PATH"], "AWS_LAMBDA_FUNCTION_TIMEOUT": "3", "AWS_LAMBDA_FUNCTION_NAME": "f"}
    return subprocess.Popen([sys.executable, "-I", "-B", str(WORKER), str(tmp_path), handler], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_the_worker_answers_invocations_and_keeps_prints_out_of_its_replies(tmp_path):
    # GIVEN a handler that prints, counts its invocations (module state) and fails on demand
    process = _worker(tmp_path, "calls = 0\nprint('cold start')\n"
                                "def handler(event, context):\n    global calls\n    calls += 1\n"
                                "    print('hello')\n    if event.get('fail'):\n        raise ValueError('bad event')\n"
                                "    return {'calls': calls, 'left': context.get_remaining_time_in_millis() > 0}\n")
    requests = [{"invoke-id": "r1", "payload": "{}"}, {"invoke-id": "r2", "payload": json.dumps({"fail": True})},
                {"invoke-id": "r3", "payload": "{}"}]
    # WHEN three invocations are sent to the warm process
    out, err = process.communicate("".join(json.dumps(r) + "\n" for r in requests), timeout=30)
    replies = [json.loads(line) for line in out.splitlines()]
    # THEN it was ready, answered each in order (state kept), the error as Lambda reports it
    assert replies[0] == {"ready": True}
    assert json.loads(replies[1]["payload"]) == {"calls": 1, "left": True}
    assert replies[2]["error"]["errorType"] == "ValueError" and replies[2]["error"]["errorMessage"] == "bad event"
    assert json.loads(replies[3]["payload"]) == {"calls": 3, "left": True}
    # THEN the prints are logs
    assert "cold start" in err and err.count("hello") == 3 and "START RequestId: r1" in err


def test_an_import_error_is_the_init_error(tmp_path):
    # GIVEN a handler module that cannot import
    process = _worker(tmp_path, "import not_a_module\n")
    out, _ = process.communicate("", timeout=30)
    # THEN the first and only reply is the init error, and the process exits
    reply = json.loads(out.splitlines()[0])
    assert reply["init_error"]["errorType"] == "Runtime.ModuleNotFoundError"
    assert "not_a_module" in reply["init_error"]["errorMessage"] and process.returncode == 1


def test_server_settings_listen_on_loopback_only_and_leak_no_aws_settings(monkeypatch, tmp_path):
    # GIVEN AWS settings of the caller's shell
    monkeypatch.setenv("AWS_PROFILE", "production")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "https://example.com")
    installation = Installation(python=tmp_path / "python", runtimes={"python3.13": tmp_path / "py313"},
                                java_home=tmp_path / "jdk")
    # WHEN LocalStack's environment is built
    env = server_environment(installation, 4599, tmp_path / "fs")
    # THEN it listens on 127.0.0.1 only, runs our executor and DynamoDB Local's own streams, no AWS_*
    assert env["GATEWAY_LISTEN"] == "127.0.0.1:4599" and env["GATEWAY_SERVER"] == "hypercorn"
    assert env["LAMBDA_RUNTIME_EXECUTOR"] == "local-process" and env["PROVIDER_OVERRIDE_DYNAMODBSTREAMS"] == "v2"
    assert json.loads(env["CONSTRUCTS_LIB_LAMBDA_PYTHONS"]) == {"python3.13": str(tmp_path / "py313")}
    assert not [k for k in env if k.startswith("AWS_")]
    assert env["PATH"].startswith(str(tmp_path / "jdk" / "bin"))
    # THEN clients are pointed at it
    assert client_environment(4599)["AWS_ENDPOINT_URL"] == "http://127.0.0.1:4599"


def test_cli_env_prints_exports_and_stop_without_a_server_fails(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CONSTRUCTS_LIB_CACHE_DIR", str(tmp_path))
    assert cli.main(["env", "--port", "4598"]) == 0
    assert "export AWS_ENDPOINT_URL=http://127.0.0.1:4598" in capsys.readouterr().out
    assert cli.main(["stop", "--port", "4598"]) == 2
    assert "no LocalStack started by this tool runs on port 4598" in capsys.readouterr().err
    assert issubclass(LocalStackSetupError, LocalStackError)

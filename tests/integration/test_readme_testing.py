"""The examples of docs/testing-your-stacks.md, run verbatim: every ``python`` block of that
page becomes a test file of a fresh project next to a ``my_app/stacks.py`` holding what the
page says it holds (and the two contract files its consumer example names), and a separate
pytest process runs them with the plugin (no conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.model.contract_file import build_contract, contract_json
from constructs_lib.testing import find_dynamodb_local_dir

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "testing-your-stacks.md"
TITLE = "# Testing your own stacks"
MY_APP = '''\
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb

from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction
from constructs_lib.model import AccessPattern, Entity, Model

HERE = Path(__file__).resolve().parent
notes_model = Model(
    "notes",
    entities=[Entity("Note", pk="USER#{user_id}", sk="NOTE#{note_id}", fields=["user_id", "note_id", "text"])],
    access_patterns=[AccessPattern("notes of a user", entity="Note", sk="begins_with")],
)


class NotesStack(cdk.Stack):
    def __init__(self, scope, id):
        super().__init__(scope, id)
        data = SingleTable(self, "Data", model=notes_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        StreamAudit(self, "Audit", source=data)


class ViewsStack(cdk.Stack):
    def __init__(self, scope, id):
        super().__init__(scope, id)
        data = SingleTable(self, "Data", model=notes_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        ShardedCounter(self, "VideoViews", table=data, name="video_views", shards=4)


class DataStack(cdk.Stack):
    def __init__(self, scope, id):
        super().__init__(scope, id)
        self.data = SingleTable(self, "Data", model=notes_model)


class ApiStack(cdk.Stack):
    def __init__(self, scope, id, *, data):
        super().__init__(scope, id)
        TableFunction(self, "NotesApi", table=data, entry=HERE / "notes_api")


def build_app(app):
    data_stack = DataStack(app, "DataStack")
    ApiStack(app, "ApiStack", data=data_stack.data)


class ReportsStack(cdk.Stack):
    def __init__(self, scope, id):
        super().__init__(scope, id)
        notes = SingleTable.from_parameters(self, "Notes", parameter_prefix="/notes/data",
                                            contract=HERE / "notes.contract.json")
        TableFunction(self, "Report", table=notes, entry=HERE / "report", patterns=["notes of a user"])
'''
NOTES_API = '''\
from constructs_lib.runtime import TableClient

table = TableClient.from_environment()


def handler(event, context):
    table.put("Note", {"user_id": event["user_id"], "note_id": event["note_id"], "text": event["text"]})
    return {"saved": event["note_id"]}
'''
REPORT = '''\
from constructs_lib.runtime import TableClient

table = TableClient.from_environment()


def handler(event, context):
    return {"notes": [n["note_id"] for n in table.query_all("notes of a user", user_id=event["user_id"])]}
'''


def notes_contract(sk: str) -> str:
    """The contract file of the page's notes model, with the Note sort key ``sk``."""
    model = Model("notes", entities=[Entity("Note", pk="USER#{user_id}", sk=sk, fields=["user_id", "note_id", "text"])],
                  access_patterns=[AccessPattern("notes of a user", entity="Note", sk="begins_with")])
    return contract_json(build_contract(model))


def readme_examples() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith(TITLE), f"{PAGE} no longer starts with {TITLE!r}"
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_section_has_the_four_examples() -> None:
    # GIVEN the page
    # WHEN its python blocks are collected
    blocks = readme_examples()
    # THEN there are four, and none uses a fixture the plugin does not have
    assert len(blocks) == 4
    fixtures = {name for block in blocks
                for name in re.split(r",\s*", re.findall(r"def test_\w+\(([^)]*)\)", block)[0])}
    assert fixtures <= {"cdk_synth", "local_deploy", "local_function", "stream_consumer", "stream_runner",
                        "local_producer", "dynamodb_local", "dynamodb_client", "dynamodb_streams_client"}, fixtures


def test_readme_testing_examples_pass_verbatim(tmp_path: Path) -> None:
    # GIVEN a fresh project: my_app as the page describes it, and each of its examples as a test file
    (tmp_path / "my_app" / "notes_api").mkdir(parents=True)
    (tmp_path / "my_app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "my_app" / "stacks.py").write_text(MY_APP, encoding="utf-8")
    (tmp_path / "my_app" / "notes_api" / "index.py").write_text(NOTES_API, encoding="utf-8")
    (tmp_path / "my_app" / "report").mkdir()
    (tmp_path / "my_app" / "report" / "index.py").write_text(REPORT, encoding="utf-8")
    (tmp_path / "my_app" / "notes.contract.json").write_text(notes_contract("NOTE#{note_id}"), encoding="utf-8")
    (tmp_path / "my_app" / "notes_v2.contract.json").write_text(notes_contract("N#{note_id}"), encoding="utf-8")
    blocks = readme_examples()
    for number, block in enumerate(blocks, start=1):
        (tmp_path / f"test_readme_{number}.py").write_text(textwrap.dedent(block), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "CDK_CONTEXT_JSON"}
    env.update(PYTHONPATH=str(REPO), DYNAMODB_LOCAL_DIR=str(find_dynamodb_local_dir()),
               JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20")
    # WHEN pytest runs them with the plugin (however it is registered in this environment)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:constructs_lib",
         "-p", "constructs_lib.testing.plugin", *(f"test_readme_{n}.py" for n in range(1, len(blocks) + 1))],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    # THEN every example passes
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert f"{len(blocks)} passed" in done.stdout, done.stdout

"""Every guide page's lead example, run verbatim (scripts/docs_pages.py finds them): each is
written to its own directory under the file name its title gives, and one pytest process runs them
all with the plugin, so they share one jsii process and one DynamoDB Local:

* a ``test_*.py`` file is a test module (the plugin's fixtures: ``cdk_synth``, ``local_deploy``,
  ``dynamodb_client``...);
* another ``.py`` file is a script, run as ``__main__`` (a CDK app's ``app.synth()`` writes into a
  temporary directory), with the titled blocks right after it written beside it (its handler);
* a ``bash`` block holds commands run line by line from the repository's root (``python`` is this
  environment's), as a reader in a checkout would.

The pages whose example needs files beside it are run by tests of their own
(``TESTED_ELSEWHERE``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from constructs_lib.testing import find_dynamodb_local_dir
from scripts.docs_pages import REPO, TESTED_ELSEWHERE, CodeBlock, Page, guide_pages

pytestmark = pytest.mark.integration

#: Records each test's outcome by node id (the harness's conftest.py in the examples' root).
RECORDER = '''\
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "outcomes.jsonl"


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        with OUT.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"nodeid": report.nodeid, "outcome": report.outcome,
                                  "longrepr": str(report.longrepr or "")[-3000:]}) + "\\n")
'''
RUNNER = '''\
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPTS = sorted(p.parent / p.read_text(encoding="utf-8") for p in HERE.glob("*/run.txt"))
COMMANDS = sorted(HERE.glob("*/commands.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.parent.name for p in SCRIPTS])
def test_script(script, monkeypatch):
    monkeypatch.chdir(script.parent)
    monkeypatch.syspath_prepend(str(script.parent))
    runpy.run_path(str(script), run_name="__main__")


@pytest.mark.parametrize("commands", COMMANDS, ids=[p.parent.name for p in COMMANDS])
def test_commands(commands):
    text = commands.read_text(encoding="utf-8").replace(chr(92) + chr(10), " ")  # a \\ line
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if line:
            done = subprocess.run(line, shell=True, cwd=os.environ["DOCS_EXAMPLES_CWD"],
                                  capture_output=True, text=True, timeout=120, check=False)
            assert done.returncode == 0, f"{line}\\n{done.stdout[-3000:]}\\n{done.stderr[-3000:]}"
'''


def lead_examples() -> dict[str, list[CodeBlock]]:
    """Page name -> its lead example's blocks, for the guide pages run here (a page without a
    titled one is missing: test_every_guide_page_has_its_example_run)."""
    examples = {}
    for page in guide_pages():
        _, blocks, _ = page.lead()
        if page.name not in TESTED_ELSEWHERE and blocks and blocks[0].title is not None:
            examples[page.name] = blocks
    return examples


def slug(page: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", page.removesuffix(".md").lower())


def write_examples(root: Path) -> dict[str, str]:
    """Write every lead example into a directory of its own under *root*; page name -> directory."""
    directories = {}
    for page, (block, *beside) in lead_examples().items():
        directory = root / slug(page)
        directory.mkdir(parents=True)
        for other in beside:
            assert other.title is not None and not Path(other.title).name.startswith("test_"), page
            (directory / other.title).parent.mkdir(parents=True, exist_ok=True)
            (directory / other.title).write_text(other.text, encoding="utf-8")
        if block.language == "bash":
            (directory / "commands.sh").write_text(block.text, encoding="utf-8")
        else:
            assert block.language == "python" and block.title is not None and block.title.endswith(".py"), page
            (directory / block.title).write_text(block.text, encoding="utf-8")
            if not block.title.startswith("test_"):
                (directory / "run.txt").write_text(block.title, encoding="utf-8")
        directories[page] = directory.name
    (root / "test_run_examples.py").write_text(RUNNER, encoding="utf-8")
    return directories


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Page name -> "passed", or what failed: every example run in one pytest process."""
    root = tmp_path_factory.mktemp("docs-examples")
    directories = write_examples(root)
    (root / "conftest.py").write_text(RECORDER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "CDK_CONTEXT_JSON"}
    env.update(PYTHONPATH=str(REPO), DYNAMODB_LOCAL_DIR=str(find_dynamodb_local_dir()),
               JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20", DOCS_EXAMPLES_CWD=str(REPO),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:constructs_lib",
         "-p", "constructs_lib.testing.plugin", "--import-mode=importlib", "--rootdir", str(root), str(root)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    reports = root / "outcomes.jsonl"
    lines = reports.read_text(encoding="utf-8").splitlines() if reports.is_file() else []
    by_page = {page: "not run" for page in directories}
    page_of = {directory: page for page, directory in directories.items()}
    for record in map(json.loads, lines):
        match = re.match(r"(\w+)/|test_run_examples\.py::test_\w+\[(\w+)\]", record["nodeid"])
        page = page_of.get(match.group(1) or match.group(2)) if match else None
        if page is None:
            continue
        if by_page[page] in ("not run", "passed"):
            by_page[page] = "passed" if record["outcome"] == "passed" else f"{record['nodeid']}: {record['longrepr']}"
    by_page["<pytest>"] = "passed" if done.returncode in (0, 1) and lines else (
        f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return by_page


@pytest.mark.parametrize("page", sorted(lead_examples()))
def test_the_lead_example_runs(page: str, outcomes: dict[str, str]) -> None:
    # GIVEN the page's lead example, run verbatim with every other (the fixture)
    # THEN it passed
    assert outcomes["<pytest>"] == "passed", outcomes["<pytest>"]
    assert outcomes[page] == "passed", f"{page}: {outcomes[page]}"


def test_every_guide_page_has_its_example_run() -> None:
    # GIVEN the guide pages THEN each example is run here or by the test named for it
    pages = {page.name for page in guide_pages()}
    assert pages == set(lead_examples()) | set(TESTED_ELSEWHERE), pages ^ (set(lead_examples()) | set(TESTED_ELSEWHERE))


def test_the_runner_reports_a_failing_example(tmp_path: Path) -> None:
    # GIVEN the page reader on a page whose lead example fails
    page = tmp_path / "page.md"
    page.write_text('# A page\n\nIt fails.\n\n```python title="test_fails.py"\ndef test_it():\n    assert 1 == 2\n```\n',
                    encoding="utf-8")
    parsed = Page.__new__(Page)
    object.__setattr__(parsed, "path", page)
    _, (block,), _ = parsed.lead()
    assert block.title == "test_fails.py"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / block.title).write_text(block.text, encoding="utf-8")
    # WHEN pytest runs it as the fixture does
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
                           str(tmp_path / "run")], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=False)
    # THEN it fails
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout

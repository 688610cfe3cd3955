"""Helpers of the packaging tests: separate apps in their own directories and virtualenvs.

The virtualenvs are made offline with the pinned uv the Makefile installs (``uv venv``, no pip
in it; the wheel installed with ``uv pip install --offline --no-deps --compile-bytecode``), or with
``python -m venv --without-pip`` and ``pip install --no-index --no-deps`` where pip itself is the
point (tests/packaging/test_wheel_install.py). The third-party dependencies (aws-cdk-lib,
constructs, jsii, cdk-nag, boto3, pytest...) are seen through a ``.pth`` line naming this
environment's site-packages — a plain path, so this checkout's editable-install hook (another
``.pth`` file in there) is never run and ``constructs_lib`` can only come from the wheel.

What a virtualenv's commands get (``clean_env(venv)``): a temporary directory of its own
(``TMPDIR``, so a pytest run there neither reads nor cleans the machine's shared
``/tmp/pytest-of-<user>``), and ``PYTEST_ADDOPTS`` turning off the pytest plugins of this
environment's dev extra (hypothesis, xdist), which a user's ``pip install
"constructs_lib[cdk,testing]"`` would not have and the ``.pth`` line would otherwise load.
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CDK_CLI = REPO / "node_modules" / ".bin" / "cdk"
CLI_HINT = f"{CDK_CLI} is missing: run `make setup` (npm ci installs the pinned CDK CLI)"
UV = Path(sys.prefix) / "bin" / "uv"
UV_HINT = f"{UV} is missing: run `make setup` (it installs the pinned uv into the virtualenv)"
#: pytest plugins of the dev extra only (``-p no:<name>``), off in the virtualenvs' pytest runs.
DEV_ONLY_PLUGINS = ("hypothesispytest", "xdist", "xdist.looponfail")
#: What an app directory copy leaves out.
_APP_IGNORE = shutil.ignore_patterns("cdk.out", "__pycache__", "*.pyc", ".venv")


class Clock:
    """Seconds per step (wall, and the CPU of the step's finished child processes) and other
    figures, printed when the module is done."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.start = time.monotonic()
        self.steps: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.figures: dict[str, str] = {}

    def run(self, step: str, cmd: Sequence[str | os.PathLike[str]], *, cwd: Path, env: dict[str, str],
            timeout: float = 300.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run *cmd*, adding its time to *step*; a non-zero exit fails the test unless not *check*."""
        begin, cpu = time.monotonic(), _children_cpu()
        done = subprocess.run([os.fspath(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
        self.steps[step] = self.steps.get(step, 0.0) + time.monotonic() - begin
        self.cpu[step] = self.cpu.get(step, 0.0) + _children_cpu() - cpu
        if check and done.returncode != 0:
            pytest.fail(f"{step}: {' '.join(map(str, cmd))} exited {done.returncode}\n"
                        f"--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}", pytrace=False)
        return done

    def note(self, name: str, value: str) -> None:
        self.figures[name] = value

    def summary(self) -> str:
        steps = ", ".join(f"{name} {seconds:.1f} s ({self.cpu[name]:.1f} s CPU)" for name, seconds in self.steps.items())
        lines = [f"{self.title}: {time.monotonic() - self.start:.1f} s in total ({steps})"]
        lines += [f"  {name}: {value}" for name, value in self.figures.items()]
        return "\n".join(lines)


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished children and what they waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clean_env(venv: Path | None = None, **extra: str) -> dict[str, str]:
    """This environment minus what would point a child Python at this checkout or this run."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env.update(JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20", CDK_DISABLE_CLI_TELEMETRY="true",
               AWS_EC2_METADATA_DISABLED="true", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.update(venv_extras(venv))
    env.update(extra)
    return env


def venv_extras(venv: Path) -> dict[str, str]:
    """What every command run with *venv* gets besides its PATH: its own temporary directory
    (made here), and the dev extra's pytest plugins turned off (see the module docstring)."""
    tmp = venv / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp), "PYTEST_ADDOPTS": " ".join(f"-p no:{name}" for name in DEV_ONLY_PLUGINS)}


def make_venv(root: Path, wheel: Path, clock: Clock, *, step: str = "create venv", pip: bool = False) -> Path:
    """A fresh virtualenv at *root* holding *wheel*, made offline by the pinned uv (by ``venv`` and
    pip if *pip*); other packages come from this environment."""
    python = root / "bin" / "python"
    if pip:
        clock.run(step, [sys.executable, "-m", "venv", "--without-pip", root], cwd=root.parent, env=clean_env())
        clock.run(step, [sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps",
                         "--quiet", wheel], cwd=root.parent, env=clean_env())
    else:
        assert UV.exists(), UV_HINT
        clock.run(step, [UV, "venv", "--offline", "--quiet", "--python", sys.executable, root], cwd=root.parent,
                  env=clean_env())
        clock.run(step, [UV, "pip", "install", "--offline", "--no-deps", "--compile-bytecode", "--quiet", "--python",
                         python, wheel], cwd=root.parent, env=clean_env())
    (site_packages(root) / "outer_site_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n",
                                                                 encoding="utf-8")
    return root


def site_packages(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3*/site-packages")
    return site


def copy_app(source: Path, target: Path) -> Path:
    """A copy of an app directory (no cdk.out, bytecode or virtualenv), as a repository checkout."""
    shutil.copytree(source, target, ignore=_APP_IGNORE)
    return target


def cli_synth(clock: Clock, step: str, app_dir: Path, venv: Path, *, output: Path | None = None, check: bool = True,
              **env: str) -> subprocess.CompletedProcess[str]:
    """``cdk synth`` with the pinned CLI in *app_dir* (its cdk.json), the app run by *venv*'s
    interpreter; writes *output*, default ``app_dir/cdk.out``. *env*: extra variables."""
    assert CDK_CLI.exists(), CLI_HINT
    cmd: list[str | os.PathLike[str]] = [CDK_CLI, "synth", "--app", f"{venv / 'bin' / 'python'} app.py", "--no-notices",
                                         "--quiet"]
    if output is not None:
        cmd += ["--output", output]
    return clock.run(step, cmd, cwd=app_dir, env=clean_env(venv, **env), check=check)


def resource_types(template: dict[str, Any]) -> Counter[str]:
    return Counter(r["Type"] for r in template["Resources"].values())


def nag_problems(cdk_out: Path) -> list[str]:
    """What makes an assembly synthesized with cdk-nag's ``AwsSolutionsChecks`` not clean: a
    missing report, a finding left, or a finding acknowledged by anything but constructs_lib
    itself (with its reviewed reason, on the one resource concerned). Empty when clean."""
    from constructs_lib.constructs import nag as _nag

    library = {"AwsSolutions-L1": _nag.PINNED_RUNTIME, "AwsSolutions-SQS3": _nag.QUEUE_IS_THE_DLQ,
               "AwsSolutions-SMG4": _nag.SALT_MUST_NOT_ROTATE}
    report_file = cdk_out / "validation-report.json"
    if not report_file.is_file():
        return [f"no validation-report.json in {cdk_out}: cdk-nag did not run"]
    reports = json.loads(report_file.read_text(encoding="utf-8")).get("pluginReports", [])
    problems = [f"plugins {[r.get('pluginName') for r in reports]} are not ['AwsSolutions']"] \
        if [r.get("pluginName") for r in reports] != ["AwsSolutions"] else []
    for report in reports:
        problems += [f"finding {v['ruleName']} on {[c['constructPath'] for c in v['violatingConstructs']]}"
                     for v in report.get("violations", [])]
        for finding in report.get("suppressedViolations", []):
            rule, where = finding["ruleName"], [c["constructPath"] for c in finding["violatingConstructs"]]
            if library.get(rule) != finding.get("reason") or where != [finding.get("acknowledgedAt")]:
                problems.append(f"{rule} on {where} acknowledged at {finding.get('acknowledgedAt')}, "
                                f"not by constructs_lib: {finding.get('reason')!r}")
    return problems


def zipped_size(root: Path, files: Iterable[Path]) -> int:
    """Bytes of a deflated zip of *files* (paths under *root*), as Lambda's code package would be."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            archive.write(path, path.relative_to(root).as_posix())
    return len(buffer.getvalue())


def kb(size: int) -> str:
    return f"{size / 1024:.1f} KB"

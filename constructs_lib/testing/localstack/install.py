"""Install LocalStack into the per-user cache: its own virtualenv, the patches, the executor.

:func:`install` creates, once per LocalStack release, ``<cache>/localstack/<release>/venv`` (a
Python >= 3.12 from ``$CONSTRUCTS_LIB_LOCALSTACK_PYTHON``, ``python3.13``/``python3.12`` on PATH
or pyenv) with ``localstack-core[runtime]`` pinned by ``constraints.txt`` (uv when found, else
pip), applies :mod:`.patches`, installs the Lambda executor of ``plugin/``, and for each Lambda
runtime asked for (``python3.13``) makes a virtualenv of that Python with boto3, as the Lambda
runtime ships it. The cache: :func:`constructs_lib.assets.cache.cache_root`. A missing
prerequisite raises ``LocalStackSetupError`` naming it and the command that gets it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from constructs_lib.assets.bytecode import candidates
from constructs_lib.assets.cache import cache_root, locked
from constructs_lib.testing.exceptions import DynamoDBLocalNotFoundError, LocalStackSetupError
from constructs_lib.testing.localstack.patches import apply
from constructs_lib.testing.provision import find_java

__all__ = [
    "ENV_PYTHON",
    "LOCALSTACK_VERSION",
    "Installation",
    "find_localstack_python",
    "install",
    "install_dir",
]

#: The LocalStack release installed (``localstack-core`` on PyPI).
LOCALSTACK_VERSION = "2026.3.0"
#: Python versions LocalStack runs on, preferred first.
LOCALSTACK_PYTHONS = ("3.13", "3.12")
#: Environment variable naming the Python (>= 3.12) LocalStack's virtualenv is made with.
ENV_PYTHON = "CONSTRUCTS_LIB_LOCALSTACK_PYTHON"
#: The Lambda runtime installed by default (the runtime our functions are synthesized for).
DEFAULT_RUNTIMES = ("python3.13",)
HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE / "plugin"
CONSTRAINTS = HERE / "constraints.txt"
#: The distribution the executor is installed as (its entry point is how LocalStack finds it).
PLUGIN_DIST = "constructs_lib_localstack-1.0.dist-info"
PLUGIN_ENTRY_POINTS = (
    "[localstack.lambda.runtime_executor]\n"
    "local-process = constructs_lib_localstack:LocalProcessRuntimeExecutorPlugin\n"
)
PYTHON_HINT = (
    "install one, e.g. `pyenv install 3.13` (then it is found under $(pyenv root)/versions), "
    "`uv python install 3.13`, or `sudo apt-get install -y python3.13-venv` where your distribution has it; "
    f"or set {ENV_PYTHON} to its path"
)
_INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True)
class Installation:
    """What :func:`install` made: LocalStack's interpreter and one interpreter per Lambda runtime."""

    #: Python of LocalStack's virtualenv.
    python: Path
    #: Lambda runtime (``python3.13``) -> the Python that runs its handlers.
    runtimes: dict[str, Path]
    #: ``JAVA_HOME`` of the Java (17+) LocalStack's DynamoDB runs on.
    java_home: Path


def install_dir() -> Path:
    """``<cache>/localstack/<release>``: where this release is installed."""
    return cache_root() / "localstack" / LOCALSTACK_VERSION


def _version_of(python: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``python`` from ``python --version``; None if it does not run."""
    try:
        done = subprocess.run([python, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.fullmatch(r"Python (\d+)\.(\d+)\.\S+", (done.stdout or done.stderr).strip())
    return (int(match[1]), int(match[2])) if done.returncode == 0 and match else None


def find_localstack_python() -> str:
    """A Python >= 3.12 to make LocalStack's virtualenv with (see the module docstring).

    Raises
    ------
    LocalStackSetupError
        ``$CONSTRUCTS_LIB_LOCALSTACK_PYTHON`` is not a Python >= 3.12, or none was found.
    """
    explicit = os.environ.get(ENV_PYTHON)
    if explicit:
        found = _version_of(explicit)
        if found is None or found < (3, 12):
            what = "not a working Python" if found is None else f"Python {found[0]}.{found[1]}"
            raise LocalStackSetupError(
                f"{ENV_PYTHON}={explicit!r} is {what}; "
                f"LocalStack {LOCALSTACK_VERSION} needs Python >= 3.12: {PYTHON_HINT}."
            )
        return explicit
    tried: list[str] = []
    for version in LOCALSTACK_PYTHONS:
        for python in candidates(version):
            tried.append(python)
            if _version_of(python) == tuple(int(p) for p in version.split(".")):
                return python
    raise LocalStackSetupError(
        f"LocalStack {LOCALSTACK_VERSION} needs Python >= 3.12, and none was found "
        f"(looked for python3.13 and python3.12 on PATH and in pyenv; tried {tried or 'nothing'}): {PYTHON_HINT}."
    )


def find_java_home() -> Path:
    """``JAVA_HOME`` of a Java 17+ (``$JAVA_HOME``, else ``java`` on PATH).

    Raises
    ------
    LocalStackSetupError
        No Java, or one older than 17 (the message names it and the install command).
    """
    try:
        java = find_java()
    except DynamoDBLocalNotFoundError as exc:
        raise LocalStackSetupError(f"LocalStack's DynamoDB (DynamoDB Local) needs Java 17 or later. {exc}") from exc
    return Path(os.path.realpath(java)).parents[1]


def _runtime_python(runtime: str) -> str:
    version = runtime.removeprefix("python")
    if not runtime.startswith("python") or version.count(".") != 1:
        raise LocalStackSetupError(f"Lambda runtime {runtime!r}: only Python runtimes (python3.X) can run locally")
    for python in candidates(version):
        if _version_of(python) == tuple(int(p) for p in version.split(".")):
            return python
    raise LocalStackSetupError(
        f"Lambda runtime {runtime} needs a Python {version} to run its handlers, and none was found "
        f"(python{version} on PATH, pyenv): install it, e.g. `pyenv install {version}`."
    )


def _pip_install(python: Path, requirements: Sequence[str]) -> None:
    """Install ``requirements`` into ``python``'s environment, constrained by :data:`CONSTRAINTS`:
    with uv (beside this interpreter or on PATH) when found, else with pip."""
    uv = Path(sys.executable).with_name("uv")
    uv_path = str(uv) if uv.is_file() else shutil.which("uv")
    if uv_path:
        command = [uv_path, "pip", "install", "--python", str(python), "--quiet", "-c", str(CONSTRAINTS), *requirements]
    else:
        command = [str(python), "-m", "pip", "install", "--quiet", "-c", str(CONSTRAINTS), *requirements]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LocalStackSetupError(f"installing {requirements} did not finish in {_INSTALL_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr + done.stdout).strip().splitlines()[-20:])
        raise LocalStackSetupError(f"installing {requirements} failed (exit {done.returncode}): "
                                   f"{' '.join(command)}\n{tail}")


def _make_venv(base: str, target: Path, requirements: Sequence[str]) -> Path:
    """A virtualenv of ``base`` at ``target`` holding ``requirements`` (made once: a stamp file
    marks it complete)."""
    python = target / "bin" / "python"
    stamp = target / ".complete"
    if stamp.is_file():
        return python
    with locked(target.with_name(f"{target.name}.lock")):
        if stamp.is_file():
            return python
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([base, "-m", "venv", str(target)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise LocalStackSetupError(
                f"`{base} -m venv {target}` failed: {done.stderr.strip()[-500:]}. On Debian and Ubuntu, "
                "install the interpreter's venv package (e.g. `sudo apt-get install -y python3.13-venv`)."
            )
        _pip_install(python, requirements)
        stamp.write_text(" ".join(requirements) + "\n", encoding="utf-8")
    return python


def _site_packages(python: Path) -> Path:
    """The site-packages directory of the virtualenv of ``python`` (``<venv>/lib/python3.X/site-packages``)."""
    found = sorted(python.parents[1].glob("lib/python3.*/site-packages"))
    if len(found) != 1:
        raise LocalStackSetupError(f"no single site-packages in the virtualenv of {python}: {found}")
    return found[0]


def _install_plugin(site: Path) -> None:
    """Copy the executor and its worker into ``site`` and register the executor's entry point."""
    for source in PLUGIN_DIR.glob("*.py"):
        shutil.copyfile(source, site / source.name)
    dist = site / PLUGIN_DIST
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: constructs-lib-localstack\nVersion: 1.0\n",
                                   encoding="utf-8")
    (dist / "entry_points.txt").write_text(PLUGIN_ENTRY_POINTS, encoding="utf-8")
    (dist / "RECORD").write_text("", encoding="utf-8")


def install(runtimes: Sequence[str] = DEFAULT_RUNTIMES) -> Installation:
    """Install LocalStack and the Lambda ``runtimes`` (see the module docstring); quick when done.

    Parameters
    ----------
    runtimes
        Lambda runtimes whose functions run locally. Default ``("python3.13",)``.

    Raises
    ------
    LocalStackSetupError
        Python >= 3.12, Java 17+ or a runtime's Python is missing, an install failed, or a patch
        does not fit the installed code.
    """
    java_home = find_java_home()
    root = install_dir()
    python = root / "venv" / "bin" / "python"
    if not (root / "venv" / ".complete").is_file():
        base = find_localstack_python()
        python = _make_venv(base, root / "venv", [f"localstack-core[runtime]=={LOCALSTACK_VERSION}"])
    site = _site_packages(python)
    with locked(root / "patch.lock"):
        apply(site / "localstack")
        _install_plugin(site)
    interpreters = {}
    for runtime in runtimes:
        target = root / "runtimes" / runtime
        if (target / ".complete").is_file():
            interpreters[runtime] = target / "bin" / "python"
        else:
            interpreters[runtime] = _make_venv(_runtime_python(runtime), target, ["boto3"])
    return Installation(python=python, runtimes=interpreters, java_home=java_home)

"""Install a function's third-party dependencies for the Lambda runtime, without Docker.

``pip install --target DIR --implementation cp --python-version 3.13 --only-binary=:all:`` with
every ``manylinux`` platform tag the Lambda runtime's OS accepts for the function's architecture:
nothing is compiled, and a package without a matching wheel fails synth with a
:class:`AssetError` naming the package, the platform and the Python version. Installs are
cached per user, keyed by the requirements, tags and Python versions. ``boto3``/``botocore`` are
never installed (the Lambda runtime ships them); synth-time packages are refused.

See docs/adr/0019-dependencies-without-docker.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .cache import cache_root, locked
from .exceptions import AssetError
from .lambda_platform import LAMBDA_GLIBC_MINOR, LAMBDA_PYTHON_VERSION

__all__ = [
    "InstalledDependencies",
    "RequirementSet",
    "install",
    "pip_platforms",
    "read_requirements",
]

#: Provided by the Lambda Python runtime: skipped (with a warning) when required.
RUNTIME_PROVIDED = frozenset({"boto3", "botocore", "s3transfer"})
#: Synth-time packages that must never ship in a function.
SYNTH_ONLY = frozenset({"constructs-lib", "aws-cdk-lib", "constructs", "jsii"})
#: Bump when the layout of a cached install changes.
_CACHE_FORMAT = 1
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_INCLUDE_RE = re.compile(r"^(-r|--requirement)(\s+|=)(?P<path>.+)$")
_CONSTRAINT_RE = re.compile(r"^(-c|--constraint)(\s+|=)(?P<path>.+)$")
_NO_VERSION_RE = re.compile(r"Could not find a version that satisfies the requirement (\S+) \(from versions: ([^)]*)\)")
_PIP_TIMEOUT_S = 900


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class RequirementSet:
    """Requirement lines to install, and the runtime-provided ones that were left out.

    Attributes
    ----------
    source : Path
        The requirements file or ``pyproject.toml`` they were read from.
    lines : tuple of str
        pip requirement lines and options (``-r`` includes inlined, ``-c`` paths absolute).
    skipped : tuple of str
        Requirement lines naming a package the Lambda runtime provides (boto3, botocore).
    """

    source: Path
    lines: tuple[str, ...]
    skipped: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """Whether nothing is left to install."""
        return not any(not line.startswith("-") for line in self.lines)


def _logical_lines(path: Path) -> list[str]:
    """Lines of a requirements file, comments removed and ``\\`` continuations joined."""
    out: list[str] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if line.endswith("\\"):
            pending += line[:-1].lstrip()
            continue
        line = (pending + line.lstrip()).strip()
        pending = ""
        if line:
            out.append(line)
    if pending.strip():
        out.append(pending.strip())
    return out


def _read_txt(path: Path, what: str, seen: tuple[Path, ...] = ()) -> list[str]:
    if path in seen:
        raise AssetError(f"{what}: requirements file {str(path)!r} includes itself (through -r)")
    if not path.is_file():
        raise AssetError(f"{what}: requirements file {str(path)!r} (included with -r) does not exist")
    lines: list[str] = []
    for line in _logical_lines(path):
        if match := _INCLUDE_RE.match(line):
            lines += _read_txt((path.parent / match["path"].strip()).resolve(), what, (*seen, path))
        elif match := _CONSTRAINT_RE.match(line):
            lines.append(f"--constraint {(path.parent / match['path'].strip()).resolve()}")
        else:
            lines.append(line)
    return lines


def read_requirements(path: Path, *, what: str) -> RequirementSet:
    """Read a ``requirements*.txt`` (with its ``-r`` includes) or ``pyproject.toml``
    (``[project].dependencies``; none declared means nothing to install).

    Raises
    ------
    AssetError
        The file cannot be parsed, an include is missing, or a requirement names a synth-time
        package (``constructs_lib``, ``aws-cdk-lib``, ``constructs``, ``jsii``).
    """
    if path.name == "pyproject.toml":
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8")).get("project") or {}
        except tomllib.TOMLDecodeError as exc:
            raise AssetError(f"{what}: {str(path)!r} is not valid TOML: {exc}") from exc
        dependencies = project.get("dependencies") or []
        if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
            raise AssetError(f"{what}: [project].dependencies of {str(path)!r} must be a list of strings")
        lines = [d.strip() for d in dependencies if d.strip()]
    else:
        lines = _read_txt(path, what)
    keep: list[str] = []
    skipped: list[str] = []
    for line in lines:
        match = None if line.startswith("-") else _NAME_RE.match(line)
        name = _normalize(match.group(1)) if match else ""
        if name in SYNTH_ONLY:
            raise AssetError(
                f"{what}: requirement {line!r} in {str(path)!r} is a synth-time package; a function's asset never "
                "carries it (the construct bundles its own runtime and model): remove it from the function's "
                "requirements"
            )
        (skipped if name in RUNTIME_PROVIDED else keep).append(line)
    return RequirementSet(path, tuple(keep), tuple(skipped))


def pip_platforms(architecture: str) -> tuple[str, ...]:
    """pip ``--platform`` tags of the Lambda runtime's OS for ``"arm64"`` or ``"x86_64"``.

    Raises
    ------
    AssetError
        Another architecture name.
    """
    machine = {"arm64": "aarch64", "x86_64": "x86_64"}.get(architecture)
    if machine is None:
        raise AssetError(f"architecture {architecture!r} must be 'arm64' or 'x86_64'")
    glibc = range(17, LAMBDA_GLIBC_MINOR + 1)
    return (f"manylinux2014_{machine}", *(f"manylinux_2_{minor}_{machine}" for minor in glibc))


@dataclass(frozen=True)
class InstalledDependencies:
    """A cached install.

    Attributes
    ----------
    directory : Path
        The ``--target`` directory: its contents go to the asset root.
    key : str
        Cache key (hex digest of the requirement lines, platform tags and Python version).
    seconds : float
        Time spent here: the pip run on a cache miss, the lookup on a hit.
    cached : bool
        Whether the install came from the cache.
    removed : tuple of str
        Runtime-provided packages another requirement pulled in, removed from the install.
    """

    directory: Path
    key: str
    seconds: float
    cached: bool
    removed: tuple[str, ...]


def _cache_key(lines: tuple[str, ...], platforms: tuple[str, ...], python_version: str) -> str:
    # pip evaluates environment markers for the interpreter running it: part of the key too.
    payload = json.dumps({"format": _CACHE_FORMAT, "lines": lines, "platforms": platforms, "python": python_version,
                          "markers": list(sys.version_info[:2])})
    return hashlib.sha256(payload.encode()).hexdigest()


def _prune(target: Path) -> tuple[str, ...]:
    """Remove console scripts, compiled files and runtime-provided packages from an install."""
    shutil.rmtree(target / "bin", ignore_errors=True)
    for cache in sorted(target.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache, ignore_errors=True)
    removed: list[str] = []
    for entry in sorted(target.iterdir()):
        top = entry.name.split("-")[0] if entry.name.endswith(".dist-info") else entry.name
        if _normalize(top) in RUNTIME_PROVIDED:
            removed.append(entry.name)
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return tuple(sorted({n.split("-")[0] for n in removed}))


def _pip_failure(stderr: str, requirements: RequirementSet, platforms: tuple[str, ...], python_version: str,
                 what: str) -> AssetError:
    machine = platforms[0].split("_", 1)[1]
    tail = "\n".join(stderr.strip().splitlines()[-12:])
    match = _NO_VERSION_RE.search(stderr)
    if match and match.group(2).strip() != "none":
        return AssetError(
            f"{what}: no release of {match.group(1)!r} (from {str(requirements.source)!r}) matches, among those with "
            f"a wheel for linux {machine} (manylinux, glibc <= 2.{LAMBDA_GLIBC_MINOR}), CPython "
            f"{python_version}: {match.group(2).strip()}. Remedy: require one of these versions.\npip said:\n{tail}"
        )
    if match:
        package = match.group(1)
        return AssetError(
            f"{what}: no wheel of {package!r} (from {str(requirements.source)!r}) for the function's platform: "
            f"linux {machine} (manylinux, glibc <= 2.{LAMBDA_GLIBC_MINOR}), CPython {python_version}. "
            "Assets are built without Docker, so every dependency must be a wheel (--only-binary=:all:). "
            f"Remedy: require a version of {package} that publishes a manylinux {machine} wheel for cp"
            f"{python_version.replace('.', '')} or a pure-Python (py3-none-any) wheel, or build the function for "
            f"the other architecture if only that one has wheels.\npip said:\n{tail}"
        )
    return AssetError(
        f"{what}: pip could not install the requirements of {str(requirements.source)!r} for linux {machine}, "
        f"CPython {python_version}:\n{tail}"
    )


def install(
    requirements: RequirementSet,
    *,
    architecture: str,
    python_version: str = LAMBDA_PYTHON_VERSION,
    what: str,
) -> InstalledDependencies:
    """Install *requirements* for the Lambda runtime into the per-user cache (or reuse it).

    Parameters
    ----------
    requirements
        What to install (:func:`read_requirements`); must not be empty.
    architecture
        ``"arm64"`` or ``"x86_64"`` (``aws_lambda.Architecture.name``).
    python_version
        ``MAJOR.MINOR`` of the function's runtime. Default :data:`.lambda_platform.LAMBDA_PYTHON_VERSION`.
    what
        The construct, for error messages.

    Raises
    ------
    AssetError
        pip is not available, a package has no wheel for the platform (the message names the
        package, the platform, the Python version and the remedy), or pip failed otherwise.
    """
    started = time.monotonic()
    platforms = pip_platforms(architecture)
    key = _cache_key(requirements.lines, platforms, python_version)
    final = cache_root() / "python-deps" / key[:32]
    marker = final / "complete.json"
    if marker.is_file():
        meta = json.loads(marker.read_text(encoding="utf-8"))
        return InstalledDependencies(final / "target", key, time.monotonic() - started, True, tuple(meta["removed"]))
    with locked(final.with_name(f"{final.name}.lock")):
        if marker.is_file():  # another process installed it while we waited
            meta = json.loads(marker.read_text(encoding="utf-8"))
            return InstalledDependencies(final / "target", key, time.monotonic() - started, True, tuple(meta["removed"]))
        work = final.with_name(f"{final.name}.{os.getpid()}.tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            req_file = work / "requirements.txt"
            req_file.write_text("\n".join(requirements.lines) + "\n", encoding="utf-8")
            command = [
                sys.executable, "-m", "pip", "install", "--target", str(work / "target"),
                "--implementation", "cp", "--python-version", python_version, "--only-binary=:all:",
                *(arg for platform in platforms for arg in ("--platform", platform)),
                "--no-compile", "--no-input", "--disable-pip-version-check", "--progress-bar", "off", "--quiet",
                "-r", str(req_file),
            ]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired as exc:
                raise AssetError(
                    f"{what}: pip did not finish installing {str(requirements.source)!r} within {_PIP_TIMEOUT_S} s"
                ) from exc
            if done.returncode != 0 and "No module named pip" in done.stderr:
                raise AssetError(
                    f"{what}: installing {str(requirements.source)!r} needs pip in the synthesizing interpreter "
                    f"{sys.executable!r}: run `{sys.executable} -m ensurepip`"
                )
            if done.returncode != 0:
                raise _pip_failure(done.stderr + done.stdout, requirements, platforms, python_version, what)
            (work / "target").mkdir(exist_ok=True)
            removed = _prune(work / "target")
            (work / "complete.json").write_text(json.dumps({
                "requirements": list(requirements.lines), "platforms": list(platforms),
                "python": python_version, "removed": list(removed),
            }, indent=1), encoding="utf-8")
            shutil.rmtree(final, ignore_errors=True)
            work.rename(final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return InstalledDependencies(final / "target", key, time.monotonic() - started, False, removed)

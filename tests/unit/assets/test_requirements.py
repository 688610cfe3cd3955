"""A function's requirements: parsing, the runtime's platform tags, and pip installs into the
per-user cache. The installs use a local wheel directory (``PIP_NO_INDEX`` + ``PIP_FIND_LINKS``),
so these tests need no registry; tests/synth/test_table_function_package.py installs a real one."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import zipfile
from pathlib import Path

import pytest

from constructs_lib.assets import lambda_platform
from constructs_lib.assets.cache import ENV_CACHE_DIR, cache_root
from constructs_lib.assets.exceptions import AssetError
from constructs_lib.assets.requirements import (
    install,
    pip_platforms,
    read_requirements,
)
from constructs_lib.constructs import defaults as _defaults

WHAT = "TableFunction 'Api'"


def make_wheel(directory: Path, name: str, version: str, tag: str, modules: dict[str, str]) -> Path:
    """A minimal valid wheel (METADATA, WHEEL, RECORD with hashes) for *tag*."""
    dist_info = f"{name}-{version}.dist-info"
    files = dict(modules)
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    purelib = str(tag.startswith("py3")).lower()
    files[f"{dist_info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n"
    record = []
    for rel, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    path = directory / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for rel, text in files.items():
            whl.writestr(rel, text)
    return path


@pytest.fixture
def wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Only local wheels: an x86_64-only native package, a pure package, and a boto3 stand-in."""
    house = tmp_path / "wheels"
    house.mkdir()
    make_wheel(house, "fastnative", "1.0", "cp313-cp313-manylinux2014_x86_64", {"fastnative/__init__.py": "X = 1\n"})
    make_wheel(house, "purehelper", "2.0", "py3-none-any", {"purehelper.py": "def help():\n    return 'ok'\n"})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    return house


def requirements(tmp_path: Path, text: str, name: str = "requirements.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# Parsing ------------------------------------------------------------------------------------------
def test_comments_continuations_and_includes_are_read(tmp_path: Path) -> None:
    # GIVEN a requirements file with comments, a continuation, an include and a constraint file
    requirements(tmp_path, "six==1.16.0  # pinned\n", "base.txt")
    path = requirements(tmp_path, "# header\n-r base.txt\ntabulate \\\n  ==0.10.0\n-c constraints.txt\n\n")
    # WHEN it is read
    wanted = read_requirements(path, what=WHAT)
    # THEN the include is inlined, the continuation joined and the constraint path made absolute
    assert wanted.lines == ("six==1.16.0", "tabulate ==0.10.0", f"--constraint {tmp_path / 'constraints.txt'}")
    assert wanted.skipped == () and not wanted.empty


def test_boto3_and_botocore_are_skipped_because_the_runtime_ships_them(tmp_path: Path) -> None:
    # GIVEN requirements naming boto3 and botocore (any spelling) besides a real dependency
    path = requirements(tmp_path, "boto3>=1.34\nBotoCore\ntabulate\n")
    # WHEN they are read
    wanted = read_requirements(path, what=WHAT)
    # THEN boto3/botocore are set aside, the rest is kept
    assert wanted.skipped == ("boto3>=1.34", "BotoCore") and wanted.lines == ("tabulate",)


def test_only_runtime_provided_requirements_leave_nothing_to_install(tmp_path: Path) -> None:
    # GIVEN requirements naming only boto3
    # WHEN they are read
    # THEN nothing is left to install
    assert read_requirements(requirements(tmp_path, "boto3\n"), what=WHAT).empty


@pytest.mark.parametrize("line", ["constructs_lib[cdk]>=0.1", "aws-cdk-lib==2.275.0", "constructs>=10", "jsii"])
def test_synth_time_packages_are_refused(tmp_path: Path, line: str) -> None:
    # GIVEN requirements naming a package that only synthesis needs
    path = requirements(tmp_path, f"tabulate\n{line}\n")
    # WHEN they are read
    # THEN the error names the requirement, the file and the rule
    with pytest.raises(AssetError) as info:
        read_requirements(path, what=WHAT)
    assert f"requirement {line!r}" in str(info.value) and "synth-time package" in str(info.value)
    assert str(path) in str(info.value)


def test_pyproject_project_dependencies_are_read(tmp_path: Path) -> None:
    # GIVEN a pyproject.toml with [project].dependencies
    path = requirements(tmp_path, "[project]\nname = 'api'\ndependencies = ['tabulate>=0.9', 'boto3']\n", "pyproject.toml")
    # WHEN it is read
    wanted = read_requirements(path, what=WHAT)
    # THEN its dependencies are the lines (boto3 skipped)
    assert wanted.lines == ("tabulate>=0.9",) and wanted.skipped == ("boto3",)


def test_a_missing_include_is_rejected(tmp_path: Path) -> None:
    # GIVEN a requirements file including a file that does not exist
    path = requirements(tmp_path, "-r nowhere.txt\n")
    # WHEN it is read
    # THEN the error names the missing file
    with pytest.raises(AssetError, match=r"requirements file '.*nowhere\.txt' \(included with -r\) does not exist"):
        read_requirements(path, what=WHAT)


def test_an_include_cycle_is_rejected(tmp_path: Path) -> None:
    # GIVEN two files including each other
    requirements(tmp_path, "-r b.txt\n", "a.txt")
    requirements(tmp_path, "-r a.txt\n", "b.txt")
    # WHEN one is read
    # THEN the error names the file that includes itself
    with pytest.raises(AssetError, match=r"requirements file '.*a\.txt' includes itself"):
        read_requirements(tmp_path / "a.txt", what=WHAT)


def test_invalid_pyproject_is_rejected(tmp_path: Path) -> None:
    # GIVEN a pyproject.toml that is not TOML
    path = requirements(tmp_path, "[project\n", "pyproject.toml")
    # WHEN it is read
    # THEN the error names the file and the rule
    with pytest.raises(AssetError, match=r"pyproject\.toml' is not valid TOML"):
        read_requirements(path, what=WHAT)


# Platform ------------------------------------------------------------------------------------------
def test_platform_tags_cover_manylinux2014_up_to_the_runtimes_glibc() -> None:
    # GIVEN the runtime's glibc (Amazon Linux 2023: 2.34) and Python version
    # WHEN the pip platforms of each architecture are listed
    arm, x86 = pip_platforms("arm64"), pip_platforms("x86_64")
    # THEN they start at manylinux2014 and include every manylinux_2_X up to 2.34, for that machine
    assert arm[0] == "manylinux2014_aarch64" and arm[-1] == f"manylinux_2_{lambda_platform.LAMBDA_GLIBC_MINOR}_aarch64"
    assert "manylinux_2_28_aarch64" in arm and all(t.endswith("_aarch64") for t in arm)
    assert x86[0] == "manylinux2014_x86_64" and all(t.endswith("_x86_64") for t in x86)
    # AND the Python version is the one of the pinned runtime (PYTHON_3_13 -> 3.13)
    assert _defaults.LAMBDA_RUNTIME == "PYTHON_" + lambda_platform.LAMBDA_PYTHON_VERSION.replace(".", "_")


def test_an_unknown_architecture_is_rejected() -> None:
    # GIVEN an architecture name Lambda does not have
    # WHEN its platforms are asked for
    # THEN the error names it and the allowed ones
    with pytest.raises(AssetError, match=r"architecture 'riscv64' must be 'arm64' or 'x86_64'"):
        pip_platforms("riscv64")


# Installs ------------------------------------------------------------------------------------------
def test_a_package_without_a_wheel_for_the_platform_fails_naming_package_platform_and_python(
    tmp_path: Path, wheelhouse: Path
) -> None:
    # GIVEN a package that publishes an x86_64 wheel only
    wanted = read_requirements(requirements(tmp_path, "fastnative==1.0\n"), what=WHAT)
    # WHEN it is installed for an arm64 function
    with pytest.raises(AssetError) as info:
        install(wanted, architecture="arm64", what=WHAT)
    # THEN the error names the package, the platform, the Python version and the remedy
    message = str(info.value)
    assert "no wheel of 'fastnative==1.0'" in message and "linux aarch64" in message and "CPython 3.13" in message
    assert "--only-binary=:all:" in message and "Remedy:" in message and "cp313" in message
    # AND nothing half-installed is left in the cache
    assert not [p for p in (cache_root() / "python-deps").iterdir() if not p.name.endswith(".lock")]


def test_the_same_package_installs_for_the_platform_it_has_a_wheel_for(tmp_path: Path, wheelhouse: Path) -> None:
    # GIVEN the x86_64-only package
    wanted = read_requirements(requirements(tmp_path, "fastnative==1.0\npurehelper\n"), what=WHAT)
    # WHEN it is installed for an x86_64 function
    first = install(wanted, architecture="x86_64", what=WHAT)
    # THEN its files are in the target directory, without compiled files or scripts
    files = sorted(p.relative_to(first.directory).as_posix() for p in first.directory.rglob("*") if p.is_file())
    assert "fastnative/__init__.py" in files and "purehelper.py" in files
    assert not [f for f in files if f.endswith(".pyc") or f.startswith("bin/")]
    assert first.directory.is_relative_to(cache_root() / "python-deps") and not first.cached
    # AND a second install of the same set comes from the cache, keyed by the same digest
    again = install(wanted, architecture="x86_64", what=WHAT)
    assert again.cached and again.directory == first.directory and again.key == first.key
    # AND another architecture or Python version is another cache entry
    assert install(read_requirements(requirements(tmp_path, "purehelper\n"), what=WHAT), architecture="arm64",
                   what=WHAT).key != first.key


def test_parallel_installs_of_one_set_install_it_once(tmp_path: Path, wheelhouse: Path) -> None:
    # GIVEN one requirement set and three threads installing it at the same time
    wanted = read_requirements(requirements(tmp_path, "purehelper==2.0\n"), what=WHAT)
    results = []
    threads = [threading.Thread(target=lambda: results.append(install(wanted, architecture="arm64", what=WHAT)))
               for _ in range(3)]
    # WHEN they run
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN exactly one ran pip; the others waited for the lock and reused its result
    assert sorted(r.cached for r in results) == [False, True, True]
    assert len({r.directory for r in results}) == 1
    meta = json.loads((results[0].directory.parent / "complete.json").read_text(encoding="utf-8"))
    assert meta["python"] == "3.13" and meta["platforms"][0] == "manylinux2014_aarch64"


def test_a_version_that_does_not_exist_names_the_versions_that_do(tmp_path: Path, wheelhouse: Path) -> None:
    # GIVEN a pin on a version of a pure package that was never released
    wanted = read_requirements(requirements(tmp_path, "purehelper==9.9\n"), what=WHAT)
    # WHEN it is installed
    # THEN the error names the requirement, the platform and the versions there are
    with pytest.raises(AssetError,
                       match=r"no release of 'purehelper==9\.9' .* linux aarch64 .* CPython 3\.13: 2\.0\. Remedy"):
        install(wanted, architecture="arm64", what=WHAT)


def test_pip_failures_other_than_a_missing_wheel_show_pips_output(tmp_path: Path, wheelhouse: Path) -> None:
    # GIVEN a requirement line pip cannot parse
    wanted = read_requirements(requirements(tmp_path, "not a requirement!\n"), what=WHAT)
    # WHEN it is installed
    # THEN the error names the requirements file, the platform and carries pip's message
    with pytest.raises(AssetError,
                       match=r"pip could not install the requirements of '.*requirements\.txt' for linux aarch64, CPython 3\.13"):
        install(wanted, architecture="arm64", what=WHAT)


def test_cache_root_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no explicit cache directory but an XDG cache home
    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    # WHEN the cache root is asked for
    # THEN it is under XDG_CACHE_HOME; CONSTRUCTS_LIB_CACHE_DIR overrides it; without both, ~/.cache
    assert cache_root() == (tmp_path / "xdg" / "constructs_lib").resolve()
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "mine"))
    assert cache_root() == (tmp_path / "mine").resolve()
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == (tmp_path / "home" / ".cache" / "constructs_lib").resolve()
    assert os.environ["HOME"] == str(tmp_path / "home")

"""Packaging: contract files and model JSON are read across library versions.

A producer and a consumer repository upgrade constructs_lib when each chooses, so what one version
writes the other must read (docs/releases.md). The earlier version is 0.1.0 as of commit
:data:`EARLIER` (pinned by hash): its tree is exported with ``git archive``, built into a wheel
offline (``--no-build-isolation``) once per run and installed into a virtualenv of its own; this
version is the checkout. ``cross_version_probe.py`` runs on each side: one writes the model JSON,
the contract file, a consumer's slice file and the published contract of three models (every
declaration both versions know, a global table, a consumer view), the other reads them and checks
them against its own — same models, same fingerprints, no slice break either way (a consumer on
one version, its producer on the other). A document whose format version is past what a reader
reads is refused by both, the message naming both versions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from _apps import REPO, Clock, clean_env, make_venv
from once_per_run import once_per_run

import constructs_lib

pytestmark = pytest.mark.e2e

CLOCK_TITLE = "contracts across library versions"
#: The earlier release point: 0.1.0's last commit (its contract, slice and model JSON formats are
#: version 1, as this version's are).
EARLIER = "a7ea233bd9a2198a1dfc2bfa05919546bf1ef34d"
EARLIER_VERSION = "0.1.0"
PROBE = Path(__file__).resolve().with_name("cross_version_probe.py")
MODELS = ("shop", "saas", "view")


def _build_earlier(directory: Path) -> None:
    """The earlier commit's wheel: its tree exported from git, built offline."""
    archive = directory / "earlier.tar"
    with archive.open("wb") as out:
        done = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", EARLIER], stdout=out,
                              stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        pytest.fail(f"git archive {EARLIER} failed (this test needs the repository's history: in a shallow clone, "
                    f"`git fetch --unshallow`): {done.stderr.decode(errors='replace')}", pytrace=False)
    with tarfile.open(archive) as tar:
        tar.extractall(directory / "src", filter="data")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet",
                    "-w", str(directory / "dist"), str(directory / "src")], check=True, env=clean_env(),
                   capture_output=True, cwd=directory)


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Path:
    """The interpreter of a virtualenv holding the earlier version's wheel (built once per run)."""
    built = once_per_run(tmp_path_factory, f"earlier-wheel-{EARLIER[:12]}", _build_earlier)
    (wheel,) = (built / "dist").glob("constructs_lib-*.whl")
    clock.note("earlier wheel", f"{wheel.name} from {EARLIER[:12]}")
    venv = make_venv(tmp_path_factory.mktemp("earlier-venv") / "venv", wheel, clock, step="earlier venv")
    return venv / "bin" / "python"


def probe(clock: Clock, python: Path | str, command: str, directory: Path, venv: Path | None = None) -> Any:
    done = clock.run(f"{command} (probe)", [python, PROBE, command, directory], cwd=directory,
                     env=clean_env(venv))
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def documents(earlier: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> dict[str, Any]:
    """Each version's documents, in a directory of their own, and who wrote them."""
    out = {}
    for side, python in (("earlier", earlier), ("this", Path(sys.executable))):
        directory = tmp_path_factory.mktemp(f"written-by-{side}")
        venv = earlier.parents[1] if side == "earlier" else None
        written = probe(clock, python, "write", directory, venv)
        out[side] = {"directory": directory, "python": python, "venv": venv, **written}
    assert out["earlier"]["version"] == EARLIER_VERSION and "earlier-venv" in out["earlier"]["package"]
    assert out["this"]["version"] == constructs_lib.__version__ and Path(out["this"]["package"]).is_relative_to(REPO)
    return out


@pytest.mark.parametrize(("writer", "reader"), [("this", "earlier"), ("earlier", "this")])
def test_what_one_version_writes_the_other_reads(documents: dict[str, Any], clock: Clock, writer: str,
                                                 reader: str) -> None:
    # GIVEN the documents one version wrote for each model
    # WHEN the other version reads them and checks them against its own
    side = documents[reader]
    found = probe(clock, side["python"], "read", documents[writer]["directory"], side["venv"])["read"]
    # THEN each model reads back equal, with the same fingerprints, and no slice breaks: not the
    # writer's consumer against the reader's producer, nor the reader's consumer against the
    # writer's contract file or published contract
    clock.note(f"{writer} -> {reader}", ", ".join(f"{m}: {'ok' if _clean(found[m]) else 'FAILED'}" for m in MODELS))
    assert {m: _clean(found[m]) for m in MODELS} == dict.fromkeys(MODELS, True), json.dumps(found, indent=1)


def _clean(facts: dict[str, Any]) -> bool:
    return all(value is True or value == [] for value in facts.values())


def test_both_versions_compute_the_same_fingerprints(documents: dict[str, Any]) -> None:
    # GIVEN the contract fingerprints each version wrote for the same declarations
    # THEN they are equal, entity by entity and index by index
    for model in ("shop", "saas"):
        assert documents["earlier"]["write"][model]["fingerprints"] == documents["this"]["write"][model]["fingerprints"]


@pytest.mark.parametrize("reader", ["earlier", "this"])
def test_a_newer_format_version_is_refused_naming_both_versions(documents: dict[str, Any], clock: Clock,
                                                                reader: str) -> None:
    # GIVEN each document with its format version one past what the reader reads
    side = documents[reader]
    found = probe(clock, side["python"], "newer", documents["this"]["directory"], side["venv"])["newer"]
    # THEN every one is refused with the package's typed error, naming the version it holds and the
    # newest the reader reads
    assert {kind: facts["error"] if facts["refused"] else None for kind, facts in found.items()} == {
        "model": "ModelFormatError", "contract": "ContractVersionError", "slice": "SliceError",
        "published": "SliceError"}
    for kind, facts in found.items():
        given, supported = str(facts["given"]), str(facts["supported"])
        assert f"version {given}" in facts["message"] and supported in facts["message"].replace(given, ""), (kind, facts)

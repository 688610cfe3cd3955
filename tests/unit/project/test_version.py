"""One version: ``pyproject.toml``'s, ``constructs_lib.__version__`` and the changelog's latest release.

The changelog follows Keep a Changelog: ``## [X.Y.Z] - YYYY-MM-DD`` per release, newest first; the
release being prepared (the version in pyproject.toml) is dated ``Unreleased`` until it is cut
(docs/releases.md, "Cutting a release").
"""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

import constructs_lib

REPO = Path(__file__).resolve().parents[3]
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2}|Unreleased)$", flags=re.MULTILINE)


def releases(text: str) -> list[tuple[str, str]]:
    """(version, date) of each release heading of a changelog, in the order written."""
    return RELEASE.findall(text)


def test_pyproject_the_package_and_the_changelog_name_one_version() -> None:
    # GIVEN the version pyproject.toml builds, the one the package reports and the changelog
    built = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    listed = releases((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))
    # WHEN they are compared
    # THEN they are one version, the changelog's latest release
    assert listed, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' release heading"
    assert built == constructs_lib.__version__ == listed[0][0], (built, constructs_lib.__version__, listed[0])


def test_the_changelog_lists_each_release_once_newest_first_from_0_1_0() -> None:
    # GIVEN the changelog's release headings
    listed = releases((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))
    versions = [tuple(int(part) for part in version.split(".")) for version, _ in listed]
    # THEN each release is listed once, newest first, back to the first version; each is dated, no
    # date earlier than the next older one's, but the newest, which may be the one being prepared
    assert versions == sorted(set(versions), reverse=True)
    assert "Unreleased" not in [day for _, day in listed[1:]]
    days = [date.fromisoformat(day) for _, day in listed if day != "Unreleased"]
    assert days == sorted(days, reverse=True)
    assert listed[-1][0] == "0.1.0"


def test_a_changelog_that_drifts_is_caught() -> None:
    # GIVEN changelogs whose latest heading is not the version, or has no date
    # THEN the reader sees what the check compares
    assert releases("## [0.3.0] - Unreleased\n\n## [0.2.0] - 2026-11-28\n") == [
        ("0.3.0", "Unreleased"), ("0.2.0", "2026-11-28")]
    assert releases("## [0.3.0]\n## 0.2.0 - 2026-11-28\n## [0.1.0] - soon\n") == []

"""The lint gate's typing half (docs/adr/0050-lint-gate.md): mypy runs strict over the package in
``make lint`` (not here: the suite stays fast), and ``type: ignore`` comments stay few, each
naming its error code and saying why."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "constructs_lib"
#: The most ``type: ignore`` comments the package may hold.
IGNORE_BUDGET = 10
IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<rest>.*)$")
#: ``# type: ignore[code, ...]  # reason``: one or more error codes, then a reason comment.
JUSTIFIED = re.compile(r"^\[[a-z][a-z-]*(?:,\s*[a-z][a-z-]*)*\]\s+#\s*\S")


def ignores(root: Path) -> list[tuple[str, str]]:
    """``(file:line, rest of the comment after "type: ignore")`` of every ignore under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = IGNORE.search(line)
            if match:
                found.append((f"{path.relative_to(root.parent)}:{number}", match["rest"]))
    return found


def test_mypy_is_configured_strict_over_the_package() -> None:
    # GIVEN pyproject.toml and the Makefile
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]

    # THEN mypy is strict, flags stale ignores, checks the package for 3.11, and `make lint` runs it bare
    assert config["strict"] is True
    assert config["warn_unused_ignores"] is True
    assert config["packages"] == ["constructs_lib"]
    assert config["python_version"] == "3.11"
    assert re.search(r"^\t\$\(PY\) -m mypy$", lint, re.M), lint


def test_the_checker_finds_unjustified_and_surplus_ignores(tmp_path: Path) -> None:
    # GIVEN a package with one justified ignore, one without a code and one without a reason
    (tmp_path / "m.py").write_text(
        "a = 1  # type: ignore[assignment]  # why\nb = 2  # type: ignore\nc = 3  # type: ignore[misc]\n",
        encoding="utf-8",
    )
    # WHEN its ignores are listed
    found = ignores(tmp_path)

    # THEN all three are found and only the first passes
    assert [bool(JUSTIFIED.match(rest)) for _, rest in found] == [True, False, False]


def test_type_ignores_stay_within_budget_and_are_justified() -> None:
    # GIVEN every `type: ignore` in the package
    found = ignores(PACKAGE)

    # THEN there are at most IGNORE_BUDGET, each with an error code and a reason comment
    unjustified = [where for where, rest in found if not JUSTIFIED.match(rest)]
    assert not unjustified, f"{len(unjustified)} type: ignore without [code] and a # reason: {unjustified}"
    assert len(found) <= IGNORE_BUDGET, f"{len(found)} type: ignore comments (budget {IGNORE_BUDGET})"

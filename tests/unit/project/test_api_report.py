"""The public API report (api/, scripts/api_report.py) is the sources' API, and the policy holds.

The report is regenerated with griffe from the sources and compared with the committed files; a
difference fails, naming what was added, changed or removed and what to do (docs/releases.md).
A removal or an incompatible change of a released name is refused unless the name was deprecated
or the major version changes; what was never released may change. About ten seconds (the report is
generated a few times).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from scripts import api_report as report

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return report.generate()


def test_the_committed_report_is_the_sources_api(generated: dict[str, str]) -> None:
    # GIVEN the report generated from the sources and the committed one
    differences = report.check(generated, report.read_committed())
    # THEN they are the same (else: what differs, and what to do)
    assert not differences, "\n\n".join(report.explain(name, c) for name, c in differences.items())


def test_every_package_the_api_reference_covers_has_its_report(generated: dict[str, str]) -> None:
    # GIVEN the packages the API reference covers (tests/unit/project/test_api_reference.py)
    source = (REPO / "tests" / "unit" / "project" / "test_api_reference.py").read_text(encoding="utf-8")
    covered = next(ast.literal_eval(node.value) for node in ast.parse(source).body
                   if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "COVERED")
    # THEN each has a section in a report, and the command line its own file
    sectioned = {module for modules in report.REPORTS.values() for module in modules}
    assert set(covered) <= sectioned
    assert set(generated) == {*report.REPORTS, "cli"}
    counts = report.names_per_report(generated)
    assert counts["constructs_lib.runtime"] > 150 and counts["cli"] >= 12, counts


def test_the_report_lists_kinds_signatures_fixtures_options_and_deprecations(generated: dict[str, str]) -> None:
    # GIVEN the generated reports
    runtime, testing, cli = generated["constructs_lib.runtime"], generated["constructs_lib.testing"], generated["cli"]
    # THEN a class shows its members' signatures, a fixture its decorator, a verb its options
    assert "class TableClient(QueryMethods):" in runtime
    assert "    def put(self, entity: str, item: Mapping[str, Any], *" in runtime
    assert '@pytest.fixture(scope="session")\ndef dynamodb_local(' in testing
    assert "[contract verify]\n  TARGET\n  --against FILE|ssm:/prefix (required)\n" in cli
    # AND the deprecated names with where they went and the version removing them
    assert ("# deprecated OutOfScopeError -> constructs_lib.runtime.exceptions.OutOfScopeError "
            "(since 0.2.0, removed in 1.0.0)") in runtime


# The policy ------------------------------------------------------------------------------------------
def stub(version: str, body: str, *, module: str = "pkg") -> str:
    return report.header(module, version, "the public API") + f"\n# module {module}\n" + body


OLD = stub("0.2.0", """__all__ = ['Client', 'helper', 'LIMIT', 'scan']
LIMIT: int = 10
class Client:
    def __init__(self, name: str, *, retries: int = 3) -> None: ...
    def get(self, key: str) -> dict: ...
    def fresh(self) -> None: ...  # since 0.3.0
def helper(a: int, b: int = 1) -> int: ...
def scan(a: int, limit: int = 0, page: int = 1) -> None: ...  # parameters since 0.3.0: limit, page
""")


@pytest.mark.parametrize(("new", "refused"), [
    pytest.param(OLD.replace("0.2.0", "0.3.0"), [], id="unchanged"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("retries: int = 3)", "retries: int = 3, timeout: float = 1.0)"),
                 [], id="optional-parameter-added"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("    def fresh(self) -> None: ...  # since 0.3.0\n", ""),
                 [], id="unreleased-member-removed"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("def helper(a: int, b: int = 1) -> int: ...\n", "")
                 .replace("'helper', ", ""),
                 ["pkg.helper: Public object was removed (in the API since 0.1.0)"], id="released-function-removed"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("def helper(a: int, b: int = 1)", "def helper(a: int, b: int)"),
                 ["pkg.helper(b): Parameter is now required (in the API since 0.1.0)"], id="parameter-made-required"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("def get(self, key: str)", "def get(self, key: str, table: str)"),
                 ["pkg.Client.get(table): Parameter was added as required (in the API since 0.1.0)"],
                 id="required-parameter-added"),
    pytest.param(OLD.replace("0.2.0", "1.0.0").replace("def helper(a: int, b: int = 1) -> int: ...\n", "")
                 .replace("'helper', ", ""), [], id="removed-in-a-major-version"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("def helper(a: int, b: int = 1) -> int: ...\n", "")
                 .replace("'helper', ", "") + "# deprecated helper -> pkg.tools.helper (since 0.3.0, removed in 1.0.0)\n",
                 [], id="moved-to-the-deprecated-names"),
    pytest.param(OLD.replace("0.2.0", "0.3.0") + "# deprecated old -> pkg.new (since 0.2.0, removed in 1.0.0)\n",
                 ["pkg.old: deprecated now, so its deprecation is since 0.3.0, not 0.2.0"], id="deprecation-backdated"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("def scan(a: int, limit: int = 0, page: int = 1)",
                                                       "def scan(a: int, page: int = 1, size: int = 9)"),
                 [], id="unreleased-parameters-removed-or-moved"),
    pytest.param(OLD.replace("0.2.0", "0.3.0").replace("limit: int = 0", "limit: int"),
                 ["pkg.scan(limit): Parameter is now required (in the API since 0.1.0)"],
                 id="unreleased-parameter-made-required"),
])
def test_what_the_policy_refuses(new: str, refused: list[str]) -> None:
    # GIVEN the committed report of a package and the one its changed sources give
    # WHEN they are compared
    comparison = report.compare(OLD, new)
    # THEN exactly the changes the policy forbids are refused, each naming the object and the rule
    assert comparison.refused == refused


def test_marks_say_when_an_object_and_its_later_parameters_appeared() -> None:
    # GIVEN a line's mark written for an object of 0.3.0 with parameters of 0.4.0 and 0.5.0
    written = report.mark("0.3.0", {"b": "0.4.0", "c": "0.5.0", "d": "0.4.0"})
    # THEN it reads back the same, and strips off the line
    assert written == "  # since 0.3.0; parameters since 0.4.0: b, d; parameters since 0.5.0: c"
    assert report.parse_mark(f"def f(a, b, c, d): ...{written}") == ("0.3.0", {"b": "0.4.0", "c": "0.5.0", "d": "0.4.0"})
    assert report.strip_mark(f"def f(a, b, c, d): ...{written}") == "def f(a, b, c, d): ..."
    assert report.mark(None, {}) == "" and report.parse_mark("x = 1") == (None, {})
    # AND a committed report's parameters get their mark, else their function's version
    assert report.parameter_since(OLD)["pkg.scan"] == {"a": "0.1.0", "limit": "0.3.0", "page": "0.3.0"}


def test_a_deprecated_name_goes_only_in_the_version_announced() -> None:
    # GIVEN a report holding a name deprecated in 0.2.0 for removal in 1.0.0
    old = OLD + "# deprecated Old -> pkg.Client (since 0.2.0, removed in 1.0.0)\n"
    # WHEN a 0.3.0 drops it, and when 1.0.0 does
    early, on_time = report.compare(old, OLD.replace("0.2.0", "0.3.0")), report.compare(old, OLD.replace("0.2.0", "1.0.0"))
    # THEN the early removal is refused, naming the announced version, and the one in 1.0.0 is not
    assert early.refused == ["pkg.Old: deprecated since 0.2.0, to be removed in 1.0.0, not in 0.3.0"]
    assert early.removed == ["pkg.Old (deprecated)"]
    assert on_time.refused == []
    # AND a deprecation the version being prepared added may still be taken back
    unreleased = OLD.replace("0.2.0", "0.3.0")
    assert report.compare(unreleased + "# deprecated Old -> pkg.Client (since 0.3.0, removed in 1.0.0)\n",
                          unreleased).refused == []


CLI_OLD = report.header("cli", "0.2.0", "the command line") + """
[export]
  TARGET
  --format {workbench} = 'workbench'
  --output/-o FILE
"""


@pytest.mark.parametrize(("new", "refused"), [
    pytest.param(CLI_OLD.replace("0.2.0", "0.3.0") + "  --pretty\n", [], id="option-added"),
    pytest.param(CLI_OLD.replace("0.2.0", "0.3.0") + "[fresh]  # since 0.3.0\n  TARGET\n  --x X (required)\n", [],
                 id="verb-added"),
    pytest.param(CLI_OLD.replace("0.2.0", "0.3.0").replace("  --output/-o FILE\n", ""),
                 ["export --output/-o: removed from the command line (in it since 0.1.0)"], id="option-removed"),
    pytest.param(CLI_OLD.replace("0.2.0", "0.3.0") + "  --table NAME (required)\n",
                 ["export --table: a new required argument of 'export'"], id="required-option-added"),
    pytest.param(CLI_OLD.replace("0.2.0", "0.3.0").replace("--output/-o FILE", "--output/-o FILE (required)"),
                 ["export --output/-o: an optional argument made required"], id="option-made-required"),
])
def test_what_the_policy_refuses_on_the_command_line(new: str, refused: list[str]) -> None:
    # GIVEN the committed command-line report and a changed one WHEN compared
    # THEN exactly the removals and new requirements are refused
    assert report.compare(CLI_OLD, new, cli=True).refused == refused


def test_a_differing_report_says_what_changed_and_what_to_do() -> None:
    # GIVEN a comparison with every kind of difference
    comparison = report.compare(OLD, OLD.replace("0.2.0", "0.3.0").replace("def helper(a: int, b: int = 1)",
                                                                           "def helper(a: int)")
                                .replace("LIMIT: int = 10", "LIMIT: int = 10\nSIZE: int = 4"))
    # WHEN it is explained
    text = report.explain("pkg", comparison)
    # THEN the message names each name and the way out
    assert "added: pkg.SIZE" in text and "changed: pkg.helper" in text
    assert "pkg.helper(b): Parameter was removed" in text
    assert "deprecate it instead" in text and "make api-report" in text


def test_write_refuses_a_forbidden_change_and_writes_an_allowed_one(tmp_path: Path) -> None:
    # GIVEN a copy of the committed report where the sources have lost a released name
    directory = tmp_path / "api"
    shutil.copytree(REPO / "api", directory)
    runtime = directory / "constructs_lib.runtime.api"
    text = runtime.read_text(encoding="utf-8")
    lost = text.replace("__all__ = ['GRANULARITIES', 'Granularity', 'MAX_BUCKETS', 'bucket', 'bucket_range']\n",
                        "__all__ = ['GRANULARITIES', 'Granularity', 'MAX_BUCKETS', 'bucket', 'bucket_range', 'gone']\n"
                        "def gone(a: int) -> int: ...\n")
    assert lost != text
    runtime.write_text(lost, encoding="utf-8")
    # WHEN it is written  THEN the writer refuses and leaves the file as it was
    assert report.main(["--write"], directory=directory) == 1
    assert runtime.read_text(encoding="utf-8") == lost
    # AND a report that only lacks additions (a package's whole file) is written, its names marked
    # as new in this version, and then checks clean
    runtime.write_text(text, encoding="utf-8")
    (directory / "constructs_lib.codegen.api").unlink()
    assert report.main(["--write"], directory=directory) == 0
    assert report.main([], directory=directory) == 0
    written = (directory / "constructs_lib.codegen.api").read_text(encoding="utf-8")
    assert f"def generate(model: Model, *, target: str | None = None) -> str: ...  # since {report.current_version()}" \
        in written

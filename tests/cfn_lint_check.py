"""cfn-lint's errors and warnings on a template file, with its rules loaded once per process.

``cfnlint.api.lint_file`` builds a new ``Runner`` for every file, and the runner imports and
instantiates every rule again: about 0.4 s of CPU per call, half of linting a stack's template.
The cfn-lint command line loads the rules once for all the templates it is given; this does the
same for every template a test process lints (tests/synth/test_cfn_lint.py, tests/examples), each
file still linted on its own with cfn-lint's default configuration, as ``lint_file`` does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any


@cache
def _rules() -> Any:
    """cfn-lint's default rules (what ``Runner`` loads for a configuration without options)."""
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner import Runner

    return Runner(ConfigMixIn([])).rules


def lint_matches(template_file: Path) -> list[Any]:
    """Every cfn-lint match on *template_file* (what ``cfnlint.api.lint_file`` returns)."""
    from cfnlint.api import lint_file
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner.template.runner import run_template_by_file_paths

    if not template_file.is_file():
        return lint_file(template_file)  # its "template file not found" match
    return list(run_template_by_file_paths(ConfigMixIn(["--template", str(template_file)]), _rules()))


def lint_findings(template_file: Path) -> list[str]:
    """cfn-lint's errors and warnings (``E``/``W`` rules; informational ``I`` rules are not
    reported) on *template_file*, as readable lines."""
    return [
        f"{m.rule.id} {m.message} ({'/'.join(map(str, getattr(m, 'path', []) or []))})"
        for m in lint_matches(template_file)
        if m.rule.id[:1] in ("E", "W")
    ]

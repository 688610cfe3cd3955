"""One line per long-running test in pytest's terminal summary, shown without ``-s``.

The model-based tests report what they compared (examples, steps, checks); a soak's counts are
read from the end of its output rather than from captured stdout.
"""

from __future__ import annotations

from typing import Any

import pytest

PLUGIN_NAME = "constructs_lib-run-summary"


class RunSummary:
    """Collects lines during the session and writes them in the terminal summary."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(line)


def report(config: pytest.Config, line: str) -> None:
    """Add ``line`` to the session's terminal summary."""
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if plugin is None:
        plugin = RunSummary()
        config.pluginmanager.register(plugin, PLUGIN_NAME)
    plugin.lines.append(line)

"""``--ooda-fragment-coverage``: the session's :class:`~pytest_ooda.fragment_coverage.
FragmentCoverage` fed from the collected config files and printed at the end; workers
under pytest-xdist ship their data to the controller through ``workeroutput``, and only
the controller prints."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.fragment_coverage import FragmentCoverage

__all__ = ["WORKEROUTPUT_KEY", "FragmentCoverageReporter", "register"]

WORKEROUTPUT_KEY = "ooda_fragment_coverage"
_CONFIG_SUFFIXES = (".yml", ".yaml")


class FragmentCoverageReporter:
    """pytest plugin object for ``--ooda-fragment-coverage``; register it once per session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.coverage = FragmentCoverage()
        self.is_worker = hasattr(config, "workerinput")
        if config.pluginmanager.hasplugin("xdist") and not self.is_worker:
            config.pluginmanager.register(_XdistController(self.coverage), "ooda-fragcov-xdist")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.coverage.start()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        seen: set[Path] = set()
        for item in session.items:
            path = Path(item.path)
            if path.suffix in _CONFIG_SUFFIXES and path not in seen:
                seen.add(path)
                self.coverage.register_config_file(path)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.coverage.stop()
        if self.is_worker:
            workeroutput: dict[str, Any] = getattr(self.config, "workeroutput")  # noqa: B009
            workeroutput[WORKEROUTPUT_KEY] = self.coverage.to_data()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.is_worker:
            return
        terminalreporter.write_sep("-", "ooda fragment coverage")
        for line in self.coverage.report_lines(rootdir=self.config.rootpath):
            terminalreporter.write_line(line)


class _XdistController:
    """Merges what each xdist worker observed (hook only exists when xdist is installed)."""

    def __init__(self, coverage: FragmentCoverage) -> None:
        self.coverage = coverage

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        data = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if isinstance(data, Mapping):
            self.coverage.merge_data(data)


def register(config: pytest.Config) -> FragmentCoverageReporter:
    """Install the fragment-coverage plugin object for this session (idempotent)."""
    existing = config.pluginmanager.get_plugin("ooda-fragment-coverage")
    if isinstance(existing, FragmentCoverageReporter):
        return existing
    reporter = FragmentCoverageReporter(config)
    config.pluginmanager.register(reporter, "ooda-fragment-coverage")
    return reporter

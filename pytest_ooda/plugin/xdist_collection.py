"""Under pytest-xdist the controller never collects, its workers do: the collection line
(``ooda: 3 procedures, 7 scenarios in 1 config file``) is printed from the first
worker's node ids. Registered only when pytest-xdist is installed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence


class XdistCollection:
    """The controller's collection line, once."""

    def __init__(self) -> None:
        self._printed = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if self._printed:
            return
        self._printed = True
        from pytest_ooda.plugin.report import collection_line

        line = collection_line(ids)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if line and reporter is not None:
            reporter.write_line(line)

"""The pytest plugin (entry point ``ooda``): options, markers, hooks and fixtures.

Everything here is wiring: a session in a project without procedure files imports the
library's namespace (``pytest_ooda/__init__``) and this package's option, state and
fixture modules, and none of the rest (the YAML parser, templates, scenarios, the
syrupy extension). The work lives in the package's modules — :mod:`.options` (the
option table and settings), :mod:`.state` (session state), :mod:`.nodes` (collectors
and items), :mod:`.session` (session-level hook bodies), :mod:`.snapshot` (the syrupy
extension), :mod:`.scenarios` (replay and live runs), :mod:`.report` (what the plugin
prints), :mod:`.fixtures` (the fixture objects) and :mod:`.fragment_coverage` —
imported inside the hooks when first needed. ``-p no:ooda`` turns all of it off.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.errors import OodaError
from pytest_ooda.plugin.fixtures import HttpAIStub, Runner, ScriptFactory, WorkspaceFactory
from pytest_ooda.plugin.options import add_options, collects, keep_default_off_md, read_settings
from pytest_ooda.plugin.state import (
    LIVE_ATTRIBUTE,
    LIVE_REPORT,
    PLUGIN_STATE,
    SKIP_AT_ITEM,
    LiveReport,
    PluginState,
    deselect_unrequested_live,
    live_requested,
)
from pytest_ooda.settings import (
    AI_CMD,
    AI_CMD_ALIAS,
    AI_OUTPUT,
    BUILTIN,
    EXECUTOR,
    FRAGMENT_COVERAGE,
    MAX_COST,
    MAX_TOKENS,
    SHARD,
)

#: The fixtures' types, for users' annotations (``ooda_runner: Runner``).
__all__ = ["HttpAIStub", "Runner", "ScriptFactory", "WorkspaceFactory"]

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from pytest_ooda.config import Config


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, args: list[str]
) -> Generator[None, None, None]:
    from pytest_ooda.plugin.options import check_option_names, check_separated_values

    # Before any conftest loads from a rootdir a swallowed option value may have moved.
    check_separated_values(args, early_config.invocation_params.dir)
    yield
    # Once the initial conftests have registered their own options, before pytest
    # parses the command line: a misspelt --ooda-* option gets the closest one.
    check_option_names(args, early_config)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "live: runs a procedure against the real AI command; only runs when selected with -m live",
    )
    settings = read_settings(config)
    config.stash[PLUGIN_STATE] = PluginState(settings)
    if settings[EXECUTOR] != "local":
        # A cluster makes the live runs: the session is its controller.
        from pytest_ooda.plugin import cluster

        cluster.configure(config, settings[EXECUTOR], settings.label("executor"))
    if not hasattr(config, "workerinput") and live_requested(config):
        # The process that sees every report (xdist's controller, or the only one), in a
        # session that may run live items (they are deselected otherwise).
        from pytest_ooda.plugin import measure

        config.pluginmanager.register(measure.LiveRuns(config), "ooda-live-runs")
    if settings[SHARD] is not None:
        from pytest_ooda.plugin import measure

        config.pluginmanager.register(measure.Shard(), "ooda-shard")
    if settings[FRAGMENT_COVERAGE]:
        from pytest_ooda.plugin import fragment_coverage

        fragment_coverage.register(config)
    if config.pluginmanager.hasplugin("syrupy"):
        keep_default_off_md(config.option)
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_ooda.plugin import report

        config.pluginmanager.register(report.XdistReporting(), "ooda-xdist")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not collects(parent.config.stash[PLUGIN_STATE].settings, file_path):
        return None
    from pytest_ooda.plugin.nodes import ConfigFile

    collector: ConfigFile = ConfigFile.from_parent(parent, path=file_path)
    return collector


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: the built-ins must be in the list before -k/-m deselection and before
    # syrupy records the collected items.
    state = config.stash[PLUGIN_STATE]
    builtin = state.settings[BUILTIN]
    if state.collected_files or builtin:
        from pytest_ooda.plugin import session as hooks

        hooks.add_builtin_items(session, items)
        hooks.fail_orphan_scenarios(config, items)
    # Also the user's own `@pytest.mark.live` tests, with or without procedure files.
    deselect_unrequested_live(config, items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    # A live item skipped for want of an AI command is reported at its scenario file,
    # not at the plugin line that noticed.
    outcome = yield
    live = item.stash.get(LIVE_REPORT, None)
    if live is not None and call.when == "call":
        # The run's record, or (a resumed item) the earlier run that stands for it.
        setattr(outcome.get_result(), LIVE_ATTRIBUTE, live)
    if item.stash.get(SKIP_AT_ITEM, False):
        report = outcome.get_result()
        if report.skipped and isinstance(report.longrepr, tuple):
            path, line, _ = item.reportinfo()
            report.longrepr = (str(path), (line or 0) + 1, report.longrepr[2])


@pytest.hookimpl(hookwrapper=True)
def pytest_report_to_serializable(report: pytest.TestReport) -> Generator[None, Any, None]:
    # The one serialisation of a live run's report: xdist sends reports as JSON.
    outcome = yield
    data = outcome.get_result()
    live = getattr(report, LIVE_ATTRIBUTE, None)
    if isinstance(data, dict) and isinstance(live, LiveReport):
        data[LIVE_ATTRIBUTE] = live.to_json()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # trylast: after syrupy has deleted unused snapshots.
    state = session.config.stash[PLUGIN_STATE]
    state.close()
    if session.config.getoption("update_snapshots", False):
        from pytest_ooda.plugin import session as hooks

        hooks.prune_snapshot_dirs(session.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    from pytest_ooda.plugin import report

    return report.header_lines(config.stash[PLUGIN_STATE].settings)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    from pytest_ooda.plugin import report

    return report.collection_lines(config.stash[PLUGIN_STATE])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def ooda_config(pytestconfig: pytest.Config) -> Config:
    """The resolved config for the session (all tiers; respects ``--ooda-config``)."""
    try:
        return pytestconfig.stash[PLUGIN_STATE].session_config()
    except OodaError as error:
        from pytest_ooda.plugin import report

        message = report.format_error(error, root=pytestconfig.rootpath)
    # Outside the except block, so the report is the message alone, with no chained error.
    pytest.fail(message, pytrace=False)


@pytest.fixture
def ooda_runner(pytestconfig: pytest.Config, ooda_config: Config, tmp_path: Path) -> Runner:
    """The real loop runner bound to ``ooda_config`` and the ``--ooda-ai-cmd*`` options."""
    from pytest_ooda.plugin import fixtures

    settings = pytestconfig.stash[PLUGIN_STATE].settings
    return fixtures.Runner(
        ooda_config,
        ai_cmd=settings[AI_CMD],
        ai_cmd_alias=settings[AI_CMD_ALIAS],
        workdir=tmp_path,
        ai_output=settings[AI_OUTPUT],
        max_cost=settings[MAX_COST],
        max_tokens=settings[MAX_TOKENS],
    )


@pytest.fixture
def ooda_script() -> ScriptFactory:
    """Build a scripted AI backend: outputs, ``(output, exit_code)`` pairs or callables."""
    from pytest_ooda.plugin import fixtures

    return fixtures.ScriptFactory()


@pytest.fixture
def ooda_workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> WorkspaceFactory:
    """``ooda_workspace(src=None)``: a temp copy of ``src`` (or an empty dir), git-initialised."""
    from pytest_ooda.plugin import fixtures

    return fixtures.WorkspaceFactory(tmp_path_factory, base=Path(request.path).parent)


@pytest.fixture
def ooda_http_ai() -> Iterator[HttpAIStub]:
    """A ``responses``-backed stub for the HTTP backends: scripted replies, recorded requests."""
    from pytest_ooda.plugin import fixtures

    with fixtures.HttpAIStub() as stub:
        yield stub

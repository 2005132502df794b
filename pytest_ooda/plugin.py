"""The pytest plugin (entry point ``ooda``): options, ini keys, markers, hooks and fixtures.

Everything here is wiring. Collection and items live in :mod:`pytest_ooda.collect`,
prompt snapshots in :mod:`pytest_ooda.snapshot`, terminal output in
:mod:`pytest_ooda.reporting`, live runs in :mod:`pytest_ooda.live` and the fixture
objects in :mod:`pytest_ooda.fixtures`. ``-p no:ooda`` turns all of it off.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import collect, fixtures, reporting
from pytest_ooda.collect import (
    DRIFT_MODES,
    PLUGIN_STATE,
    RECORD_MODES,
    OptionSpec,
    PluginSettings,
    PluginState,
)
from pytest_ooda.errors import OodaError
from pytest_ooda.snapshot import keep_default_off_md

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pytest_ooda.config import Config

#: Every option, declared once: a ``--ooda-<name>`` flag (dest ``ooda_<name>``) and, where
#: it makes sense in a config file, an ``ooda_<name>`` ini key. ``OptionSpec.read`` applies
#: command line > ini > default.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "config",
        "workspace config file for fixtures and live runs, collected too "
        "(default: ./ooda-config.yml)",
        metavar="PATH",
    ),
    OptionSpec(
        "builtin",
        "also collect the packaged built-in procedures",
        kind="bool",
        default=False,
    ),
    OptionSpec("ai_cmd", "AI command for live runs and ooda_runner", metavar="CMD"),
    OptionSpec("ai_cmd_alias", "AI command alias for live runs and ooda_runner", metavar="NAME"),
    OptionSpec(
        "record_mode",
        "record live runs into scenario files: none (default), once (only scenarios "
        "with no iterations), new (also drifted ones), all",
        choices=RECORD_MODES,
        default="none",
    ),
    OptionSpec(
        "drift",
        "when a scenario's recorded prompt differs from the current one: fail "
        "(default), warn or ignore",
        choices=DRIFT_MODES,
        default="fail",
    ),
    OptionSpec(
        "fragment_coverage",
        "report which fragment files and template branches the session composed",
        kind="bool",
        default=False,
    ),
    OptionSpec(
        "lint_severity",
        "override a lint rule's severity for the config items, RULE=LEVEL with LEVEL "
        "error, warning, info or off (repeatable; beats the config's lint: section)",
        kind="args",
        metavar="RULE=LEVEL",
    ),
    OptionSpec(
        "procedure_files",
        "globs (relative to the rootdir) of procedure config files to collect",
        kind="args",
        cli=False,
        default=("ooda-config.yml", "procedures/*.yml", "procedures/*.yaml"),
    ),
    OptionSpec(
        "scenario_dir",
        "root of scenario files, <root>/<procedure>/<name>.yml "
        "(default: scenarios/ next to each config file)",
        cli=False,
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ooda", "pytest-ooda")
    for spec in OPTIONS:
        spec.register(group, parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "live: runs a procedure against the real AI command; only runs when selected with -m live",
    )
    read = {spec.name: spec.read_sourced(config) for spec in OPTIONS}
    settings = PluginSettings.from_values(
        {name: value for name, (value, _) in read.items()},
        sources={name: source for name, (_, source) in read.items()},
        rootpath=config.rootpath,
        inipath=config.inipath,
        invocation_dir=config.invocation_params.dir,
    )
    config.stash[PLUGIN_STATE] = PluginState(settings)
    config.pluginmanager.register(reporting.LiveSummary(), "ooda-live-summary")
    if settings.fragment_coverage:
        _register_fragment_coverage(config)
    if config.pluginmanager.hasplugin("syrupy"):
        keep_default_off_md(config.option)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(reporting.XdistReporting(), "ooda-xdist")


def _register_fragment_coverage(config: pytest.Config) -> None:
    """Hook point for ``--ooda-fragment-coverage``.

    :mod:`pytest_ooda.fragment_coverage` owns the report; ``register(config)`` installs
    its own plugin object (session start/finish, terminal summary, xdist merge).
    """
    from pytest_ooda import fragment_coverage

    fragment_coverage.register(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collect.collect_file(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: the built-ins must be in the list before -k/-m deselection and before
    # syrupy records the collected items.
    collect.add_builtin_items(session, items)
    collect.warn_orphan_scenarios(config, items)
    collect.deselect_unrequested_live(config, items)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # trylast: after syrupy has deleted unused snapshots.
    collect.finish_session(session.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return reporting.header_lines(config.stash[PLUGIN_STATE].settings)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    return reporting.collection_lines(config.stash[PLUGIN_STATE])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def ooda_config(pytestconfig: pytest.Config) -> Config:
    """The resolved config for the session (all tiers; respects ``--ooda-config``)."""
    try:
        return pytestconfig.stash[PLUGIN_STATE].session_config()
    except OodaError as error:
        message = reporting.format_error(error, root=pytestconfig.rootpath)
    # Outside the except block, so the report is the message alone, with no chained error.
    pytest.fail(message, pytrace=False)


@pytest.fixture
def ooda_runner(
    pytestconfig: pytest.Config, ooda_config: Config, tmp_path: Path
) -> fixtures.Runner:
    """The real loop runner bound to ``ooda_config`` and the ``--ooda-ai-cmd*`` options."""
    settings = pytestconfig.stash[PLUGIN_STATE].settings
    return fixtures.Runner(
        ooda_config,
        ai_cmd=settings.ai_cmd,
        ai_cmd_alias=settings.ai_cmd_alias,
        workdir=tmp_path,
    )


@pytest.fixture
def ooda_script() -> fixtures.ScriptFactory:
    """Build a scripted AI backend: outputs, ``(output, exit_code)`` pairs or callables."""
    return fixtures.ScriptFactory()


@pytest.fixture
def ooda_workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> fixtures.WorkspaceFactory:
    """``ooda_workspace(src=None)``: a temp copy of ``src`` (or an empty dir), git-initialised."""
    return fixtures.WorkspaceFactory(tmp_path_factory, base=Path(request.path).parent)


@pytest.fixture
def ooda_http_ai() -> Iterator[fixtures.HttpAIStub]:
    """A ``responses``-backed stub for the HTTP backends: scripted replies, recorded requests."""
    with fixtures.HttpAIStub() as stub:
        yield stub

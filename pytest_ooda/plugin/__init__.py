"""The pytest plugin's entry point (``pytest11``: ``ooda``): the options, the ``live``
marker, the hooks every session needs and the fixtures — a reader finds every entry
point here.

Every pytest session of everyone who installs pytest-ooda runs this module, so it
imports only what registering the options (the settings table,
:mod:`pytest_ooda.settings`, generated into ``--ooda-*`` options and ini keys and read
command line > environment > ini file) and recognising a procedure file need. The
library is imported when the first procedure file is collected (:mod:`.collection`,
imported in ``pytest_collect_file``) or a fixture is used. Each feature is a module of
this package with its own plugin object, registered in ``pytest_configure`` only when
the session asks for it, as pytest's own features are: live items, the results log,
resume, early stopping, a shard, a cluster, fragment coverage, pruning snapshot
directories. ``-p no:ooda`` turns all of it off.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda import settings as ooda_settings
from pytest_ooda._types import SCENARIO_SUFFIXES
from pytest_ooda.errors import OodaError, UsageError
from pytest_ooda.plugin.fixtures import HttpAIStub, Runner, ScriptFactory, WorkspaceFactory
from pytest_ooda.settings import (
    AI_CMD,
    AI_CMD_ALIAS,
    AI_OUTPUT,
    BUDGET,
    BUDGET_TOKENS,
    BUILTIN,
    CHANGED,
    CONFIG,
    DRIFT,
    EXECUTOR,
    FRAGMENT_COVERAGE,
    MATERIAL_DIRS,
    MAX_COST,
    MAX_TOKENS,
    RECORD_MODE,
    REPEAT,
    RESUME,
    SHARD,
)

#: The fixtures' types, for users' annotations (``ooda_runner: Runner``).
__all__ = ["HttpAIStub", "Runner", "ScriptFactory", "WorkspaceFactory"]

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator, Sequence

    from pytest_ooda.config import Config
    from pytest_ooda.settings import SessionSettings, Setting


#: The session's settings, decided once at ``pytest_configure``.
SESSION = pytest.StashKey["SessionSettings"]()


def add_options(parser: pytest.Parser) -> None:
    """Every row with a pytest flag or an ini key, under the ``pytest-ooda`` group."""
    group = parser.getgroup("ooda", "pytest-ooda")
    for row in ooda_settings.SETTINGS:
        if row.pytest is not None:
            group.addoption(row.pytest, dest=row.dest, default=None, help=row.help, **_action(row))
        if row.ini is not None:
            # Flags are read as text and checked by the row: pytest versions differ in
            # how (and when) they reject a bad "bool" ini value, and the error must name
            # the key.
            kind = "args" if row.kind == "list" else "string"
            parser.addini(row.ini, row.help, type=kind, default=None)  # type: ignore[arg-type]


def _action(row: Setting[Any]) -> dict[str, Any]:
    """How argparse takes the row's flag; the row checks the value it stores (so a
    wrong one gets the row's message, a near miss offered, as in ``ooda run``)."""
    if row.kind == "flag":
        return {"action": "store_true"}
    if row.kind == "optional":
        return {"nargs": "?", "const": row.const, "metavar": row.shown}
    return {"action": "append" if row.kind == "list" else "store", "metavar": row.shown}


def read_settings(config: pytest.Config) -> SessionSettings:
    """The session's settings: each row's value as given (command line > environment >
    ini file), decided by the table; a mistake is a ``pytest.UsageError`` naming the
    flag, the variable or the ini key."""
    table = ooda_settings.SETTINGS
    given: dict[str, ooda_settings.Given] = {}
    for row in table:
        found = _given(config, row)
        if found is not None:
            given[row.name] = found
    try:
        return ooda_settings.decide(
            given,
            root=config.rootpath,
            front="pytest",
            table=table,
            # Without -s nobody watches the agent: the config's show_ai_output is not asked.
            show_ai_output=config.getoption("capture", None) == "no",
        )
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _given(config: pytest.Config, row: Setting[Any]) -> ooda_settings.Given | None:
    """Row ``row`` as this session gives it, or ``None``. Paths given on the command
    line (or in the environment) are relative to the invocation directory, in an ini
    file to the ini file."""
    here = config.invocation_params.dir
    if row.pytest is not None:
        value = config.getoption(row.dest)
        if value is not None:
            return ooda_settings.Given(
                tuple(value) if row.kind == "list" else value, "cli", row.pytest, here
            )
    if row.env is not None and os.environ.get(row.env, "").strip():
        return ooda_settings.Given(
            os.environ[row.env].strip(), "env", f"environment variable {row.env}", here
        )
    if row.ini is None:
        return None
    label = f"ini option {row.ini}"
    try:
        value = config.getini(row.ini)
    except (ValueError, TypeError) as exc:
        raise pytest.UsageError(f"{label}: {exc}") from None
    if value in ("", [], None):
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return ooda_settings.Given(tuple(value) if row.kind == "list" else value, "ini", label, base)


def collects(session: SessionSettings, path: Path) -> bool:
    """Whether ``path`` is a procedure config file to collect: the ``--ooda-config``
    file, or a YAML file under the rootdir that one of the ``procedure_files`` globs
    matches."""
    named = session[ooda_settings.CONFIG]
    if named is not None and _same_file(path, named):
        return True
    if path.suffix not in SCENARIO_SUFFIXES:
        return False
    try:
        relative = path.relative_to(session.root).as_posix()
    except ValueError:
        return False
    return any(_glob_regex(glob).match(relative) for glob in session[ooda_settings.PROCEDURE_FILES])


def _glob_regex(glob: str) -> re.Pattern[str]:
    """A glob where ``*`` stays inside one directory and ``**/`` spans any number."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    # re.compile keeps the patterns it compiled: a glob is translated once per file.
    return re.compile("".join(out) + r"\Z")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_option_names(args: Sequence[str], config: pytest.Config) -> None:
    """Refuse an ``--ooda-*`` option no plugin or conftest registered, naming the
    closest of ours (``--ooda-repeats=5``: did you mean ``--ooda-repeat``?) instead of
    pytest's bare "unrecognized arguments". Run once the initial conftests have
    registered their options; an option is known when ``config.getoption`` knows its
    destination."""
    flags = [row.pytest for row in ooda_settings.SETTINGS if row.pytest is not None]
    for arg in args:
        if arg == "--":
            return
        flag = arg.partition("=")[0]
        if not flag.startswith("--ooda-") or flag in flags:
            continue
        try:
            config.getoption(flag.removeprefix("--").replace("-", "_"))
        except ValueError:
            from pytest_ooda._util import closest

            # Compared without the prefix all of them share.
            near = closest(flag.removeprefix("--ooda-"), [f[len("--ooda-") :] for f in flags])
            hint = (
                f"did you mean --ooda-{near}?"
                if near
                else "`pytest --help` lists pytest-ooda's options"
            )
            raise pytest.UsageError(f"unrecognized option {flag}; {hint}") from None


def check_separated_values(args: Sequence[str], cwd: Path) -> None:
    """Refuse ``--ooda-x VALUE`` (two words) when ``VALUE`` names an existing path.

    pytest chooses the rootdir and reads the ini file before any plugin's options are
    known: a separate value that is an existing path is taken for a test path there, which
    moves the rootdir and collects the wrong tests (often none). ``--ooda-x=VALUE`` is one
    word and safe. Values that are not paths (``--ooda-repeat 20``) are read correctly.
    """
    table = ooda_settings.SETTINGS
    flags = {row.pytest for row in table if row.pytest is not None and row.kind != "flag"}
    optional = {row.pytest: row.const for row in table if row.kind == "optional"}
    for index, arg in enumerate(args[:-1]):
        if arg == "--":
            return
        if arg not in flags:
            continue
        value = args[index + 1]
        if value.startswith("-") or not value:
            continue
        try:
            exists = (cwd / value).exists()
        except (OSError, ValueError):
            exists = False
        if exists and arg in optional:
            raise pytest.UsageError(
                f"{arg} {value}: {arg} takes its value in the same word ({arg}=VALUE); "
                f"alone, write it after the test paths or as {arg}={optional[arg]}"
            )
        if exists:
            raise pytest.UsageError(
                f"{arg} {value}: write {arg}={shlex.quote(value)} (one word). pytest "
                "reads a separate value that names an existing path as a test path before "
                "pytest-ooda's options are known, which moves the rootdir and collects the "
                "wrong tests."
            )


def mentions_live(markexpr: str) -> bool:
    return "live" in re.findall(r"[\w.-]+", markexpr or "")


def live_requested(config: pytest.Config) -> bool:
    """Whether ``-m`` names the ``live`` marker, so live items may run."""
    return mentions_live(str(config.getoption("markexpr", "") or ""))


def deselect_unrequested_live(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``live``-marked items run only when ``-m`` names the ``live`` marker."""
    if live_requested(config):
        return
    keep = [item for item in items if item.get_closest_marker("live") is None]
    if len(keep) == len(items):
        return
    dropped = [item for item in items if item.get_closest_marker("live") is not None]
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def keep_default_off_md(options: Any) -> None:
    """Add ``md`` to syrupy's ``--snapshot-ignore-file-extensions``.

    syrupy's ``snapshot`` fixture registers an assertion with the default (amber)
    extension before ours takes over, and amber's discovery treats every foreign file
    under ``<config dir>/__snapshots__`` as an unknown, unused collection: it would
    report our prompts as unused (``--collect-only``) and delete them on
    ``--snapshot-update`` wherever no prompt item claims them (e.g. next to the packaged
    built-ins). Ignoring ``.md`` in walks keeps amber away; our discovery does not walk.
    """
    current = getattr(options, "ignore_file_extensions", None)
    if current is None:
        options.ignore_file_extensions = ["md"]
    elif "md" not in current:
        options.ignore_file_extensions = [*current, "md"]


# --------------------------------------------------------------------------- hooks


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, args: list[str]
) -> Generator[None, None, None]:
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
    if settings[MATERIAL_DIRS] and config.inipath is None:
        raise pytest.UsageError(
            f"{settings.label(MATERIAL_DIRS.name)}: its directories are collected with the "
            "ini file, and this session has none (put the key in pytest.ini, tox.ini, "
            "setup.cfg or pyproject.toml's [tool.pytest.ini_options], or name the "
            "directories in an ooda-config.yml's material section)"
        )
    config.stash[SESSION] = settings
    register_features(config, settings)


def register_features(config: pytest.Config, settings: SessionSettings) -> None:
    """Each feature's plugin object, registered only when this session asks for it."""
    manager = config.pluginmanager
    if settings[EXECUTOR] != "local":
        # A cluster makes the live runs: the session is its controller.
        from pytest_ooda.plugin import cluster

        cluster.configure(config, settings[EXECUTOR], settings.label("executor"))
    if live_requested(config):
        from pytest_ooda.plugin import early_stop, live_items

        manager.register(live_items.LiveReports(), "ooda-live-reports")
        manager.register(early_stop.EarlyStop(config), "ooda-early-stop")
        if settings[RESUME]:
            from pytest_ooda.plugin import resume

            manager.register(resume.Resume(config), "ooda-resume")
        if not hasattr(config, "workerinput"):
            # The process that sees every report (xdist's controller, or the only one).
            from pytest_ooda.plugin import results_log

            manager.register(results_log.LiveRuns(config), "ooda-results-log")
        if settings[BUDGET] is not None or settings[BUDGET_TOKENS] is not None:
            from pytest_ooda.plugin import budget

            manager.register(budget.SessionBudget(config), "ooda-budget")
    if settings[CHANGED] is not None:
        from pytest_ooda.plugin import changed

        manager.register(changed.ChangedSelection(config), "ooda-changed")
    if settings[SHARD] is not None:
        from pytest_ooda.plugin import shard

        manager.register(shard.Shard(), "ooda-shard")
    if settings[FRAGMENT_COVERAGE]:
        from pytest_ooda.plugin import fragment_coverage

        fragment_coverage.register(config)
    if settings[BUILTIN]:
        from pytest_ooda.plugin import collection

        collection.register(config)
    if manager.hasplugin("syrupy"):
        # Before syrupy's session starts: its default extension never walks our files.
        keep_default_off_md(config.option)
    if manager.hasplugin("syrupy") and config.getoption("update_snapshots", False):
        from pytest_ooda.plugin import snapshots

        manager.register(snapshots.PruneAfterUpdate(), "ooda-prune-snapshots")
    if manager.hasplugin("xdist"):
        from pytest_ooda.plugin import xdist_collection

        manager.register(xdist_collection.XdistCollection(), "ooda-xdist")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path == parent.config.inipath and parent.config.stash[SESSION][MATERIAL_DIRS]:
        # The ini file's material directories: agent material without a procedure config.
        from pytest_ooda.plugin.material import IniMaterial

        return IniMaterial.from_parent(parent, path=file_path)
    if not collects(parent.config.stash[SESSION], file_path):
        return None
    # The first procedure file loads the library: collection and what it needs.
    from pytest_ooda.plugin import collection

    return collection.collect_file(parent, file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Also the user's own `@pytest.mark.live` tests, with or without procedure files.
    deselect_unrequested_live(config, items)


def pytest_report_header(config: pytest.Config) -> list[str]:
    from pytest_ooda import __version__

    settings = config.stash[SESSION]
    parts = [
        f"builtin={'on' if settings[BUILTIN] else 'off'}",
        f"record-mode={settings[RECORD_MODE]}",
        f"drift={settings[DRIFT]}",
    ]
    repeat, shard, config_file = settings[REPEAT], settings[SHARD], settings[CONFIG]
    if repeat is not None:
        parts.append(f"repeat={repeat}")
    if shard is not None:
        parts.append(f"shard={shard[0]}/{shard[1]}")
    if config_file is not None:
        from pytest_ooda._util import display_path

        parts.append(f"config={display_path(config_file, settings.root)}")
    return [f"ooda: pytest-ooda {__version__} ({', '.join(parts)})"]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def ooda_config(pytestconfig: pytest.Config) -> Config:
    """The resolved config for the session (all tiers; respects ``--ooda-config``)."""
    from pytest_ooda.config import load_config

    settings = pytestconfig.stash[SESSION]
    try:
        return load_config(
            settings[CONFIG], cwd=settings.root, overrides=settings.config_overrides()
        )
    except OodaError as error:
        from pytest_ooda.plugin import report

        message = report.format_error(error, root=pytestconfig.rootpath)
    # Outside the except block, so the report is the message alone, with no chained error.
    pytest.fail(message, pytrace=False)


@pytest.fixture
def ooda_runner(pytestconfig: pytest.Config, ooda_config: Config, tmp_path: Path) -> Runner:
    """The real loop runner bound to ``ooda_config`` and the ``--ooda-ai-cmd*`` options."""
    settings = pytestconfig.stash[SESSION]
    return Runner(
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
    return ScriptFactory()


@pytest.fixture
def ooda_workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> WorkspaceFactory:
    """``ooda_workspace(src=None)``: a temp copy of ``src`` (or an empty dir), git-initialised."""
    return WorkspaceFactory(tmp_path_factory, base=Path(request.path).parent)


@pytest.fixture
def ooda_http_ai() -> Iterator[HttpAIStub]:
    """A ``responses``-backed stub for the HTTP backends: scripted replies, recorded requests."""
    with HttpAIStub() as stub:
        yield stub

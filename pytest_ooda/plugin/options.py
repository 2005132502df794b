"""The plugin's side of the settings table (:mod:`pytest_ooda.settings`): its rows
registered as ``--ooda-*`` options and ini keys, each read command line > environment >
ini file, the session's settings decided from them (:func:`read_settings`), a
misspelt option name answered with the closest one, and whether a file is a procedure
file to collect (:func:`collects`).

Imports nothing of the library but the table: registering the options and recognising
a procedure file cost a pytest session no more.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda import settings
from pytest_ooda.errors import UsageError
from pytest_ooda.settings import Given, decide

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.settings import SessionSettings, Setting

#: Procedure config and scenario files are YAML.
SCENARIO_SUFFIXES = (".yml", ".yaml")


def add_options(parser: pytest.Parser) -> None:
    """Every row with a pytest flag or an ini key, under the ``pytest-ooda`` group."""
    group = parser.getgroup("ooda", "pytest-ooda")
    for row in settings.SETTINGS:
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
    table = settings.SETTINGS
    given: dict[str, Given] = {}
    for row in table:
        found = _given(config, row)
        if found is not None:
            given[row.name] = found
    try:
        return decide(
            given,
            root=config.rootpath,
            front="pytest",
            table=table,
            # Without -s nobody watches the agent: the config's show_ai_output is not asked.
            show_ai_output=config.getoption("capture", None) == "no",
        )
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _given(config: pytest.Config, row: Setting[Any]) -> Given | None:
    """Row ``row`` as this session gives it, or ``None``. Paths given on the command
    line (or in the environment) are relative to the invocation directory, in an ini
    file to the ini file."""
    here = config.invocation_params.dir
    if row.pytest is not None:
        value = config.getoption(row.dest)
        if value is not None:
            return Given(tuple(value) if row.kind == "list" else value, "cli", row.pytest, here)
    if row.env is not None and os.environ.get(row.env, "").strip():
        return Given(os.environ[row.env].strip(), "env", f"environment variable {row.env}", here)
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
    return Given(tuple(value) if row.kind == "list" else value, "ini", label, base)


def collects(session: SessionSettings, path: Path) -> bool:
    """Whether ``path`` is a procedure config file to collect: the ``--ooda-config``
    file, or a YAML file under the rootdir that one of the ``procedure_files`` globs
    matches."""
    named = session[settings.CONFIG]
    if named is not None and _same_file(path, named):
        return True
    if path.suffix not in SCENARIO_SUFFIXES:
        return False
    try:
        relative = path.relative_to(session.root).as_posix()
    except ValueError:
        return False
    return any(_glob_regex(glob).match(relative) for glob in session[settings.PROCEDURE_FILES])


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


def check_option_names(args: Sequence[str], config: pytest.Config) -> None:
    """Refuse an ``--ooda-*`` option no plugin or conftest registered, naming the
    closest of ours (``--ooda-repeats=5``: did you mean ``--ooda-repeat``?) instead of
    pytest's bare "unrecognized arguments". Run once the initial conftests have
    registered their options; an option is known when ``config.getoption`` knows its
    destination."""
    from pytest_ooda._util import closest

    flags = [row.pytest for row in settings.SETTINGS if row.pytest is not None]
    for arg in args:
        if arg == "--":
            return
        flag = arg.partition("=")[0]
        if not flag.startswith("--ooda-") or flag in flags:
            continue
        try:
            config.getoption(flag.removeprefix("--").replace("-", "_"))
        except ValueError:
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
    table = settings.SETTINGS
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

"""The plugin's options, declared once: the ``OPTIONS`` table, how each is read
(command line > ini > default) and checked, and the session's settings they make
(:func:`session_settings`, a :class:`pytest_ooda.live.SessionSettings`, the type
``ooda run`` fills from its flags too).

A leaf of the plugin package: it imports nothing of the library at module level, so
registering the options costs a pytest session nothing.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda._types import (
    AI_OUTPUTS,
    API_RECORDS,
    DRIFT_MODES,
    PROMPT_FORMATS,
    RECORD_MODES,
    REPLAY_COMMANDS,
    REPLAY_KINDS,
    DriftMode,
    RecordMode,
    parse_bool,
)
from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.settings import SessionSettings
    from pytest_ooda.variants import Variant

#: The vocabularies list their default first.
DEFAULT_RECORD_MODE: RecordMode = RECORD_MODES[0]
DEFAULT_DRIFT: DriftMode = DRIFT_MODES[0]
#: Procedure config and scenario files are YAML.
SCENARIO_SUFFIXES = (".yml", ".yaml")
#: Where the results log goes without ``--ooda-results`` (under the rootdir); the
#: first part is the directory given a ``.gitignore`` when the log creates it.
DEFAULT_RESULTS_DIR = (".ooda", "results")


@dataclass(frozen=True)
class OptionSpec:
    """One plugin option: flag ``--ooda-<name>`` (dest ``ooda_<name>``), ini ``ooda_<name>``."""

    name: str
    help: str
    #: "str", "bool", "args" (repeatable), or "optional": a flag whose value may be left
    #: out (``--ooda-record-api`` means ``const``).
    kind: str = "str"
    choices: tuple[str, ...] | None = None
    default: Any = None
    const: str | None = None
    cli: bool = True
    ini: bool = True
    metavar: str | None = None
    #: An environment variable that sets it too (beaten by the command line, beating
    #: the ini key).
    env: str | None = None

    @property
    def flag(self) -> str:
        return "--ooda-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "ooda_" + self.name

    def register(self, group: pytest.OptionGroup, parser: pytest.Parser) -> None:
        if self.cli:
            if self.kind == "bool":
                group.addoption(
                    self.flag, action="store_true", default=None, dest=self.dest, help=self.help
                )
            elif self.kind == "optional":
                group.addoption(
                    self.flag,
                    nargs="?",
                    const=self.const,
                    default=None,
                    dest=self.dest,
                    choices=self.choices,
                    metavar=self.metavar,
                    help=self.help,
                )
            else:
                group.addoption(
                    self.flag,
                    # Repeatable on the command line, like the ini key's list.
                    action="append" if self.kind == "args" else "store",
                    default=None,
                    dest=self.dest,
                    choices=self.choices,
                    metavar=self.metavar,
                    help=self.help,
                )
        if self.ini:
            # Booleans are read as strings and parsed here: pytest versions differ in how
            # (and when) they reject a bad "bool" ini value, and the error must name the key.
            ini_type = {"str": "string", "bool": "string", "args": "args", "optional": "string"}[
                self.kind
            ]
            parser.addini(self.dest, self.help, type=ini_type, default=None)  # type: ignore[arg-type]

    def read(self, config: pytest.Config) -> Any:
        """Command line > ini > default; a bad value is a ``UsageError`` naming the choices."""
        return self.read_sourced(config)[0]

    def read_sourced(self, config: pytest.Config) -> tuple[Any, str]:
        """The value and where it came from: ``"cli"``, ``"env"``, ``"ini"`` or
        ``"default"``."""
        value = config.getoption(self.dest) if self.cli else None
        source, label = "cli", self.flag
        if value is None and self.env is not None and os.environ.get(self.env, "").strip():
            source, label = "env", f"environment variable {self.env}"
            value = os.environ[self.env].strip()
        if value is None and self.ini:
            source, label = "ini", f"ini option {self.dest}"
            try:
                value = config.getini(self.dest)
            except (ValueError, TypeError) as exc:
                raise pytest.UsageError(f"{label}: {exc}") from None
            if value in ("", []):
                value = None
            elif self.kind == "bool" and isinstance(value, str):
                value = _parse_bool(value, label)
        if value is None:
            return self.default, "default"
        if self.kind == "args":
            return tuple(value), source
        if self.choices is not None and value not in self.choices:
            raise pytest.UsageError(
                f"{label}: invalid value {value!r} (choose from {', '.join(self.choices)})"
            )
        return value, source


def _parse_bool(text: str, label: str) -> bool:
    value = parse_bool(text)
    if value is None:
        raise pytest.UsageError(f"{label}: invalid truth value {text!r} (use true or false)")
    return value


def session_settings(
    values: Mapping[str, Any],
    *,
    rootpath: Path,
    inipath: Path | None,
    invocation_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
    capture: str | None = None,
) -> SessionSettings:
    """The session's settings from the options' ``values`` by option name, each checked
    (a ``UsageError`` naming the flag or ini key); ``sources`` says which came from the
    command line (paths there are relative to the invocation directory, in an ini file
    to it), and ``capture`` is pytest's ``--capture`` (``no``, ``-s``, streams what the
    agent prints)."""
    from pytest_ooda.settings import SessionSettings

    sources = sources or {}
    base = inipath.parent if inipath is not None else rootpath
    config_file = values.get("config")
    if config_file is not None:
        from_cli = sources.get("config") == "cli"
        config_file = ((invocation_dir or rootpath) if from_cli else base) / config_file
    scenario_dir = values.get("scenario_dir")
    if scenario_dir is not None:
        scenario_dir = base / scenario_dir
    labels = {
        spec.name: _option_label(spec.name, sources.get(spec.name, "default")) for spec in OPTIONS
    }
    _check_paths(config_file, scenario_dir, labels)
    procedure_files = tuple(values.get("procedure_files") or ())
    _check_globs(procedure_files, labels["procedure_files"])
    _check_ai_cmd(values.get("ai_cmd"), labels["ai_cmd"])
    results_dir = _results_dir(
        values.get("results"),
        labels["results"],
        base=(invocation_dir or rootpath) if sources.get("results") == "cli" else base,
        rootpath=rootpath,
    )
    default_results = results_dir == rootpath.joinpath(*DEFAULT_RESULTS_DIR)
    return SessionSettings(
        root=rootpath,
        config_file=config_file,
        ai_cmd=values.get("ai_cmd"),
        ai_cmd_alias=values.get("ai_cmd_alias"),
        ai_output=values.get("ai_output"),
        prompt_format=values.get("prompt_format"),
        max_cost=_budget(values.get("max_cost"), labels["max_cost"], float),
        max_tokens=_budget(values.get("max_tokens"), labels["max_tokens"], int),
        retries=_count(values.get("retries"), labels["retries"], minimum=0),
        # Without -s nobody watches the agent: the config's show_ai_output is not asked.
        show_ai_output=capture == "no",
        sandbox=_sandbox(values.get("sandbox"), labels["sandbox"]),
        record_mode=values.get("record_mode") or DEFAULT_RECORD_MODE,
        record_failures=bool(values.get("record_failures")),
        record_api=values.get("record_api"),
        variants=_variants(values.get("variant"), labels["variant"]),
        repeat=_repeat(values.get("repeat"), labels["repeat"]),
        repeat_from_cli=sources.get("repeat") == "cli",
        results_dir=results_dir,
        # The default .ooda/ is created with a .gitignore by whatever writes first.
        ignore_dir=rootpath / DEFAULT_RESULTS_DIR[0] if default_results else None,
        shard=_shard(values.get("shard"), labels["shard"]),
        max_concurrent=_count(values.get("max_concurrent"), labels["max_concurrent"]),
        resume=bool(values.get("resume")),
        stop_early=bool(values.get("stop_early")),
        builtin=bool(values.get("builtin")),
        drift=values.get("drift") or DEFAULT_DRIFT,
        fragment_coverage=bool(values.get("fragment_coverage")),
        lint_severity=_lint_severity(values.get("lint_severity"), labels["lint_severity"]),
        procedure_files=procedure_files,
        scenario_dir=scenario_dir,
        replay_commands=values.get("replay_commands") or REPLAY_COMMANDS[0],
        regrade=bool(values.get("regrade")),
        replay=values.get("replay"),
        labels=MappingProxyType(
            {
                **{name: label for name, label in labels.items() if label.startswith("ini ")},
                "show_ai_output": "-s",
            }
        ),
    )


def collects(settings: SessionSettings, path: Path) -> bool:
    """Whether ``path`` is a procedure config file to collect: the ``--ooda-config``
    file, or a YAML file under the rootdir that one of the ``procedure_files`` globs
    matches."""
    if settings.config_file is not None and _same_file(path, settings.config_file):
        return True
    if path.suffix not in SCENARIO_SUFFIXES:
        return False
    try:
        relative = path.relative_to(settings.root).as_posix()
    except ValueError:
        return False
    return any(_glob_regex(glob).match(relative) for glob in settings.procedure_files)


def _option_label(name: str, source: str) -> str:
    """How a message names an option: its flag, or its ini key when the ini set it."""
    if source == "ini":
        return f"ini option ooda_{name}"
    return "--ooda-" + name.replace("_", "-")


def _check_paths(
    config_file: Path | None, scenario_dir: Path | None, labels: Mapping[str, str]
) -> None:
    """A named config file or scenario root that is not there is a usage error, not an
    empty collection."""
    if config_file is not None and not config_file.is_file():
        what = "config file not found" if not config_file.exists() else "not a file"
        raise pytest.UsageError(f"{labels['config']}: {what}: {config_file}")
    if scenario_dir is not None and not scenario_dir.is_dir():
        what = "scenario directory not found" if not scenario_dir.exists() else "not a directory"
        raise pytest.UsageError(f"{labels['scenario_dir']}: {what}: {scenario_dir}")


def _check_globs(globs: Iterable[str], label: str) -> None:
    """Globs are matched against paths relative to the rootdir: an absolute one, or one
    climbing out with ``..``, could never match anything."""
    for glob in globs:
        if Path(glob).is_absolute() or glob.startswith(("/", "\\")) or ".." in Path(glob).parts:
            raise pytest.UsageError(
                f"{label}: {glob!r} can never match: globs are relative to the rootdir "
                "and stay inside it (set the rootdir higher, or name the file with "
                "--ooda-config)"
            )


def _check_ai_cmd(ai_cmd: str | None, label: str) -> None:
    if ai_cmd is None:
        return
    try:
        argv = shlex.split(ai_cmd)
    except ValueError as exc:
        raise pytest.UsageError(f"{label}: cannot split {ai_cmd!r} into arguments: {exc}") from None
    if not argv:
        raise pytest.UsageError(f"{label}: the AI command is empty")


def _budget(text: Any, label: str, kind: type[float] | type[int]) -> Any:
    """A budget option: an amount in US dollars > 0, or a token count >= 1."""
    if text is None:
        return None
    expected = "an amount in US dollars > 0" if kind is float else "an integer >= 1"
    try:
        value = kind(str(text).strip())
    except ValueError:
        raise pytest.UsageError(f"{label}: expected {expected}, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise pytest.UsageError(f"{label}: expected {expected}, got {text!r}")
    return value


def _sandbox(value: str | None, label: str) -> str | None:
    """A sandbox kind: a built-in one or one an installed plugin registers."""
    if value is None or not str(value).strip():
        return None
    from pytest_ooda.sandbox import OptionError, load_kind

    kind = str(value).strip()
    try:
        load_kind(kind)
    except OptionError as exc:
        raise pytest.UsageError(f"{label}: {exc.one_line()}") from None
    return kind


def _count(value: Any, label: str, *, minimum: int = 1) -> int | None:
    """A whole number option (``--ooda-retries 0``, ``--ooda-max-concurrent 4``)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or int(text) < minimum:
        raise pytest.UsageError(f"{label}: expected an integer >= {minimum}, got {value!r}")
    return int(text)


def _repeat(value: str | None, label: str) -> int | None:
    if value is None:
        return None
    # The same bound as a scenario's `repeat:`.
    from pytest_ooda.scenario import MAX_REPEAT

    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_REPEAT:
        raise pytest.UsageError(
            f"{label}: expected a number of runs from 1 to {MAX_REPEAT}, got {value!r}"
        )
    return int(text)


def _results_dir(value: str | None, label: str, *, base: Path, rootpath: Path) -> Path:
    if value is None:
        return rootpath.joinpath(*DEFAULT_RESULTS_DIR)
    if not str(value).strip():
        raise pytest.UsageError(f"{label}: expected a directory, got an empty value")
    directory = base / value
    if directory.exists() and not directory.is_dir():
        raise pytest.UsageError(f"{label}: not a directory: {directory}")
    return directory


def _variants(values: Iterable[str] | None, label: str) -> tuple[Variant, ...]:
    """``--ooda-variant NAME:KEY=VALUE,...`` entries, each checked up front; a name
    given twice is a mistake."""
    if not values:
        return ()
    from pytest_ooda.variants import parse_option

    found: dict[str, Variant] = {}
    for text in values:
        try:
            variant = parse_option(text)
        except OodaError as exc:
            raise pytest.UsageError(f"{label}: {exc}") from None
        if variant.name in found:
            raise pytest.UsageError(f"{label}: variant {variant.name!r} is given twice")
        found[variant.name] = variant
    return tuple(found.values())


def _shard(value: str | None, label: str) -> tuple[int, int] | None:
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if match is None:
        raise pytest.UsageError(f"{label}: expected K/N (share K of N, e.g. 2/4), got {value!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise pytest.UsageError(
            f"{label}: {value!r}: K must be from 1 to N and N at least 1 (e.g. 1/4 … 4/4)"
        )
    return index, count


def _lint_severity(
    values: Iterable[str] | None, label: str = "--ooda-lint-severity"
) -> tuple[str, ...]:
    """``--ooda-lint-severity`` / ``ooda_lint_severity`` entries, checked up front."""
    entries = tuple(values or ())
    if not entries:
        return entries
    from pytest_ooda import lint

    try:
        lint.parse_severity_overrides(entries, source=label)
    except OodaError as exc:
        raise pytest.UsageError(str(exc)) from None
    return entries


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
        "ai_output",
        "how the AI command's output is read for live runs and ooda_runner (default: as "
        "the command's own flags say, else text)",
        choices=AI_OUTPUTS,
    ),
    OptionSpec(
        "max_cost",
        "budget per live run in US dollars: a run stops (aborted) after the iteration "
        "that reaches it; applies with the scenario's and the config's, the smallest wins",
        metavar="USD",
    ),
    OptionSpec(
        "max_tokens",
        "budget per live run in tokens (input, output and cache): as --ooda-max-cost",
        metavar="N",
    ),
    OptionSpec(
        "record_mode",
        "record live runs into scenario files: none (default), once (only scenarios "
        "with no iterations), new (also drifted ones), all; once and new record only a "
        "run that met every per-run expectation (not an infrastructure error, a status "
        "other than expect.status, or a missed file, tool, command or judge check)",
        choices=RECORD_MODES,
        default=DEFAULT_RECORD_MODE,
    ),
    OptionSpec(
        "record_failures",
        "with --ooda-record-mode=once or new, record a failed run too (an infrastructure "
        "error, a status other than the scenario's expect.status, or any other per-run "
        "expectation missed)",
        kind="bool",
        default=False,
    ),
    OptionSpec(
        "record_api",
        "live runs record their model calls (the agent's API traffic, through a loopback "
        "proxy) into <scenario>.cassette.jsonl: all (the flag alone) or new (keep the "
        "cassette's, add what it lacks); `ooda help agent-replay`",
        kind="optional",
        choices=API_RECORDS,
        const=API_RECORDS[0],
    ),
    OptionSpec(
        "replay",
        "how scenario items replay: loop (the recorded iterations stand in for the agent) "
        "or agent (the real agent, its model calls answered from the scenario's cassette, "
        "for every scenario that has one); default: each scenario's replay:, else loop",
        choices=REPLAY_KINDS,
    ),
    OptionSpec(
        "drift",
        "when a scenario's recorded prompt differs from the current one: fail "
        "(default), warn or ignore",
        choices=DRIFT_MODES,
        default=DEFAULT_DRIFT,
    ),
    OptionSpec(
        "repeat",
        "run each live scenario N times, each run its own item live[name#k] in a fresh "
        "workspace (on the command line it beats a scenario's repeat:, which beats the "
        "ini key)",
        metavar="N",
    ),
    OptionSpec(
        "results",
        "directory of the results log of live runs: a <session>.jsonl file per session, "
        "one line per run (default: .ooda/results under the rootdir)",
        metavar="DIR",
    ),
    OptionSpec(
        "shard",
        "run only share K of N of the live items (a stable split by item id), e.g. 2/4 "
        "on the second of four CI machines",
        metavar="K/N",
        ini=False,
    ),
    OptionSpec(
        "retries",
        "tries of an iteration after an infrastructure error (rate limit, overload, 5xx, "
        "dropped connection, agent dying before any output); beats every retry: setting "
        "(default: the config's, else 2; 0 turns retrying off)",
        metavar="N",
    ),
    OptionSpec(
        "max_concurrent",
        "at most N live runs at once per agent command or API, across all xdist workers "
        "(the others wait; the progress line shows how long)",
        metavar="N",
    ),
    OptionSpec(
        "executor",
        "where live runs are made: local (default: this session, and its -n workers) or "
        "ENGINE:ADDRESS, a cluster this session controls: dask:tcp://HOST:8786 (what "
        "distributed.Client accepts), ray:auto, ray:HOST:6379 or ray:ray://HOST:10001 "
        "(what ray.init accepts), or an installed engine's; also OODA_EXECUTOR "
        "(`ooda help scale-out`)",
        metavar="ENGINE:ADDRESS",
        default="local",
        env="OODA_EXECUTOR",
    ),
    OptionSpec(
        "resume",
        "resume an interrupted measurement: runs the results directory already holds "
        "(same scenario, prompt and run number, not an error) are not run again",
        kind="bool",
        default=False,
    ),
    OptionSpec(
        "stop_early",
        "skip a gated scenario's remaining runs once a sequential test has settled its "
        "success_rate gate (as stop_early: true on every gate)",
        kind="bool",
        default=False,
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
        "prompt_format",
        "prompt layout of prompt items, scenarios and live runs: ooda (ours) or rooda "
        "(rooda's, byte for byte); default: each procedure's prompt_format",
        choices=PROMPT_FORMATS,
    ),
    OptionSpec(
        "sandbox",
        "where live runs (the agent and the verification commands) and replayed "
        "verification commands execute: none, bwrap, docker, or an installed plugin's "
        "kind; beats the config's and scenarios' sandbox: (their options for the same "
        "kind are kept; `ooda help sandbox`)",
        metavar="KIND",
    ),
    OptionSpec(
        "replay_commands",
        "whether replays (plain pytest) run scenarios' expect.commands: run (default; "
        "inside the configured sandbox) or skip",
        choices=REPLAY_COMMANDS,
        default=REPLAY_COMMANDS[0],
    ),
    OptionSpec(
        "variant",
        "also run every live scenario under a named variant NAME:KEY=VALUE,... with keys "
        "ai_cmd, ai_cmd_alias, model, prompt_format, ai_output, sandbox, param.NAME, "
        "fragment.OLD (=NEW path); items live[scenario@NAME#k] (repeatable)",
        kind="args",
        metavar="NAME:KEY=VALUE,...",
    ),
    OptionSpec(
        "regrade",
        "scenario replays ask expect.judge's judge again instead of using the recorded "
        "verdicts, and report the verdicts that flipped",
        kind="bool",
        default=False,
        ini=False,
    ),
    OptionSpec(
        "procedure_files",
        "globs (relative to the rootdir) of procedure config files to collect",
        kind="args",
        cli=False,
        default=("ooda-config.yml", "rooda-config.yml", "procedures/*.yml", "procedures/*.yaml"),
    ),
    OptionSpec(
        "scenario_dir",
        "root of scenario files, <root>/<procedure>/<name>.yml "
        "(default: scenarios/ next to each config file)",
        cli=False,
    ),
)


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


def check_separated_values(args: Sequence[str], cwd: Path) -> None:
    """Refuse ``--ooda-x VALUE`` (two words) when ``VALUE`` names an existing path.

    pytest chooses the rootdir and reads the ini file before any plugin's options are
    known: a separate value that is an existing path is taken for a test path there, which
    moves the rootdir and collects the wrong tests (often none). ``--ooda-x=VALUE`` is one
    word and safe. Values that are not paths (``--ooda-repeat 20``) are read correctly.
    """
    flags = {spec.flag for spec in OPTIONS if spec.cli and spec.kind != "bool"}
    optional = {spec.flag: spec.const for spec in OPTIONS if spec.kind == "optional"}
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

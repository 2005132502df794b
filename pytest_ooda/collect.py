"""Collection: procedure config files become collectors, procedures become item groups.

Per procedure (ids under the config file)::

    <procedure>::config              loads, renders, and is lint-clean at error severity
    <procedure>::prompt[<phase>]     observe/orient/decide/act/assembled vs its snapshot
    <procedure>::scenario[<name>]    a scenario replayed through the real loop runner
    <procedure>::live[<name>]        the same scenario against the real AI (marker ``live``)

A config file that does not load is one failing ``config`` item; one that declares no
procedure is one passing ``config`` item carrying its warnings. Prompt items are real
``pytest.Function``s requesting syrupy's ``snapshot`` fixture, because syrupy only tracks
functions; the other kinds are plain items so they stay out of syrupy's bookkeeping.
Session-wide settings and state live in ``config.stash[PLUGIN_STATE]``.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda import reporting
from pytest_ooda.errors import OodaError, ScenarioError
from pytest_ooda.reporting import ItemFailure
from pytest_ooda.snapshot import (
    PROMPT_PHASES,
    PromptSnapshotExtension,
    prune_empty_dirs,
    safe_name,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from pytest_ooda.compose import MappedText
    from pytest_ooda.config import Config, Procedure

RECORD_MODES = ("none", "once", "new", "all")
DRIFT_MODES = ("fail", "warn", "ignore")
SCENARIO_SUFFIXES = (".yml", ".yaml")
BUILTIN_NODEID = "ooda-builtin"
#: The four OODA phases (``config.PHASES``), without importing the config module early.
PHASES = PROMPT_PHASES[:4]
#: Under ``<rootdir>/__snapshots__/``: the packaged built-ins' snapshots (``--ooda-builtin``).
BUILTIN_SNAPSHOTS = "ooda-builtin"

# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class OptionSpec:
    """One plugin option: flag ``--ooda-<name>`` (dest ``ooda_<name>``), ini ``ooda_<name>``."""

    name: str
    help: str
    kind: str = "str"  # "str" | "bool" | "args"
    choices: tuple[str, ...] | None = None
    default: Any = None
    cli: bool = True
    ini: bool = True
    metavar: str | None = None

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
            ini_type = {"str": "string", "bool": "string", "args": "args"}[self.kind]
            parser.addini(self.dest, self.help, type=ini_type, default=None)  # type: ignore[arg-type]

    def read(self, config: pytest.Config) -> Any:
        """Command line > ini > default; a bad value is a ``UsageError`` naming the choices."""
        return self.read_sourced(config)[0]

    def read_sourced(self, config: pytest.Config) -> tuple[Any, str]:
        """The value and where it came from: ``"cli"``, ``"ini"`` or ``"default"``."""
        value = config.getoption(self.dest) if self.cli else None
        source, label = "cli", self.flag
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


_TRUE = frozenset({"1", "true", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "no", "n", "off"})


def _parse_bool(text: str, label: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise pytest.UsageError(f"{label}: invalid truth value {text!r} (use true or false)")


@dataclass(frozen=True)
class PluginSettings:
    """The resolved plugin options for one session."""

    rootpath: Path
    config_file: Path | None = None
    builtin: bool = False
    ai_cmd: str | None = None
    ai_cmd_alias: str | None = None
    record_mode: str = "none"
    drift: str = "fail"
    fragment_coverage: bool = False
    lint_severity: tuple[str, ...] = ()
    procedure_files: tuple[str, ...] = ()
    scenario_dir: Path | None = None

    @classmethod
    def from_values(
        cls,
        values: Mapping[str, Any],
        *,
        rootpath: Path,
        inipath: Path | None,
        invocation_dir: Path | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> PluginSettings:
        """``values`` by option name; ``sources`` says which came from the command line
        (paths there are relative to the invocation directory, in an ini file to it)."""
        base = inipath.parent if inipath is not None else rootpath
        config_file = values.get("config")
        if config_file is not None:
            from_cli = (sources or {}).get("config") == "cli"
            config_file = ((invocation_dir or rootpath) if from_cli else base) / config_file
        scenario_dir = values.get("scenario_dir")
        if scenario_dir is not None:
            scenario_dir = base / scenario_dir
        labels = {
            name: _option_label(name, (sources or {}).get(name, "default"))
            for name in ("config", "scenario_dir", "procedure_files", "ai_cmd", "lint_severity")
        }
        _check_paths(config_file, scenario_dir, labels)
        procedure_files = tuple(values.get("procedure_files") or ())
        _check_globs(procedure_files, labels["procedure_files"])
        _check_ai_cmd(values.get("ai_cmd"), labels["ai_cmd"])
        return cls(
            rootpath=rootpath,
            config_file=config_file,
            builtin=bool(values.get("builtin")),
            ai_cmd=values.get("ai_cmd"),
            ai_cmd_alias=values.get("ai_cmd_alias"),
            record_mode=values.get("record_mode") or "none",
            drift=values.get("drift") or "fail",
            fragment_coverage=bool(values.get("fragment_coverage")),
            lint_severity=_lint_severity(values.get("lint_severity"), labels["lint_severity"]),
            procedure_files=procedure_files,
            scenario_dir=scenario_dir,
        )

    def matches(self, path: Path) -> bool:
        """Whether ``path`` is a procedure config file to collect."""
        if self.config_file is not None and _same_file(path, self.config_file):
            return True
        if path.suffix not in SCENARIO_SUFFIXES:
            return False
        try:
            relative = path.relative_to(self.rootpath).as_posix()
        except ValueError:
            return False
        return any(_glob_regex(glob).match(relative) for glob in self.procedure_files)


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


def _lint_severity(
    values: Iterable[str] | None, label: str = "--ooda-lint-severity"
) -> tuple[str, ...]:
    """``--ooda-lint-severity`` / ``ooda_lint_severity`` entries, checked up front."""
    from pytest_ooda import lint

    entries = tuple(values or ())
    try:
        lint.parse_severity_overrides(entries, source=label)
    except OodaError as exc:
        raise pytest.UsageError(str(exc)) from None
    return entries


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(glob: str) -> re.Pattern[str]:
    """A glob where ``*`` stays inside one directory and ``**/`` spans any number."""
    cached = _GLOB_CACHE.get(glob)
    if cached is not None:
        return cached
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
    pattern = re.compile("".join(out) + r"\Z")
    _GLOB_CACHE[glob] = pattern
    return pattern


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@dataclass
class PluginState:
    """Per-session state (``config.stash[PLUGIN_STATE]``)."""

    settings: PluginSettings
    collected_files: set[Path] = field(default_factory=set)
    #: Collected config files that failed to load: their snapshots are left alone.
    broken_files: set[Path] = field(default_factory=set)
    counts: dict[str, int] = field(
        default_factory=lambda: {"files": 0, "procedures": 0, "scenarios": 0}
    )
    live_results: list[dict[str, Any]] = field(default_factory=list)
    _session_config: Config | None = None
    _scratch: Path | None = None

    def session_config(self) -> Config:
        """All tiers, as ``ooda run`` would see them from the rootdir (cached)."""
        if self._session_config is None:
            from pytest_ooda.config import load_config

            self._session_config = load_config(
                self.settings.config_file, cwd=self.settings.rootpath
            )
        return self._session_config

    def empty_dir(self) -> Path:
        """An empty directory for replays that touch no files (removed by ``close``)."""
        return self._scratch_dir("empty")

    def work_dir(self) -> Path:
        """The directory replays with files run in, emptied before each (see ``live``)."""
        return self._scratch_dir("work")

    def _scratch_dir(self, name: str) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="ooda-replay-"))
        path = self._scratch / name
        path.mkdir(exist_ok=True)
        return path

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


PLUGIN_STATE = pytest.StashKey[PluginState]()


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class LoadedFile:
    """A collected config file: its merged config and the procedures it declares."""

    path: Path
    config: Config
    declared: tuple[Procedure, ...]


def load_collected(path: Path) -> LoadedFile:
    """The file merged over the built-ins (no global config, no environment).

    Leaving out the environment and the global config keeps prompts and snapshots the
    same on every machine; merging over the built-ins makes a file that tweaks ``build``
    snapshot the ``build`` that actually runs.
    """
    from pytest_ooda.config import load_config

    target = path.resolve()
    # The packaged built-ins merged over themselves are themselves: one parse, not two.
    merge_builtins = target != builtin_config_path().resolve()
    config = load_config(path, cwd=path.parent, env={}, builtin=merge_builtins, global_config=False)
    declared = tuple(
        procedure
        for procedure in config.procedures.values()
        if procedure.location.file is not None and _resolved(procedure.location.file) == target
    )
    return LoadedFile(path, config, declared)


def _resolved(path: Path) -> Path:
    return Path(path).resolve()


def builtin_config_path() -> Path:
    from pytest_ooda.fragments import builtin_root

    return builtin_root() / "procedures" / "builtin.yml"


# --------------------------------------------------------------------------- hooks' bodies


def collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = parent.config.stash[PLUGIN_STATE]
    if not state.settings.matches(file_path):
        return None
    collector: ConfigFile = ConfigFile.from_parent(parent, path=file_path)
    return collector


def add_builtin_items(session: pytest.Session, items: list[pytest.Item]) -> None:
    """With ``--ooda-builtin``: collect the packaged built-ins unless already collected."""
    state = session.config.stash[PLUGIN_STATE]
    if not state.settings.builtin:
        return
    path = builtin_config_path()
    if path.resolve() in state.collected_files:
        return
    inside_root = path.resolve().is_relative_to(state.settings.rootpath.resolve())
    node = ConfigFile.from_parent(
        session, path=path, nodeid=None if inside_root else f"{BUILTIN_NODEID}/builtin.yml"
    )
    if not inside_root:
        # Outside the rootdir (an installed package): keep snapshots in the project,
        # never inside site-packages.
        node.snapshot_dir = (
            state.settings.rootpath
            / str(PromptSnapshotExtension.snapshot_dirname)
            / BUILTIN_SNAPSHOTS
        )
        node.read_only = True
    items.extend(session.genitems(node))


class ScenarioWarning(UserWarning):
    """Scenario files that no collected procedure picks up (a misspelt folder name)."""


def warn_orphan_scenarios(config: pytest.Config, items: Iterable[pytest.Item]) -> None:
    """Warn about ``<scenario root>/<name>/*.yml`` where no collected procedure is ``name``.

    Such scenarios never run, so a typo in the folder name would pass silently. Only
    checked when the whole tree was collected (no file or node id named on the command
    line), and not for a root shared with a config file that failed to load, whose
    procedures are unknown.
    """
    if any("::" in arg or Path(arg).is_file() for arg in config.args):
        return
    # Every xdist worker collects the same tree; one report is enough.
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    state = config.stash[PLUGIN_STATE]
    declared: dict[Path, set[str]] = {}
    for node in iter_procedure_nodes(items):
        if node.file_node.read_only:
            continue
        declared.setdefault(node.scenario_dir().parent, set()).add(node.procedure.name)
    broken_roots = {
        state.settings.scenario_dir or path.parent / "scenarios" for path in state.broken_files
    }
    for root, names in declared.items():
        if root in broken_roots or not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            if folder.name in names or folder.name.startswith(".") or not folder.is_dir():
                continue
            files = sorted(
                path
                for path in folder.iterdir()
                if path.suffix in SCENARIO_SUFFIXES and path.is_file()
            )
            if not files:
                continue
            close = difflib.get_close_matches(folder.name, sorted(names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            reporting.warn_at(
                ScenarioWarning(
                    f"{reporting.display_path(folder, config.rootpath)}/ holds "
                    f"{len(files)} scenario file(s) that never run: no collected procedure "
                    f"is named {folder.name!r}{hint}"
                ),
                files[0],
                1,
            )


def _mentions_live(markexpr: str) -> bool:
    return "live" in re.findall(r"[\w.-]+", markexpr or "")


def deselect_unrequested_live(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``live``-marked items run only when ``-m`` names the ``live`` marker."""
    if _mentions_live(str(config.getoption("markexpr", "") or "")):
        return
    keep = [item for item in items if item.get_closest_marker("live") is None]
    if len(keep) == len(items):
        return
    dropped = [item for item in items if item.get_closest_marker("live") is not None]
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def finish_session(config: pytest.Config) -> None:
    """Remove the session's scratch directory; after ``--snapshot-update``, drop snapshot
    directories left empty by deletions.

    Runs where syrupy deletes (a single process, or the xdist controller, which never
    collects), so the config directories come from the globs rather than collection.
    """
    config.stash[PLUGIN_STATE].close()
    if not config.getoption("update_snapshots", False) or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    settings = config.stash[PLUGIN_STATE].settings
    directories = {path.parent for path in config.stash[PLUGIN_STATE].collected_files}
    for glob in settings.procedure_files:
        directories.update(path.parent for path in settings.rootpath.glob(glob))
    if settings.config_file is not None:
        directories.add(settings.config_file.parent)
    directories.add(settings.rootpath)
    for directory in directories:
        prune_empty_dirs(directory / str(PromptSnapshotExtension.snapshot_dirname))


# --------------------------------------------------------------------------- collectors


class ConfigFile(pytest.File):
    """One procedure config file."""

    snapshot_dir: Path | None = None
    read_only: bool = False

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        state = self.config.stash[PLUGIN_STATE]
        state.collected_files.add(self.path.resolve())
        state.counts["files"] += 1
        try:
            loaded = load_collected(self.path)
        except OodaError as error:
            state.broken_files.add(self.path.resolve())
            return [BrokenConfigItem.from_parent(self, name="config", error=error)]
        state.counts["procedures"] += len(loaded.declared)
        if not loaded.declared:
            # A file of loop settings only, or one whose `procedures:` is misspelt: one
            # item, so its warnings are seen rather than the file silently yielding nothing.
            return [FileConfigItem.from_parent(self, name="config", loaded=loaded)]
        return [
            ProcedureNode.from_parent(self, name=procedure.name, loaded=loaded, procedure=procedure)
            for procedure in loaded.declared
        ]


class ProcedureNode(pytest.Collector):
    """The items of one procedure."""

    def __init__(self, *, loaded: LoadedFile, procedure: Procedure, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.procedure = procedure

    @property
    def file_node(self) -> ConfigFile:
        parent = self.parent
        assert isinstance(parent, ConfigFile)
        return parent

    def collect(self) -> Iterable[pytest.Item]:
        items: list[pytest.Item] = [ConfigItem.from_parent(self, name="config")]
        uses_syrupy = self.config.pluginmanager.hasplugin("syrupy")
        for phase in PROMPT_PHASES:
            items.append(
                PromptItem.from_parent(
                    self,
                    name=f"prompt[{phase}]",
                    callobj=_prompt_with_snapshot if uses_syrupy else _prompt_without_snapshot,
                    phase=phase,
                )
            )
        # One item pair per name: ``x.yml`` next to ``x.yaml`` would give two items the
        # same node id, which breaks -k, --lf and xdist; the pair fails instead.
        by_name: dict[str, list[Path]] = {}
        for path in self.scenario_files():
            by_name.setdefault(path.stem, []).append(path)
        self.config.stash[PLUGIN_STATE].counts["scenarios"] += len(by_name)
        for name, paths in by_name.items():
            clash = tuple(paths[1:])
            items.append(
                ScenarioItem.from_parent(
                    self, name=f"scenario[{name}]", scenario=paths[0], clash=clash
                )
            )
            live = LiveItem.from_parent(self, name=f"live[{name}]", scenario=paths[0], clash=clash)
            live.add_marker("live")
            items.append(live)
        return items

    def scenario_dir(self) -> Path:
        settings = self.config.stash[PLUGIN_STATE].settings
        root = settings.scenario_dir or self.file_node.path.parent / "scenarios"
        return root / self.procedure.name

    def scenario_files(self) -> list[Path]:
        directory = self.scenario_dir()
        if not directory.is_dir():
            return []
        return sorted(
            path
            for path in directory.iterdir()
            if path.suffix in SCENARIO_SUFFIXES and path.is_file() and not path.name.startswith(".")
        )


def _prompt_with_snapshot(snapshot: object) -> None:
    """Placeholder body: ``PromptItem.runtest`` does the work with the fixture value."""


def _prompt_without_snapshot() -> None:
    """Placeholder body used when syrupy is disabled (``-p no:syrupy``)."""


def _procedure_node(item: pytest.Item) -> ProcedureNode:
    parent = item.parent
    assert isinstance(parent, ProcedureNode)
    return parent


def _render_failure(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """Our own report for our failures; ``None`` defers to pytest's traceback."""
    error = excinfo.value
    if isinstance(error, ItemFailure):
        return str(error)
    if isinstance(error, OodaError):
        return reporting.format_error(error, root=item.config.rootpath)
    if isinstance(error, Warning) and type(error).__module__.startswith("pytest_ooda."):
        return reporting.format_warning_error(error, root=item.config.rootpath)
    # A bug, not a user mistake: show the traceback from our code onwards only.
    package = str(Path(__file__).parent)
    for index, entry in enumerate(excinfo.traceback):
        if str(entry.path).startswith(package):
            excinfo.traceback = excinfo.traceback[index:]
            break
    return None


class OodaItem(pytest.Item):
    """Base of the non-snapshot items: located at the procedure's YAML line."""

    @property
    def procedure_node(self) -> ProcedureNode:
        return _procedure_node(self)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = self.procedure_node
        return self.path, max(node.procedure.location.line - 1, 0), f"{node.name}::{self.name}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return _render_failure(self, excinfo) or super().repr_failure(excinfo)


class BrokenConfigItem(OodaItem):
    """Stands for a config file that failed to load: fails with the located error."""

    def __init__(self, *, error: OodaError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.error.line if self.error.file is not None else None
        return self.path, max((line or 1) - 1, 0), "config"

    def runtest(self) -> None:
        raise self.error


class FileConfigItem(pytest.Item):
    """A config file that loads but declares no procedure: passes, with its warnings."""

    def __init__(self, *, loaded: LoadedFile, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, "config"

    def runtest(self) -> None:
        from pytest_ooda import lint

        for text in self.loaded.config.warnings:
            reporting.warn_at(lint.LintWarning(text), root=self.config.rootpath)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return _render_failure(self, excinfo) or super().repr_failure(excinfo)


class ConfigItem(OodaItem):
    """The procedure loads and renders, and lint finds nothing at error severity."""

    def runtest(self) -> None:
        from pytest_ooda import lint

        node = self.procedure_node
        overrides = lint.parse_severity_overrides(
            self.config.stash[PLUGIN_STATE].settings.lint_severity
        )
        settings = lint.resolve_settings(node.loaded.config, severities=overrides)
        findings = lint.lint_procedure(node.loaded.config, node.procedure.name, settings=settings)
        root = self.config.rootpath
        errors = [finding for finding in findings if finding.severity == "error"]
        for finding in findings:
            if finding.severity == "warning":
                reporting.warn_at(
                    lint.LintWarning(finding.format(relative_to=root)),
                    finding.file,
                    finding.line,
                    root=root,
                )
        if node.loaded.declared and node.procedure is node.loaded.declared[0]:
            for text in node.loaded.config.warnings:
                reporting.warn_at(lint.LintWarning(text), root=root)
        if errors:
            raise ItemFailure(reporting.format_findings(errors, root=root))


class PromptItem(pytest.Function):
    """One composed phase (or the assembled prompt) compared with its Markdown snapshot."""

    def __init__(self, *, phase: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.phase = phase
        file_node = self.procedure_node.file_node
        if file_node.snapshot_dir is not None:
            self.ooda_snapshot_dir = file_node.snapshot_dir

    def compose(self) -> MappedText:
        """The text under test, with the source map naming each line's fragment."""
        from pytest_ooda.compose import MappedText, assemble_prompt_mapped, compose_phase_mapped
        from pytest_ooda.config import resolve_run_settings

        node = self.procedure_node
        procedure = node.procedure
        if self.phase == "assembled":
            limit = resolve_run_settings(
                node.loaded.config, procedure.name, require_ai=False
            ).max_iterations
            return assemble_prompt_mapped(procedure, iteration=1, max_iterations=limit)
        mapped = compose_phase_mapped(
            procedure.phases()[self.phase], procedure=procedure.name, phase=self.phase
        )
        # Stored as a proper text file: one trailing newline unless the phase is empty.
        return MappedText(mapped.text + "\n" if mapped.text else "", mapped.segments)

    def snapshot_path(self) -> Path:
        site = getattr(self, "ooda_snapshot_dir", None)
        if not isinstance(site, Path):
            site = self.path.parent / str(PromptSnapshotExtension.snapshot_dirname) / self.path.stem
        return site / safe_name(self.procedure_node.name) / f"{self.phase}.md"

    def runtest(self) -> None:
        snapshot = self.funcargs.get("snapshot")
        try:
            mapped = self.compose()
        except Exception as error:
            if snapshot is not None:
                self._keep_snapshot(snapshot)
            if isinstance(error, OodaError):
                phases = PHASES if self.phase == "assembled" else (self.phase,)
                raise locate_compose_error(error, self.procedure_node.procedure, phases) from None
            raise
        if snapshot is None:
            recorded = _read_text(self.snapshot_path(), self.config.rootpath)
            if recorded == mapped.text:
                return
        else:
            assertion = snapshot.use_extension(PromptSnapshotExtension)  # type: ignore[attr-defined]
            if assertion == mapped.text:
                return
            execution = assertion.executions[assertion.num_executions - 1]
            if execution.exception is not None and execution.recalled_data is None:
                # syrupy swallows a failed read and would look like "no snapshot yet".
                _read_text(self.snapshot_path(), self.config.rootpath)
            recorded = execution.recalled_data
        raise ItemFailure(
            reporting.format_prompt_mismatch(
                procedure=self.procedure_node.name,
                phase=self.phase,
                snapshot_path=self.snapshot_path(),
                recorded=recorded if isinstance(recorded, str) else None,
                current=mapped,
                root=self.config.rootpath,
                files={
                    action.source_label(): action.file
                    for actions in self.procedure_node.procedure.phases().values()
                    for action in actions
                    if action.file is not None
                },
            )
        )

    def _keep_snapshot(self, snapshot: Any) -> None:
        """Mark the stored snapshot as used without changing it.

        syrupy counts a snapshot no assertion touched as unused, and
        ``--snapshot-update`` deletes unused snapshots: a fragment that fails to load
        would otherwise cost the user the prompt it is meant to be compared with.
        """
        try:
            recorded = _read_text(self.snapshot_path())
        except ItemFailure:
            return
        if recorded is not None:
            assertion = snapshot.use_extension(PromptSnapshotExtension)
            # Equal by construction, so nothing is written and nothing fails here.
            assertion == recorded  # noqa: B015

    @property
    def procedure_node(self) -> ProcedureNode:
        return _procedure_node(self)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = self.procedure_node
        return self.path, max(node.procedure.location.line - 1, 0), f"{node.name}::{self.name}"

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Any:
        return _render_failure(self, excinfo) or super().repr_failure(excinfo)


def locate_compose_error(
    error: OodaError, procedure: Procedure, phases: Iterable[str] = PHASES
) -> OodaError:
    """Give an unlocated composition error the YAML location of the fragment behind it.

    A fragment file that vanished or broke after collection fails at read time, where
    only its path is known; the action that names it knows its line in the config.
    """
    if error.file is not None:
        return error
    from pytest_ooda.compose import render_action

    actions = procedure.phases()
    for phase in phases:
        for action in actions.get(phase, ()):
            try:
                render_action(action)
            except OodaError:
                location = action.location
                if location.file is None:
                    return error
                error.file = str(location.file)
                error.line = location.line
                error.column = location.column
                return error
            except Exception:
                # Another kind of failure: the original error is the better report.
                return error
    return error


def _read_text(path: Path, root: Path | None = None) -> str | None:
    """A stored snapshot (``None`` when there is none); ``ItemFailure`` when unreadable."""
    from pytest_ooda.snapshot import read_prompt_snapshot

    try:
        return read_prompt_snapshot(path)
    except OSError as exc:
        raise ItemFailure(
            f"cannot read the snapshot {reporting.display_path(path, root)}: "
            f"{exc.strerror or exc}\n  remove or fix it, then run `pytest --snapshot-update`"
        ) from None


class ScenarioItem(OodaItem):
    """A scenario replayed through the real loop runner to its expected outcome."""

    def __init__(self, *, scenario: Path, clash: tuple[Path, ...] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario_path = scenario
        self.clash = clash

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.scenario_path, 0, f"{self.procedure_node.name}::{self.name}"

    def check_unique(self) -> None:
        if not self.clash:
            return
        names = ", ".join(path.name for path in (self.scenario_path, *self.clash))
        raise ScenarioError(
            f"more than one scenario file is named {self.scenario_path.stem!r}: {names}",
            file=str(self.clash[0]),
            hint="scenario names must be unique per procedure; rename or remove one",
        )

    def runtest(self) -> None:
        from pytest_ooda import live

        self.check_unique()
        node = self.procedure_node
        settings = self.config.stash[PLUGIN_STATE].settings
        try:
            live.replay(
                node.loaded.config,
                node.procedure.name,
                self.scenario_path,
                drift=settings.drift,
                root=self.config.rootpath,
                empty_dir=self.config.stash[PLUGIN_STATE].empty_dir(),
                work_dir=self.config.stash[PLUGIN_STATE].work_dir(),
            )
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None


class LiveItem(ScenarioItem):
    """The scenario against the real AI command, in a fresh git-initialised workspace."""

    def runtest(self) -> None:
        from pytest_ooda import live

        self.check_unique()
        node = self.procedure_node
        state = self.config.stash[PLUGIN_STATE]
        try:
            summary = live.run_live(
                node.loaded.path,
                node.procedure.name,
                self.scenario_path,
                settings=state.settings,
                read_only=node.file_node.read_only,
                # With -s a person is watching: stream what the agent prints.
                show_output=self.config.getoption("capture") == "no",
            )
        except live.NoAICommandError as missing:
            # Reported at the scenario, not at the line inside the plugin that noticed.
            raise pytest.skip.Exception(str(missing), _use_item_location=True) from None
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None
        self.user_properties.append((reporting.LIVE_PROPERTY, summary.as_dict(self.nodeid)))
        summary.raise_for_outcome()


def iter_procedure_nodes(items: Iterable[pytest.Item]) -> Iterator[ProcedureNode]:
    seen: set[str] = set()
    for item in items:
        parent = item.parent
        if isinstance(parent, ProcedureNode) and parent.nodeid not in seen:
            seen.add(parent.nodeid)
            yield parent

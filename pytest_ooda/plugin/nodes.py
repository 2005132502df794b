"""Collection: procedure config files become collectors, procedures become item groups.

Per procedure (ids under the config file)::

    <procedure>::config              loads, renders, and is lint-clean at error severity
    <procedure>::prompt[<phase>]     observe/orient/decide/act/assembled vs its snapshot
    <procedure>::scenario[<name>]    a scenario replayed through the real loop runner
    <procedure>::live[<name>]        the same scenario against the real AI (marker ``live``)
    <procedure>::live[<name>@<v>#k]  run k of its repeats under variant v (``variants:``,
                                     ``--ooda-variant``)

A config file that does not load is one failing ``config`` item; one that declares no
procedure is one passing ``config`` item carrying its warnings. A procedure whose own
definition does not load still gets its items, which fail with its located error (its
snapshots are kept), while the file's other procedures run as usual. Prompt items are real
``pytest.Function``s requesting syrupy's ``snapshot`` fixture, because syrupy only tracks
functions; the other kinds are plain items so they stay out of syrupy's bookkeeping.
Collectors and items share this module because each kind creates or walks the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda._types import PHASES, PROMPT_PARTS
from pytest_ooda._util import display_path
from pytest_ooda.errors import LintWarning, NoAICommandError, OodaError, ScenarioError
from pytest_ooda.plugin import report, snapshot as prompt_snapshot
from pytest_ooda.plugin.material import material_nodes
from pytest_ooda.plugin.options import SCENARIO_SUFFIXES
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.snapshot import PromptSnapshotExtension, safe_name, snapshot_stem
from pytest_ooda.plugin.state import (
    LIVE_REPORT,
    PLUGIN_STATE,
    PROMPT_FORMAT,
    SKIP_AT_ITEM,
    SNAPSHOT_DIR,
    LiveReport,
    LoadedFile,
    live_requested,
    load_collected,
)
from pytest_ooda.settings import (
    DRIFT,
    LINT_SEVERITY,
    PROMPT_FORMAT as PROMPT_FORMAT_SETTING,
    REGRADE,
    REPEAT,
    REPLAY_COMMANDS,
    SANDBOX,
    SCENARIO_DIR,
    VARIANT,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from pytest_ooda.compose import MappedText
    from pytest_ooda.config import BrokenProcedure, Procedure
    from pytest_ooda.live import RunPlan
    from pytest_ooda.scenario import Scenario
    from pytest_ooda.variants import Variant


class ConfigFile(pytest.File):
    """One procedure config file."""

    snapshot_dir: Path | None = None
    read_only: bool = False

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        state = self.config.stash[PLUGIN_STATE]
        state.collected_files.add(self.path.resolve())
        state.counts["files"] += 1
        try:
            loaded = load_collected(self.path, state.settings[PROMPT_FORMAT_SETTING])
        except OodaError as error:
            state.broken_files.add(self.path.resolve())
            return [BrokenConfigItem.from_parent(self, name="config", error=error)]
        procedures = [*loaded.declared, *(_placeholder(failed) for failed in loaded.broken)]
        state.counts["procedures"] += len(procedures)
        if not procedures and not loaded.config.material:
            # A file of loop settings only, or one whose `procedures:` is misspelt: one
            # item, so its warnings are seen rather than the file silently yielding nothing.
            return [FileConfigItem.from_parent(self, name="config", loaded=loaded)]
        procedures.sort(key=lambda procedure: procedure.location.line)
        nodes: list[pytest.Collector] = [
            ProcedureNode.from_parent(self, name=procedure.name, loaded=loaded, procedure=procedure)
            for procedure in procedures
        ]
        return [*nodes, *material_nodes(self, loaded)]  # and the agent material it names


def _placeholder(failed: BrokenProcedure) -> Procedure:
    """An empty procedure standing for one that does not load: its node's items ask the
    config for it, and so fail with its own located error."""
    from pytest_ooda.config import Procedure

    return Procedure(
        name=failed.name,
        display="",
        summary="",
        description="",
        observe=(),
        orient=(),
        decide=(),
        act=(),
        iteration_mode=None,
        default_max_iterations=None,
        iteration_timeout=None,
        max_output_buffer=None,
        ai_cmd=None,
        ai_cmd_alias=None,
        ai_api=None,
        location=failed.location,
    )


class ProcedureNode(pytest.Collector):
    """The items of one procedure."""

    def __init__(self, *, loaded: LoadedFile, procedure: Procedure, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.procedure = procedure

    def known(self) -> set[str]:
        """The procedures a scenario of this file may name (loading or not)."""
        config = self.loaded.config
        return {*config.procedures, *config.broken}

    @property
    def file_node(self) -> ConfigFile:
        parent = self.parent
        assert isinstance(parent, ConfigFile)
        return parent

    def collect(self) -> Iterable[pytest.Item]:
        items: list[pytest.Item] = [ConfigItem.from_parent(self, name="config")]
        uses_syrupy = self.config.pluginmanager.hasplugin("syrupy")
        for phase in PROMPT_PARTS:
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
            runs, variants = (1, ()) if clash else self.live_plan(paths[0])
            for variant in variants or (None,):
                at = f"{name}@{variant.name}" if variant is not None else name
                for run in range(1, runs + 1):
                    live = LiveItem.from_parent(
                        self,
                        name=f"live[{at}]" if runs == 1 else f"live[{at}#{run}]",
                        scenario=paths[0],
                        clash=clash,
                        run=run,
                        runs=runs,
                        variant=variant,
                    )
                    live.add_marker("live")
                    items.append(live)
        return items

    def live_plan(self, path: Path) -> tuple[int, tuple[Variant, ...]]:
        """The repeats of the scenario at ``path`` and the variants each runs under
        (its own ``variants:``, then ``--ooda-variant``'s; none: the session's settings).

        Reading the scenario costs a parse, so it is only read when live items can run
        (``-m live``); otherwise its one item is deselected anyway. A file that does not
        load gets one item, which fails with the located error.
        """
        settings = self.config.stash[PLUGIN_STATE].settings
        if not live_requested(self.config):
            return 1, ()
        from pytest_ooda.scenario import load_scenario
        from pytest_ooda.variants import merged

        try:
            scenario = load_scenario(path)
        except OodaError:
            return 1, ()
        return settings.runs_for(scenario.repeat), merged(scenario.variants, settings[VARIANT])

    def scenario_dir(self) -> Path:
        settings = self.config.stash[PLUGIN_STATE].settings
        root = settings[SCENARIO_DIR] or self.file_node.path.parent / "scenarios"
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
        return report.format_error(error, root=item.config.rootpath)
    if isinstance(error, Warning) and type(error).__module__.startswith("pytest_ooda."):
        return report.format_warning_error(error, root=item.config.rootpath)
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

    def skip_if_broken(self) -> None:
        _skip_if_broken(self, self.procedure_node)


def _skip_if_broken(item: pytest.Item, node: ProcedureNode) -> None:
    """Skip an item of a procedure that does not load: its ``config`` item fails with
    the located error, once, instead of every item repeating it."""
    if node.procedure.name in node.loaded.config.broken:
        item.stash[SKIP_AT_ITEM] = True
        pytest.skip(f"procedure {node.procedure.name} does not load (see its config item)")


class OrphanScenariosItem(pytest.Item):
    """Scenario files under a folder that names no collected procedure: they would never
    run, so the item fails with the located error (and the closest procedure name)."""

    def __init__(self, *, error: ScenarioError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.error.file or self.path), 0, self.name

    def runtest(self) -> None:
        raise self.error

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


def _shown(file: str | Path | None, root: Path) -> str | None:
    return None if file is None else display_path(file, root)


def _warn_config_warnings(loaded: LoadedFile, root: Path) -> None:
    """The config's own warnings (unknown keys …), reported like lint findings."""
    for warning in loaded.config.warnings:
        report.warn_at(
            LintWarning(
                warning.message,
                file=_shown(warning.file, root),
                line=warning.line,
                column=warning.column,
            ),
            root=root,
        )


class FileConfigItem(pytest.Item):
    """A config file that loads but declares no procedure: passes, with its warnings."""

    def __init__(self, *, loaded: LoadedFile, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, "config"

    def runtest(self) -> None:
        _warn_config_warnings(self.loaded, self.config.rootpath)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return _render_failure(self, excinfo) or super().repr_failure(excinfo)


class ConfigItem(OodaItem):
    """The procedure loads and renders, and lint finds nothing at error severity."""

    def runtest(self) -> None:
        from pytest_ooda import lint

        node = self.procedure_node
        root = self.config.rootpath
        if node.procedure.name == node.loaded.first_name:
            _warn_config_warnings(node.loaded, root)
        # A procedure that does not load fails here with its own located error.
        node.loaded.config.procedure(node.procedure.name)
        overrides = lint.parse_severity_overrides(
            self.config.stash[PLUGIN_STATE].settings[LINT_SEVERITY]
        )
        settings = lint.resolve_settings(node.loaded.config, severities=overrides)
        findings = lint.lint_procedure(node.loaded.config, node.procedure.name, settings=settings)
        errors = [finding for finding in findings if finding.severity == "error"]
        for finding in findings:
            if finding.severity == "warning":
                report.warn_at(
                    LintWarning(
                        f"{finding.id} {finding.severity}: {finding.message}",
                        file=_shown(finding.file, root),
                        line=finding.line,
                        column=finding.column,
                    ),
                    root=root,
                )
        if errors:
            raise ItemFailure(report.format_findings(errors, root=root))


class PromptItem(pytest.Function):
    """One composed phase (or the assembled prompt) compared with its Markdown snapshot."""

    def __init__(self, *, phase: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.phase = phase
        file_node = self.procedure_node.file_node
        if file_node.snapshot_dir is not None:
            self.stash[SNAPSHOT_DIR] = file_node.snapshot_dir
        self.stash[PROMPT_FORMAT] = self.procedure_node.procedure.prompt_format

    def compose(self) -> MappedText:
        """The text under test, with the source map naming each line's fragment."""
        from pytest_ooda.compose import MappedText, assemble_prompt_mapped, compose_phase_mapped
        from pytest_ooda.config import resolve_run_settings

        node = self.procedure_node
        # Asked of the config, not the node: a procedure that does not load raises here.
        procedure = node.loaded.config.procedure(node.procedure.name)
        if self.phase == "assembled":
            limit = resolve_run_settings(
                node.loaded.config, procedure.name, require_ai=False, agent=False
            ).max_iterations
            return assemble_prompt_mapped(procedure, iteration=1, max_iterations=limit)
        mapped = compose_phase_mapped(
            procedure.phases()[self.phase], procedure=procedure.name, phase=self.phase
        )
        # Stored as a proper text file: one trailing newline unless the phase is empty.
        return MappedText(mapped.text + "\n" if mapped.text else "", mapped.segments)

    def snapshot_path(self) -> Path:
        site = self.stash.get(SNAPSHOT_DIR, None)
        if site is None:
            site = self.path.parent / str(PromptSnapshotExtension.snapshot_dirname) / self.path.stem
        stem = snapshot_stem(self.phase, self.stash[PROMPT_FORMAT])
        return site / safe_name(self.procedure_node.name) / f"{stem}.md"

    def runtest(self) -> None:
        snapshot = self.funcargs.get("snapshot")
        if self.procedure_node.procedure.name in self.procedure_node.loaded.config.broken:
            if snapshot is not None and self.config.getoption("update_snapshots", False):
                # --snapshot-update deletes what no assertion used: its snapshot is kept
                # for the fix. A plain run deletes nothing, and counts no pass for it.
                self._keep_snapshot(snapshot)
            _skip_if_broken(self, self.procedure_node)
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
            comparison = prompt_snapshot.compare(snapshot, mapped.text)
            if comparison.matched:
                return
            if comparison.read_failed:
                # syrupy swallows a failed read and would look like "no snapshot yet".
                _read_text(self.snapshot_path(), self.config.rootpath)
            recorded = comparison.recorded
        raise ItemFailure(
            report.format_prompt_mismatch(
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
                other_formats=self._other_format_snapshots(),
            )
        )

    def _other_format_snapshots(self) -> list[Path]:
        """Stored snapshots of this part in another prompt format."""
        path = self.snapshot_path()
        if self.phase != "assembled" or not path.parent.is_dir():
            return []
        return sorted(
            other for other in path.parent.glob(f"{self.phase}*.md") if other.name != path.name
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
            prompt_snapshot.keep(snapshot, recorded)

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
                return error.relocated(
                    file=location.file, line=location.line, column=location.column
                )
            except Exception:
                # Another kind of failure: the original error is the better report.
                return error
    return error


def _read_text(path: Path, root: Path | None = None) -> str | None:
    """A stored snapshot (``None`` when there is none); ``ItemFailure`` when unreadable."""
    from pytest_ooda.plugin.snapshot import read_prompt_snapshot

    try:
        return read_prompt_snapshot(path)
    except OSError as exc:
        raise ItemFailure(
            f"cannot read the snapshot {display_path(path, root)}: "
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

    def live_nodeid(self, scenario: Scenario) -> str:
        """The node id of this scenario's (first) live item in a plain `-m live` session,
        the one a recording is written from."""
        settings = self.config.stash[PLUGIN_STATE].settings
        ini_repeat = None if settings.tiers.get("repeat") == "cli" else settings[REPEAT]
        runs = scenario.repeat or ini_repeat or 1
        name = self.scenario_path.stem
        variants = scenario.variants
        if variants:
            # Each variant has its own items; the first one's first run records.
            name = f"{name}@{variants[0].name}"
        suffix = f"live[{name}]" if runs == 1 else f"live[{name}#1]"
        return f"{self.procedure_node.nodeid}::{suffix}"

    def runtest(self) -> None:
        from pytest_ooda.plugin import scenarios
        from pytest_ooda.scenario import check_replay, load_for

        self.skip_if_broken()
        self.check_unique()
        node = self.procedure_node
        settings = self.config.stash[PLUGIN_STATE].settings
        try:
            scenario = load_for(node.procedure.name, self.scenario_path, known=node.known())
            cassette = scenarios.agent_cassette(
                settings, scenario, self.scenario_path, self.live_nodeid
            )
            if cassette is not None:
                scenarios.replay_agent(
                    self.config,
                    collected=node.loaded.path,
                    procedure=node.procedure.name,
                    scenario=scenario,
                    path=self.scenario_path,
                    nodeid=self.nodeid,
                    cassette=cassette,
                )
                return
            checked = check_replay(
                node.loaded.config,
                node.procedure.name,
                self.scenario_path,
                drift=settings[DRIFT],
                root=self.config.rootpath,
                empty_dir=self.config.stash[PLUGIN_STATE].empty_dir(),
                work_dir=self.config.stash[PLUGIN_STATE].work_dir(),
                sandbox=settings[SANDBOX],
                run_commands=settings[REPLAY_COMMANDS] == "run",
                regrade=settings[REGRADE],
                judge_cache=settings.results_dir,
                ignore_dir=settings.ignore_dir,
                rerecord_hint=scenarios.rerecord_hint(self.live_nodeid),
                scenario=scenario,
            )
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None
        if checked.unrecorded:
            self.stash[SKIP_AT_ITEM] = True  # the skip is reported at the scenario's item
        scenarios.present_replay(checked, self.scenario_path, self.live_nodeid)


class LiveItem(ScenarioItem):
    """The scenario against the real AI command, in a fresh git-initialised workspace:
    run ``run_index`` of the scenario's ``run_count`` repeats, under ``variant``."""

    def __init__(
        self, *, run: int = 1, runs: int = 1, variant: Variant | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.run_index = run
        self.run_count = runs
        self.variant = variant

    def plan(self) -> RunPlan:
        """This item's run, decided (:func:`pytest_ooda.live.plan_run`): skipped without
        an AI command; a mistake in its files is the item's located error."""
        from pytest_ooda.plugin import scenarios
        from pytest_ooda.scenario import load_for

        node = self.procedure_node
        try:
            scenario = load_for(node.procedure.name, self.scenario_path, known=node.known())
            return scenarios.plan_live(
                self.config,
                collected=node.loaded.path,
                procedure=node.procedure.name,
                scenario=scenario,
                variant=self.variant,
                run=self.run_index,
                runs=self.run_count,
                nodeid=self.nodeid,
                read_only=node.file_node.read_only,
            )
        except NoAICommandError as missing:
            self.stash[SKIP_AT_ITEM] = True
            pytest.skip(str(missing))
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None

    def runtest(self) -> None:
        from pytest_ooda.plugin import pacing, scenarios
        from pytest_ooda.plugin.cluster import CLUSTER
        from pytest_ooda.plugin.state import PLANNED

        self.skip_if_broken()
        self.check_unique()
        # Planned already when a cluster's window took it (--ooda-executor).
        plan = self.stash.get(PLANNED, None) or self.plan()
        cluster = self.config.stash.get(CLUSTER, None)
        if cluster is None or not cluster.made(self):
            # Resumed or stopped early: skipped here (a run the cluster has made
            # already is reported, whatever the gate says now).
            plan = pacing.before_run(self, plan, marker=cluster is None)
        try:
            if cluster is None:
                done, recorded = scenarios.run_live(self.config, plan)
            else:
                done, recorded = cluster.wait(self, plan)
        except OodaError as error:
            raise locate_compose_error(error, self.procedure_node.procedure) from None
        # The run travels to the process that measures it as its record, as built; a
        # cluster's run was recorded as it came back.
        self.stash[LIVE_REPORT] = LiveReport(
            record=done.record if cluster is None else None,
            # The scenario file and its cassette, as each was written.
            recorded=", ".join(display_path(p, self.config.rootpath) for p in recorded) or None,
        )
        pacing.after_run(self, done)


def iter_procedure_nodes(items: Iterable[pytest.Item]) -> Iterator[ProcedureNode]:
    seen: set[str] = set()
    for item in items:
        parent = item.parent
        if isinstance(parent, ProcedureNode) and parent.nodeid not in seen:
            seen.add(parent.nodeid)
            yield parent

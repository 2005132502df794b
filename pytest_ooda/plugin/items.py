"""The items of a procedure that need no agent: ``config`` (it loads, renders and is
lint-clean at error severity), ``prompt[<part>]`` (a composed phase, or the assembled
prompt, against its Markdown snapshot), and the items standing for a config file that
does not load, one that declares no procedure, and scenario folders nothing runs.

Prompt items are real ``pytest.Function``s requesting syrupy's ``snapshot`` fixture,
because syrupy only tracks functions; the other kinds are plain items so they stay out
of syrupy's bookkeeping. Each reports its failure as our own text
(:func:`render_failure`) and is located at its procedure's YAML line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

from pytest_ooda._types import PHASES
from pytest_ooda._util import display_path
from pytest_ooda.errors import LintWarning, OodaError, ScenarioError
from pytest_ooda.plugin import SESSION, report, snapshots
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.snapshots import PromptSnapshotExtension, safe_name, snapshot_stem
from pytest_ooda.plugin.state import PROMPT_FORMAT, SKIP_AT_ITEM, SNAPSHOT_DIR, LoadedFile
from pytest_ooda.settings import LINT_SEVERITY

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pytest_ooda.compose import MappedText
    from pytest_ooda.config import Procedure


class ConfigFileNode(Protocol):
    """What an item reads of its config file's collector (``collection.ConfigFile``)."""

    path: Path
    snapshot_dir: Path | None
    read_only: bool


class ProcedureParent(Protocol):
    """What an item reads of its procedure's collector (``collection.ProcedureNode``,
    which creates the items, so this module does not import it)."""

    name: str
    nodeid: str
    loaded: LoadedFile
    procedure: Procedure

    @property
    def file_node(self) -> ConfigFileNode: ...

    def known(self) -> set[str]: ...


def prompt_with_snapshot(snapshot: object) -> None:
    """Placeholder body: ``PromptItem.runtest`` does the work with the fixture value."""


def prompt_without_snapshot() -> None:
    """Placeholder body used when syrupy is disabled (``-p no:syrupy``)."""


def procedure_of(item: pytest.Item) -> ProcedureParent:
    """The procedure an item belongs to: its parent collector."""
    return cast("ProcedureParent", item.parent)


def render_failure(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
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
    def procedure_node(self) -> ProcedureParent:
        return procedure_of(self)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = self.procedure_node
        return self.path, max(node.procedure.location.line - 1, 0), f"{node.name}::{self.name}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return render_failure(self, excinfo) or super().repr_failure(excinfo)

    def skip_if_broken(self) -> None:
        _skip_if_broken(self, self.procedure_node)


def _skip_if_broken(item: pytest.Item, node: ProcedureParent) -> None:
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
        return render_failure(self, excinfo) or super().repr_failure(excinfo)


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
        return render_failure(self, excinfo) or super().repr_failure(excinfo)


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
        overrides = lint.parse_severity_overrides(self.config.stash[SESSION][LINT_SEVERITY])
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
            comparison = snapshots.compare(snapshot, mapped.text)
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
            snapshots.keep(snapshot, recorded)

    @property
    def procedure_node(self) -> ProcedureParent:
        return procedure_of(self)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = self.procedure_node
        return self.path, max(node.procedure.location.line - 1, 0), f"{node.name}::{self.name}"

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Any:
        return render_failure(self, excinfo) or super().repr_failure(excinfo)


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
    from pytest_ooda.plugin.snapshots import read_prompt_snapshot

    try:
        return read_prompt_snapshot(path)
    except OSError as exc:
        raise ItemFailure(
            f"cannot read the snapshot {display_path(path, root)}: "
            f"{exc.strerror or exc}\n  remove or fix it, then run `pytest --snapshot-update`"
        ) from None

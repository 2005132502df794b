"""A scenario file replayed and checked as a test, without pytest: the work of the
plugin's replay items, which only present what :func:`check_replay` returns (the failure
report as the item's failure, the warnings at the scenario file).

It picks the replay's directory (a shared empty one for a scenario that touches no
files, else a copy of the scenario's workspace), sets up the judge for a regrade, runs
:func:`~pytest_ooda.scenario.replay.replay_scenario`, and turns what was missed and what
drifted into a :class:`ReplayCheck`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import (
    DriftWarning,
    JudgeWarning,
    OodaWarning,
    ReplayExhaustedError,
)
from pytest_ooda.scenario.locate import load_for, workspace_of
from pytest_ooda.scenario.replay import replay_scenario
from pytest_ooda.scenario.report import failure_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pytest_ooda.config import Config
    from pytest_ooda.judge import JudgeContext
    from pytest_ooda.scenario.model import Scenario
    from pytest_ooda.scenario.replay import Replayed

__all__ = ["ReplayCheck", "check_replay"]


@dataclass(frozen=True)
class ReplayCheck:
    """A replayed scenario file's verdict: ``failure`` is the report when it missed its
    expectations (or drifted under ``drift="fail"``), else ``None``; ``warnings`` (judge
    notes, and prompt drifts that did not fail it) are located at the scenario file."""

    scenario: Scenario
    failure: str | None
    warnings: tuple[OodaWarning, ...]
    #: A scenario with nothing recorded yet (``iterations: []``): there is nothing to
    #: replay, so its item is skipped with the command that records it, not failed.
    unrecorded: bool = False


def check_replay(
    config: Config,
    procedure: str,
    path: Path,
    *,
    drift: str,
    root: Path,
    empty_dir: Path | None = None,
    work_dir: Path | None = None,
    sandbox: str | None = None,
    run_commands: bool = True,
    regrade: bool = False,
    judge_cache: Path | None = None,
    ignore_dir: Path | None = None,
    rerecord_hint: Callable[[Scenario], str] | None = None,
    scenario: Scenario | None = None,
) -> ReplayCheck:
    """Replay the scenario at ``path`` (for ``procedure``) and check it.

    ``drift`` is ``fail``, ``warn`` or ``ignore``. Verification commands run inside the
    session's (``sandbox``) or the configured sandbox, unless ``run_commands`` is off.
    ``empty_dir`` (shared, never written) serves scenarios that touch no files, and
    ``work_dir`` (emptied before each use) the others: creating and removing a directory
    per scenario costs more than the replay itself on many file systems.
    ``rerecord_hint`` words how to re-record this one scenario after a drift.
    ``scenario`` is the file's, loaded already (else it is read here).

    ``ScenarioError`` when the file is broken; a scenario with no iterations yet is
    ``unrecorded`` (nothing replayed).
    """
    if scenario is None:
        scenario = load_for(procedure, path)
    if not scenario.iterations:
        return ReplayCheck(scenario, None, (), unrecorded=True)
    judge = _judge_context(config, judge_cache, ignore_dir) if _judged(scenario) else None
    try:
        if empty_dir is not None and not _touches_files(scenario):
            replayed = _replayed(config, scenario, empty_dir, drift, judge, regrade)
        else:
            workspace = workspace_of(scenario, root=root)
            with _replay_dir(work_dir) as target:
                from pytest_ooda.workspace import copy_workspace

                workdir = copy_workspace(workspace, target)
                replayed = _replayed(
                    config, scenario, workdir, drift, judge, regrade, sandbox, run_commands,
                    source=workspace,
                )  # fmt: skip
    except ReplayExhaustedError as error:
        return ReplayCheck(scenario, _exhausted(error, root), ())
    warnings: list[OodaWarning] = [
        JudgeWarning(f"scenario {scenario.label}: {note}", file=str(path))
        for note in (replayed.judged.notes if replayed.judged is not None else ())
    ]
    problems, drifts = list(replayed.problems), list(replayed.drifts)
    failing_drifts = drifts if drift == "fail" else []
    if problems or failing_drifts:
        text = failure_text(
            scenario,
            replayed.result,
            problems,
            failing_drifts,
            root=root,
            mode="replay",
            rerecord_hint=rerecord_hint(scenario) if rerecord_hint is not None else None,
        )
        return ReplayCheck(scenario, text, tuple(warnings))
    warnings.extend(
        DriftWarning(f"scenario {scenario.label}: {found.describe()}", file=str(path))
        for found in drifts
    )
    return ReplayCheck(scenario, None, tuple(warnings))


def _exhausted(error: ReplayExhaustedError, root: Path) -> str:
    """Running out of recorded iterations: the error and the iterations served."""
    from pytest_ooda.diagnostics import format_error
    from pytest_ooda.loop import served_table

    return "\n".join([format_error(error, root=root), "", *served_table(list(error.served))])


def _touches_files(scenario: Scenario) -> bool:
    """Whether a replay reads or writes workspace files (else any empty dir will do);
    verification commands may write (caches, build output), so they get their own."""
    return (
        scenario.workspace is not None
        or any(it.files for it in scenario.iterations)
        or (
            scenario.expect is not None
            and bool(scenario.expect.files or scenario.expect.commands or scenario.expect.protect)
        )
        or bool(scenario.context)
    )


def _replayed(
    config: Config,
    scenario: Scenario,
    workdir: Path,
    drift: str,
    judge: JudgeContext | None,
    regrade: bool,
    sandbox: str | None = None,
    run_commands: bool = True,
    *,
    source: Path | None = None,
) -> Replayed:
    return replay_scenario(
        config,
        scenario,
        workdir=workdir,
        sleep=False,
        drift=drift != "ignore",
        handle_signals=False,
        show_ai_output=False,
        sandbox=sandbox,
        run_commands=run_commands,
        judge=judge,
        regrade=regrade,
        source=source,
    )


@contextlib.contextmanager
def _replay_dir(reuse: Path | None) -> Iterator[Path]:
    """An empty directory for one replay: ``reuse`` emptied, else a temporary one."""
    if reuse is not None and _emptied(reuse):
        yield reuse
        return
    with tempfile.TemporaryDirectory(prefix="ooda-replay-") as tmp:
        yield Path(tmp) / "workspace"


def _emptied(directory: Path) -> bool:
    """Empty ``directory`` (creating it if needed); ``False`` when something stays."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for child in directory.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        return not any(directory.iterdir())
    except OSError:
        return False


def _judged(scenario: Scenario) -> bool:
    return scenario.expect is not None and scenario.expect.judge is not None


def _judge_context(config: Config, cache: Path | None, ignore: Path | None) -> JudgeContext:
    """What a replay needs to ask the judge again (``--ooda-regrade``)."""
    import os

    from pytest_ooda.judge import JudgeContext, cache_for

    return JudgeContext(config=config, cache=cache_for(cache, ignore_dir=ignore), env=os.environ)

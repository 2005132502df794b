"""Scenario items' work: replay through the real loop runner, and live runs with recording.

Replay serves a scenario's iterations through the replay backend (the AI command is
never started) in a temp copy of its workspace, then checks ``expect`` and prompt drift.
A live run resolves the real AI command, runs in a fresh git-initialised copy, checks
``expect`` and, per ``--ooda-record-mode``, writes the recording back with each
iteration's workspace changes (redacted, atomically; a failed run never replaces an
existing recording). A live run is held to the scenario's budget and the session's
(``--ooda-max-cost``/``--ooda-max-tokens``), and warns when the agent was denied tools.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import display_path
from pytest_ooda.errors import (
    AgentWarning,
    ConfigError,
    DriftWarning,
    NoAICommandError,
    RecordingWarning,
    ReplayExhaustedError,
    ScenarioError,
)
from pytest_ooda.plugin import report
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.state import prompt_format_override
from pytest_ooda.redact import Redactor
from pytest_ooda.workspace import copy_workspace, git_init

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pytest_ooda.config import Config
    from pytest_ooda.evaluate.results import RunRecord
    from pytest_ooda.loop import LoopEvent, LoopResult
    from pytest_ooda.plugin.options import PluginSettings
    from pytest_ooda.scenario import Drift, Scenario
    from pytest_ooda.scenario.replay import Replayed

NO_AI_COMMAND = (
    "no AI command configured for live runs; set one of:\n"
    "  - pytest --ooda-ai-cmd 'my-cli -p' or --ooda-ai-cmd-alias NAME "
    "(claude, kiro-cli, copilot, cursor-agent, or your ai_cmd_aliases)\n"
    "  - OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment\n"
    "  - loop.ai_cmd, loop.ai_cmd_alias or loop.ai_api in ooda-config.yml "
    "(the workspace file, --ooda-config, or the global $OODA_CONFIG_HOME/ooda-config.yml)\n"
    "  - ai_cmd, ai_cmd_alias or ai_api on the procedure itself"
)


def load_for(procedure: str, path: Path) -> Scenario:
    """Load a scenario file and check it belongs to ``procedure``."""
    from pytest_ooda.scenario import load_scenario

    scenario = load_scenario(path)
    if scenario.procedure != procedure:
        raise ScenarioError(
            f"scenario is stored under procedure {procedure!r} but declares "
            f"procedure: {scenario.procedure}",
            file=str(path),
            line=1,
            hint=f"move it to the {scenario.procedure}/ scenario folder or fix `procedure:`",
        )
    return scenario


def _workspace_line(scenario: Scenario) -> int | None:
    if scenario.path is None:
        return None
    text = scenario.path.read_text(encoding="utf-8", errors="replace")
    for number, content in enumerate(text.splitlines(), start=1):
        if content.startswith("workspace:"):
            return number
    return None


def workspace_of(scenario: Scenario, *, root: Path | None = None) -> Path | None:
    """The scenario's workspace directory; a located ``ScenarioError`` when it is missing,
    or when it lies outside ``root`` (the rootdir) while the scenario lies inside.

    The containment check is on the path as written (``..`` and absolute paths), so a
    fixture reached through a symbolic link stays usable; a scenario committed with
    ``workspace: ../../..`` would copy whatever happens to sit above the checkout.
    """
    directory = scenario.workspace_dir()
    if directory is None or scenario.workspace is None:
        return None
    line = _workspace_line(scenario)
    where: dict[str, Any] = {
        "file": str(scenario.path) if scenario.path is not None else None,
        "line": line,
        "column": 1 if line is not None else None,
    }
    if root is not None and scenario.path is not None:
        written = Path(os.path.normpath(scenario.path.parent.absolute() / scenario.workspace))
        inside = Path(os.path.normpath(scenario.path.absolute())).is_relative_to(root)
        if inside and not written.is_relative_to(root):
            raise ScenarioError(
                f"workspace {scenario.workspace!r} is outside the project ({written})",
                hint="keep scenario workspaces inside the rootdir, relative to the scenario file",
                **where,
            )
    if directory.is_dir():
        return directory
    raise ScenarioError(
        f"workspace directory not found: {scenario.workspace} (resolved to {directory})",
        hint="workspace is relative to the scenario file's directory",
        **where,
    )


def _run(
    config: Config,
    scenario: Scenario,
    workdir: Path,
    *,
    show_output: bool = False,
    **backend: Any,
) -> LoopResult:
    from pytest_ooda.loop import run_procedure

    return run_procedure(
        config,
        scenario.procedure,
        max_iterations=scenario.max_iterations,
        context=scenario.context,
        workdir=workdir,
        failure_threshold=scenario.failure_threshold,
        handle_signals=False,
        show_ai_output=show_output,
        **backend,
    )


def _failure_text(
    scenario: Scenario,
    result: LoopResult,
    problems: list[str],
    drifts: list[Drift],
    *,
    root: Path,
    mode: str,
) -> str:
    where = display_path(scenario.path, root) if scenario.path else scenario.label
    lines = [
        f"scenario {scenario.label} ({where}) {mode}: status={result.status}, "
        f"{result.iterations} iteration(s)"
    ]
    for problem in problems:
        lines.append(f"  - {problem}")
    lines.append("")
    lines.extend(report.iteration_table(result))
    for drift in drifts:
        lines.append("")
        lines.append(drift.describe())
    if drifts:
        lines.append("")
        lines.append(
            "  re-record with `pytest -m live --ooda-record-mode=new`, drop prompt_sha256 "
            "from a hand-written scenario, or pass --ooda-drift=warn"
        )
    return "\n".join(lines)


def _touches_files(scenario: Scenario) -> bool:
    """Whether a replay reads or writes workspace files (else any empty dir will do);
    verification commands may write (caches, build output), so they get their own."""
    return (
        scenario.workspace is not None
        or any(it.files for it in scenario.iterations)
        or (scenario.expect is not None and bool(scenario.expect.files or scenario.expect.commands))
        or bool(scenario.context)
    )


def _replayed(
    config: Config, scenario: Scenario, workdir: Path, *, drift: str, root: Path
) -> Replayed:
    """The shared replay path; running out of iterations reports the served ones."""
    from pytest_ooda.scenario.replay import replay_scenario

    try:
        return replay_scenario(
            config,
            scenario,
            workdir=workdir,
            sleep=False,
            drift=drift != "ignore",
            handle_signals=False,
            show_ai_output=False,
        )
    except ReplayExhaustedError as error:
        table = report.served_table(list(error.served))
        raise ItemFailure("\n".join([report.format_error(error, root=root), "", *table])) from None


@contextlib.contextmanager
def _live_dir(discard: Callable[[Path], None] | None) -> Iterator[Path]:
    """A new directory for one live run, handed to ``discard`` when the run is over."""
    directory = Path(tempfile.mkdtemp(prefix="ooda-live-"))
    try:
        yield directory
    finally:
        if discard is not None:
            discard(directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)


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


def replay(
    config: Config,
    procedure: str,
    path: Path,
    *,
    drift: str,
    root: Path,
    empty_dir: Path | None = None,
    work_dir: Path | None = None,
) -> None:
    """Replay the scenario at ``path``; ``ItemFailure`` when it misses its expectations.

    ``empty_dir`` (shared, never written) serves scenarios that touch no files, and
    ``work_dir`` (emptied before each use) the others: creating and removing a directory
    per scenario costs more than the replay itself on many file systems.
    """
    scenario = load_for(procedure, path)
    if not scenario.iterations:
        raise ScenarioError(
            f"scenario {scenario.label!r} has no iterations to replay yet",
            file=str(path),
            hint=f"record it: pytest -m live -k {path.stem!r} --ooda-record-mode=once "
            "(with --ooda-ai-cmd or --ooda-ai-cmd-alias), or write iterations by hand",
        )
    if empty_dir is not None and not _touches_files(scenario):
        replayed = _replayed(config, scenario, empty_dir, drift=drift, root=root)
    else:
        workspace = workspace_of(scenario, root=root)
        with _replay_dir(work_dir) as target:
            workdir = copy_workspace(workspace, target)
            replayed = _replayed(config, scenario, workdir, drift=drift, root=root)
    problems, drifts = list(replayed.problems), list(replayed.drifts)
    failing_drifts = drifts if drift == "fail" else []
    if problems or failing_drifts:
        raise ItemFailure(
            _failure_text(
                scenario, replayed.result, problems, failing_drifts, root=root, mode="replay"
            )
        )
    for found in drifts:
        report.warn_at(
            DriftWarning(f"scenario {scenario.label}: {found.describe()}"),
            path,
        )


# --------------------------------------------------------------------------- live


@dataclass
class LiveOutcome:
    """What one live run produced, for the item verdict and the terminal summary."""

    scenario: str
    run: int = 1
    runs: int = 1
    status: str = ""
    iterations: int = 0
    elapsed: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    recorded: str | None = None
    problems: list[str] = field(default_factory=list)
    report: str = ""
    #: The run's results record (``None`` for a run that could not be measured).
    record: RunRecord | None = None

    def as_dict(self, nodeid: str) -> dict[str, Any]:
        return {
            "nodeid": nodeid,
            "scenario": self.scenario,
            "run": self.run,
            "runs": self.runs,
            "success": self.record.success if self.record is not None else None,
            "status": self.status,
            "iterations": self.iterations,
            "elapsed": round(self.elapsed, 3),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "recorded": self.recorded,
            "expectations": f"{len(self.problems)} expectation(s) not met" if self.problems else "",
        }

    def raise_for_outcome(self) -> None:
        if self.problems:
            raise ItemFailure(self.report)


def _workspace_config(settings: PluginSettings, collected: Path) -> Config | None:
    """The session's workspace config, when it is a different file from ``collected``."""
    from pytest_ooda.config import CONFIG_FILENAME, load_config

    candidate = settings.config_file or settings.rootpath / CONFIG_FILENAME
    if not candidate.is_file() or candidate.resolve() == collected.resolve():
        return None
    return load_config(candidate, cwd=settings.rootpath)


def resolve_ai(
    config: Config, procedure: str, settings: PluginSettings, collected: Path
) -> tuple[str | None, str | None]:
    """The ``(ai_cmd, ai_cmd_alias)`` overrides for a live run; skips when none is set.

    The collected file's own settings (and the environment, global config, and options)
    come first; the rootdir's ``ooda-config.yml`` loop settings fill in when the
    procedure lives in another file.
    """
    from pytest_ooda.config import resolve_run_settings

    ai_cmd, alias = settings.ai_cmd, settings.ai_cmd_alias
    try:
        run = resolve_run_settings(
            config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias, require_ai=False
        )
    except ConfigError as error:
        # The library names `ooda run`'s flags; here the values came from pytest's.
        if error.message.startswith("--ai-cmd"):
            raise error.relocated(message="--ooda-" + error.message[2:]) from None
        raise
    if run.ai_cmd is not None or run.ai_api is not None:
        return ai_cmd, alias
    workspace = _workspace_config(settings, collected)
    if workspace is not None:
        if workspace.loop.ai_cmd is not None:
            return workspace.loop.ai_cmd, None
        if workspace.loop.ai_cmd_alias is not None:
            return None, workspace.loop.ai_cmd_alias
    raise NoAICommandError(NO_AI_COMMAND)


def _drifted(config: Config, scenario: Scenario, workdir: Path) -> bool:
    """Whether the first recorded prompt differs from the one assembled now."""
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.scenario import sha256_text

    if not scenario.iterations or scenario.iterations[0].prompt_sha256 is None:
        return False
    limit = scenario.max_iterations
    if limit is None:
        limit = resolve_run_settings(config, scenario.procedure, require_ai=False).max_iterations
    prompt = assemble_prompt(
        config.procedure(scenario.procedure),
        iteration=1,
        max_iterations=limit,
        context=scenario.context,
        cwd=workdir,
    )
    return sha256_text(prompt) != scenario.iterations[0].prompt_sha256


def agent_warnings(result: LoopResult) -> list[str]:
    """What a person must hear about an agent's run that did not fail it: tools it was
    denied, a budget it could not be held to."""
    from pytest_ooda.loop.budget import unenforced_warning

    found = [text for record in result.records if (text := record.denial_warning())]
    unenforced = unenforced_warning(result)
    if unenforced is not None:
        found.append(unenforced)
    return found


def run_live(
    collected: Path,
    procedure: str,
    path: Path,
    *,
    settings: PluginSettings,
    read_only: bool = False,
    show_output: bool = False,
    run: int = 1,
    runs: int = 1,
    nodeid: str = "",
    discard: Callable[[Path], None] | None = None,
) -> LiveOutcome:
    """Run the scenario at ``path`` against the real AI command and maybe record it.

    ``show_output`` streams the AI's output to the terminal (pytest ``-s``). ``run`` of
    ``runs`` is this run's place among the scenario's repeats: each runs in a fresh
    workspace, and only the first may be recorded, so repeats never write one file.
    ``discard`` removes the run's directory afterwards (default: at once). The outcome
    carries the run's results record.
    """
    from pytest_ooda.config import load_config, resolve_run_settings
    from pytest_ooda.evaluate.record import ai_identity, build_record, fragment_hashes
    from pytest_ooda.loop.budget import tightest
    from pytest_ooda.scenario import Recorder
    from pytest_ooda.workspace import PathChanges

    scenario = load_for(procedure, path)
    config = load_config(
        collected, cwd=settings.rootpath, overrides=prompt_format_override(settings.prompt_format)
    )
    ai_cmd, alias = resolve_ai(config, procedure, settings, collected)
    recorder = Recorder(scenario, settings.record_mode, env=os.environ, redact=config.redact)
    redactor = Redactor(
        os.environ, extra_patterns=config.redact.patterns, extra_env_names=config.redact.env
    )
    outcome = LiveOutcome(scenario=scenario.label, run=run, runs=runs)
    identity = ai_identity(
        resolve_run_settings(config, procedure, ai_cmd=ai_cmd, ai_cmd_alias=alias)
    )
    fragments = fragment_hashes(config.procedure(procedure))
    with _live_dir(discard) as tmp:
        workdir = copy_workspace(workspace_of(scenario, root=settings.rootpath), tmp / "workspace")
        git_init(workdir)
        wanted = run == 1 and recorder.wanted(drifted=_drifted(config, scenario, workdir))
        # Watching file contents costs a read of each changed file per iteration: only
        # when the run may be written. Names alone (for the results) are a stat walk.
        watch = recorder.watch(workdir) if wanted and not read_only else None
        changes = PathChanges(workdir)

        def on_event(event: LoopEvent) -> None:
            changes(event)
            if watch is not None:
                watch(event)

        started = time.time()
        result = _run(
            config,
            scenario,
            workdir,
            show_output=show_output,
            ai_cmd=ai_cmd,
            ai_cmd_alias=alias,
            on_event=on_event,
            ai_output=settings.ai_output,
            max_cost=tightest(scenario.max_cost, settings.max_cost),
            max_tokens=tightest(scenario.max_tokens, settings.max_tokens),
        )
        assessment = scenario.assess(result, workdir)
        problems = assessment.problems
    for text in agent_warnings(result):
        report.warn_at(AgentWarning(f"scenario {scenario.label}: {text}"), path)
    outcome.record = build_record(
        scenario=scenario,
        result=result,
        problems=problems,
        redactor=redactor,
        commands=assessment.commands,
        run=run,
        runs=runs,
        started_at=started,
        finished_at=time.time(),
        fragments=fragments,
        ai=identity,
        changes=changes,
        nodeid=nodeid,
        scenario_file=display_path(path, settings.rootpath),
        worker=os.environ.get("PYTEST_XDIST_WORKER"),
        shard=f"{settings.shard[0]}/{settings.shard[1]}" if settings.shard else None,
    )
    outcome.status = result.status
    outcome.iterations = result.iterations
    outcome.elapsed = result.elapsed
    usage = result.usage
    if usage is not None:
        outcome.input_tokens = usage.input_tokens
        outcome.output_tokens = usage.output_tokens
        outcome.cost = usage.cost
    if wanted and read_only:
        report.warn_at(
            RecordingWarning(
                f"scenario {scenario.label}: not recorded, {path} belongs to the installed "
                "package (copy the scenario into your project to record it)"
            ),
            path,
        )
    elif wanted:
        written = recorder.commit(result, problems)
        if written is not None:
            outcome.recorded = display_path(written, settings.rootpath)
            for note in recorder.warnings:
                report.warn_at(RecordingWarning(f"scenario {scenario.label}: {note}"), written)
    outcome.problems = problems
    if problems:
        outcome.report = _failure_text(
            scenario, result, problems, [], root=settings.rootpath, mode="live"
        )
        if recorder.skipped_reason:
            outcome.report += f"\n\n  not recorded: {recorder.skipped_reason}"
        # Live output lands in CI logs: redact it like a recording.
        outcome.report = redactor(outcome.report)
    return outcome

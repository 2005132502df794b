"""Replaying a scenario through the real loop runner: the one path ``ooda run --replay``
and the pytest plugin's scenario items share.

The recorded outputs are served by the replay backend (the AI command is never
started); a step the replay refuses (a file change outside the workspace, a lone
surrogate in an output) is reported at the line of the iteration it came from, running
out of iterations as a :class:`~pytest_ooda.errors.ReplayExhaustedError`; then the
``expect`` block and the recorded prompts are checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import ReplayExhaustedError, ScenarioError
from pytest_ooda.loop import tightest
from pytest_ooda.scenario.drift import check_drift

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda._types import ReplayKind
    from pytest_ooda.backends import ReplayBackend
    from pytest_ooda.config import Config, RunSettings
    from pytest_ooda.judge import JudgeContext, Judged
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.scenario.drift import Drift
    from pytest_ooda.scenario.model import Scenario


@dataclass(frozen=True)
class Replayed:
    """A finished replay: the run, the expectations it missed and the prompts that
    drifted from the recording (empty when drift was not checked)."""

    result: LoopResult
    problems: tuple[str, ...]
    drifts: tuple[Drift, ...]
    #: ``expect.judge``'s grading of the replay (recorded verdicts, or asked again).
    judged: Judged | None = None


def replay_scenario(
    config: Config,
    scenario: Scenario,
    *,
    workdir: Path,
    files_dir: Path | None = None,
    sleep: bool = True,
    drift: bool = True,
    run_commands: bool = True,
    sandbox: str | None = None,
    judge: JudgeContext | None = None,
    regrade: bool = False,
    source: Path | None = None,
    settings: RunSettings | None = None,
    **run_options: Any,
) -> Replayed:
    """Run ``scenario``'s procedure in ``workdir`` with its recorded outputs.

    Recorded file changes land in ``files_dir`` (default ``workdir``), where the
    ``expect.files`` checks look too (and the verification commands run). ``run_options``
    go to ``run_procedure`` and override the scenario's own ``max_iterations``,
    ``context`` and ``failure_threshold``; budgets (``max_cost``, ``max_tokens``) given
    there apply with the scenario's, the smaller winning, so a recording that a budget
    stopped stops at the same iteration on replay. ``sleep`` replays recorded delays.

    The verification commands run inside the sandbox the run resolves to (a ``cli``
    override of ``loop.sandbox`` > the scenario's > the procedure's > ``loop``), as a
    live run's would: a scenario file is code. ``sandbox`` is a kind named for the session
    (``--ooda-sandbox``), above them all. ``run_commands=False`` skips them.
    ``expect.protect``'s paths are put back first as ``source`` (the scenario's
    ``workspace:`` the copy was made from; ``None``: none) holds them, as on a live run.
    ``settings``, a run's settings decided already (``ooda run --replay``'s plan), are
    run as they are; ``run_options`` then only give ``run_loop``'s ``context`` and
    ``on_event``.
    """
    from pytest_ooda.loop import run_loop, run_procedure
    from pytest_ooda.scenario.runs import material_files, run_material, scenario_config

    # The procedure as the scenario runs it: its prompt passed through, its material's
    # files part of the prompt's identity (an edited skill drifts the replay).
    config = scenario_config(config, scenario, material_files(run_material(config, scenario)))
    backend = scenario.replay_backend(sleep=sleep, files_dir=files_dir)
    options: dict[str, Any] = {
        "max_iterations": scenario.max_iterations,
        "context": scenario.context,
        "failure_threshold": scenario.failure_threshold,
        **run_options,
        "max_cost": tightest(scenario.max_cost, run_options.get("max_cost")),
        "max_tokens": tightest(scenario.max_tokens, run_options.get("max_tokens")),
    }
    try:
        if settings is not None:
            procedure = config.procedure(scenario.procedure)
            result = run_loop(procedure, settings, backend=backend, workdir=workdir, **run_options)
        else:
            result = run_procedure(
                config, scenario.procedure, backend=backend, workdir=workdir, **options
            )
    except (ScenarioError, UnicodeEncodeError) as exc:
        raise located_replay_error(scenario, backend, exc) from None
    judged = None
    if scenario.expect is not None and scenario.expect.judge is not None:
        from pytest_ooda.judge import JudgeContext, judge_replay, run_inputs
        from pytest_ooda.redact import Redactor

        # Before the verification commands, which may write into the workspace; redacted
        # as a live run's are, so the recorded verdicts' key still matches.
        redactor = Redactor(
            extra_patterns=config.redact.patterns, extra_env_names=config.redact.env
        )
        inputs = run_inputs(scenario, result, files_dir or workdir, redactor)
        judged = judge_replay(
            scenario, inputs, judge or JudgeContext(config=config), regrade=regrade
        )
    problems = _assess(
        config, scenario, result, files_dir or workdir, (run_commands, sandbox), source
    )
    if judged is not None:
        problems.extend(text for text in (judged.problem, judged.error) if text)
    drifts = tuple(check_drift(scenario, result, config, cwd=workdir)) if drift else ()
    return Replayed(result, tuple(problems), drifts, judged)


def _assess(
    config: Config,
    scenario: Scenario,
    result: LoopResult,
    workspace: Path,
    commands: tuple[bool, str | None],
    source: Path | None,
) -> list[str]:
    """The replay's problems; a sandbox (``commands``: whether they run, the session's
    kind) is started only for verification commands."""
    run_commands, cli = commands
    expect = scenario.expect
    if not run_commands or expect is None or not expect.commands:
        return scenario.assess(result, workspace, run_commands=False, source=source).problems
    from pytest_ooda.config import resolve_sandbox
    from pytest_ooda.sandbox import sandboxed

    spec, _ = resolve_sandbox(config, scenario.procedure, scenario.sandbox, cli=cli)
    with sandboxed(spec, workspace) as sandbox:
        return scenario.assess(result, workspace, sandbox=sandbox, source=source).problems


def located_replay_error(
    scenario: Scenario, backend: ReplayBackend, exc: ScenarioError | UnicodeEncodeError
) -> ScenarioError:
    """The error a refused replay step stands for, at the line of its iteration."""
    iterations = scenario.iterations
    file = str(scenario.path) if scenario.path is not None else None
    if isinstance(exc, ScenarioError) and exc.file is not None:
        if iterations and backend.served == len(iterations):
            return ReplayExhaustedError(
                exc.message,
                served=tuple((it.output, it.exit_code) for it in iterations),
                file=exc.file,
                line=exc.line,
                column=exc.column,
                hint=exc.hint,
            )
        return exc
    if not iterations:
        return exc if isinstance(exc, ScenarioError) else ScenarioError(str(exc), file=file)
    index = min(max(backend.served - 1, 0), len(iterations) - 1)
    line = iterations[index].line
    if isinstance(exc, UnicodeEncodeError):
        # A YAML escape such as "\ud800" yields half a surrogate pair, not a character.
        return ScenarioError(
            f"iterations[{index}]: the text holds {exc.object[exc.start : exc.end]!r}, "
            "which is not a character (a lone surrogate)",
            hint="write the character itself, or a \\U escape of its code point",
            file=file,
            line=line,
        )
    return exc.relocated(message=f"iterations[{index}]: {exc.message}", file=file, line=line)


def agent_cassette(
    scenario: Scenario, path: Path, forced: ReplayKind | None, *, record_hint: str
) -> Path | None:
    """Which replay a scenario gets: the cassette it replays the real agent with (``ooda
    help agent-replay``), or ``None`` for a loop replay. ``forced`` (``--ooda-replay``)
    beats the scenario's ``replay:``, which beats ``loop``; under ``agent`` a scenario
    without a cassette replays the loop, while one that asks for ``replay: agent``
    itself is a ``ScenarioError`` without one (``record_hint`` says how to record it)."""
    from pytest_ooda.apireplay import cassette_path

    cassette = cassette_path(path)
    if (forced or scenario.replay or "loop") == "loop":
        return None
    if cassette.is_file():
        return cassette
    if scenario.replay != "agent":
        return None  # --ooda-replay=agent: a scenario without one replays the loop
    raise ScenarioError(
        f"scenario {scenario.label!r} says replay: agent, but it has no cassette ({cassette.name})",
        file=str(path),
        hint=record_hint,
    )

"""The run's workspace before the agent starts: a fresh git repository holding a copy of
the scenario's workspace and the agent material the plan installs (one commit, so the
agent's changes are the only ones), then the scenario's ``setup:`` commands, run where
the agent will run and left uncommitted (a change for ``/commit`` to find, a fixture
started); and the scenario the run is held to (``expect.protect`` has nothing to put
back from when the run worked in place)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.errors import OodaWarning
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.results import AssertionEntry
    from pytest_ooda.sandbox import SandboxRun
    from pytest_ooda.scenario import Assessment, CommandOutcome, MaterialDir, Scenario

__all__ = ["fired_fields", "fresh_workspace", "no_loop", "run_setup", "scenario_to_assess"]


def fresh_workspace(source: Path | None, material: Sequence[MaterialDir], target: Path) -> Path:
    """``target`` as the run's git repository: ``source`` copied (an empty one when
    ``None``), the ``material`` installed, one commit."""
    import tempfile

    from pytest_ooda.agents import install
    from pytest_ooda.scenario import materialize
    from pytest_ooda.workspace import copy_workspace, git_init

    copy_workspace(source, target)
    for entry in material:
        with tempfile.TemporaryDirectory(prefix="ooda-material-") as scratch:
            install(entry.section, materialize(entry, Path(scratch)), target)
    git_init(target)
    return target


def run_setup(
    plan: RunPlan,
    workdir: Path,
    sandbox: SandboxRun | None,
    redact: Callable[[str], str],
) -> tuple[tuple[CommandOutcome, ...], str | None]:
    """The scenario's ``setup:`` commands, in order, inside ``sandbox``; stops at the
    first that fails. The second value is why the run cannot be made (``setup: …``, an
    infrastructure error: nothing about the prompt would be measured), else ``None``."""
    done: list[CommandOutcome] = []
    for command in plan.scenario.setup:
        outcome = command.verify(workdir, sandbox=sandbox, redact=redact)
        done.append(outcome)
        if outcome.problem is not None:
            from pytest_ooda.backends import infra_reason

            return tuple(done), infra_reason("setup", outcome.problem)
    return tuple(done), None


def no_loop(plan: RunPlan, workdir: Path, reason: str, error: str) -> LoopResult:
    """The loop's result of a run that never started it (its sandbox, its ``setup:``):
    ``aborted``, with the infrastructure's ``reason``."""
    from pytest_ooda.loop import LoopResult, TimingStats

    return LoopResult(
        procedure=plan.procedure.name,
        status="aborted",
        records=(),
        timing=TimingStats(),
        elapsed=0.0,
        max_iterations=plan.settings.max_iterations,
        failure_threshold=plan.settings.failure_threshold,
        workdir=workdir,
        error=error,
        infra_error=reason,
    )


def fired_fields(
    assessment: Assessment, result: LoopResult, setup: tuple[CommandOutcome, ...]
) -> tuple[tuple[AssertionEntry, ...], tuple[str, ...], tuple[CommandOutcome, ...]]:
    """What the record says fired and held: each named assertion of ``expect.activation``
    and ``expect.trajectory``, the activations' labels, the ``setup:`` commands."""
    from pytest_ooda.results import assertion_entries

    labels = tuple(activation.label for activation in result.activations)
    return assertion_entries(assessment.assertions), labels, setup


def scenario_to_assess(scenario: Scenario, in_place: bool, warnings: list[OodaWarning]) -> Scenario:
    """The scenario whose expectations the run is held to. A run ``in_place`` (``ooda
    run`` in the user's own tree) has no source to put protected paths back from: its
    ``expect.protect`` is left out, and a warning says so."""
    from dataclasses import replace

    from pytest_ooda.errors import ScenarioWarning

    expect = scenario.expect
    if not in_place or expect is None or not expect.protect:
        return scenario
    warnings.append(
        ScenarioWarning(
            f"scenario {scenario.label}: expect.protect ({', '.join(expect.protect)}) is not "
            "applied: the run worked in the directory itself, so there is no copy to put "
            "the protected paths back from (pytest -m live runs in a copy)",
            file=str(scenario.path) if scenario.path is not None else None,
        )
    )
    return replace(scenario, expect=replace(expect, protect=()))

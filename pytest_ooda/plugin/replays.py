"""Scenario items (``scenario[<name>]``): a scenario file replayed as a test, and its
glue. A loop replay is the library's (:func:`pytest_ooda.scenario.check_replay`); an
agent replay runs the real agent through the API proxy, answered from the scenario's
cassette (:func:`pytest_ooda.live.run_live`, nothing written). Here their warnings are
issued at the scenario file, a missed expectation becomes the item's failure, and a
failure says how to record the scenario again.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda._util import display_path
from pytest_ooda.errors import NoAICommandError, OodaError, RecordingWarning, ScenarioError
from pytest_ooda.plugin import SESSION
from pytest_ooda.plugin.items import OodaItem, locate_compose_error
from pytest_ooda.plugin.report import ItemFailure, IterationBoundaries, issue_at
from pytest_ooda.plugin.state import PLUGIN_STATE, SKIP_AT_ITEM
from pytest_ooda.settings import DRIFT, REGRADE, REPEAT, REPLAY, REPLAY_COMMANDS, SANDBOX

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pytest_ooda.scenario import ReplayCheck, Scenario


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
        settings = self.config.stash[SESSION]
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
        from pytest_ooda.scenario import agent_cassette, check_replay, load_for

        self.skip_if_broken()
        self.check_unique()
        node = self.procedure_node
        settings = self.config.stash[SESSION]
        state = self.config.stash[PLUGIN_STATE]
        try:
            scenario = load_for(node.procedure.name, self.scenario_path, known=node.known())
            record = f"pytest -m live --ooda-record-api {shlex.quote(self.live_nodeid(scenario))}"
            cassette = agent_cassette(
                scenario, self.scenario_path, settings[REPLAY], record_hint=f"record one: {record}"
            )
            if cassette is not None:
                replay_agent(
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
                empty_dir=state.empty_dir(),
                work_dir=state.work_dir(),
                sandbox=settings[SANDBOX],
                run_commands=settings[REPLAY_COMMANDS] == "run",
                regrade=settings[REGRADE],
                judge_cache=settings.results_dir,
                ignore_dir=settings.ignore_dir,
                rerecord_hint=rerecord_hint(self.live_nodeid),
                scenario=scenario,
            )
        except OodaError as error:
            raise locate_compose_error(error, node.procedure) from None
        if checked.unrecorded:
            self.stash[SKIP_AT_ITEM] = True  # the skip is reported at the scenario's item
        present_replay(checked, self.scenario_path, self.live_nodeid)


def rerecord_hint(live_nodeid: Callable[[Scenario], str]) -> Callable[[Scenario], str]:
    """After a drift: the command that re-records just this scenario (its live item)."""

    def hint(scenario: Scenario) -> str:
        return (
            "  re-record only this scenario: pytest -m live --ooda-record-mode=new "
            f"{shlex.quote(live_nodeid(scenario))}\n  (or drop prompt_sha256 from a "
            "hand-written scenario, or pass --ooda-drift=warn)"
        )

    return hint


def present_replay(
    checked: ReplayCheck, path: Path, live_nodeid: Callable[[Scenario], str] | None = None
) -> None:
    """A replay the library checked (:func:`pytest_ooda.scenario.check_replay`): its
    warnings issued at the scenario file, ``ItemFailure`` when it missed expectations
    — saying how to record it again when what it replays is a recorded failed run."""
    for warning in checked.warnings:
        issue_at(warning, path)
    triggers = checked.scenario.triggers
    if checked.unrecorded and triggers is not None:
        node = live_nodeid(checked.scenario).rpartition("::")[0] if live_nodeid else ""
        pytest.skip(
            f"scenario {checked.scenario.label} is a trigger set: it runs live only, each of "
            f"its {len(triggers.cases())} prompts an item:  pytest -m live "
            + (f"{shlex.quote(node)} " if node else "")
            + f"-k {shlex.quote(checked.scenario.name)}"
        )
    if checked.unrecorded:
        live = shlex.quote(live_nodeid(checked.scenario)) if live_nodeid is not None else ""
        pytest.skip(
            f"scenario {checked.scenario.label} is not recorded yet (iterations: []): record "
            f"it with  pytest -m live --ooda-record-mode=once {live}  (and --ooda-ai-cmd or "
            "--ooda-ai-cmd-alias when the config names no agent), or write its iterations"
        )
    if checked.failure is not None:
        hint = record_again(checked.scenario, live_nodeid) if live_nodeid is not None else None
        raise ItemFailure(checked.failure + (f"\n\n{hint}" if hint else ""))


def record_again(scenario: Scenario, live_nodeid: Callable[[Scenario], str]) -> str | None:
    """For a scenario whose recording is a failed run (it ended otherwise than its
    scenario expects): the command that records it again. ``once`` and ``new`` keep an
    existing recording, so it is ``all``, for this scenario's live item alone."""
    from pytest_ooda.results import failed_run

    recorded = scenario.recorded
    why = failed_run(scenario, recorded.status) if recorded is not None else None
    if why is None:
        return None
    why = why.replace("the run", "the recorded run", 1)
    return (
        f"  this scenario holds a recorded failed run ({why}); record it again with\n"
        f"    pytest -m live --ooda-record-mode=all {shlex.quote(live_nodeid(scenario))}\n"
        "  (once and new keep an existing recording; or set iterations: [] and record once)"
    )


def replay_agent(
    config: pytest.Config,
    *,
    collected: Path,
    procedure: str,
    scenario: Scenario,
    path: Path,
    nodeid: str,
    cassette: Path,
) -> None:
    """An agent replay: the real agent through the API proxy, answered from
    ``cassette``. Nothing is written; a divergence fails the item as one (not as the
    prompt's failure), else the run's missed expectations do."""

    from pytest_ooda import live
    from pytest_ooda.plugin.session_dir import first_said

    try:
        plan = live.plan_run(
            # Nothing of a replay is written: no recording, no cassette.
            config.stash[SESSION].but(record_mode="none", record_api=None),
            procedure,
            scenario,
            collected=collected,
            nodeid=nodeid,
            read_only=True,
            api=live.ApiPlan("replay", cassette),
        )
    except NoAICommandError as missing:
        raise ScenarioError(
            f"scenario {scenario.label!r}: agent replay needs the agent: {missing.message}",
            file=str(path),
        ) from None
    for note in plan.notes:
        if first_said(config, note.message):
            issue_at(note, path)
    boundaries = IterationBoundaries(plan.nodeid or str(path))
    done = live.run_live(plan, on_event=boundaries if plan.settings.show_ai_output else None)
    for warning in done.warnings:
        if not isinstance(warning, RecordingWarning):
            issue_at(warning, path)
    api = done.api
    if api is not None and api.divergence is not None:
        shown = display_path(api.path, config.rootpath)
        raise ItemFailure(
            f"scenario {plan.label}: agent replay of {shown}: {api.divergence}\n\n"
            "  the agent asked the model something the recording never did: re-record "
            "the cassette (pytest -m live --ooda-record-mode=all --ooda-record-api, or "
            "--ooda-record-api=new to keep what still matches), or see "
            "`ooda help agent-replay` (what drift looks like)"
        )
    if done.outcome == "error":
        raise ItemFailure(
            f"scenario {plan.label}: agent replay did not run: {done.error_reason}"
            + (f"\n{done.report}" if done.report else "")
        )
    if done.report:
        raise ItemFailure(done.report)

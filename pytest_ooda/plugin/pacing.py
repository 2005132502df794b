"""Around each live run, on the process that makes it (an xdist worker, or the only
process): whether to make it at all, and what its item reports afterwards.

Before a run: ``--ooda-resume`` skips a run the results directory already holds
(same scenario, prompt and run number, not an ``error``); early stopping skips a run
whose scenario's ``success_rate`` gate the shared tally has already settled; and a
marker holds the run's plan, so that the controller can record (with the one record
builder) and clean up a run whose worker dies. After it: with an aggregate gate a failed
run is a sample (``xfail``) and an infrastructure ``error`` is not counted (``skip``);
without one both fail the item, as a failed run always has.

A note meant once per session (the unattended-agent sandbox note) is said by the first
process to claim it in the session directory, so ``-n 2`` says it once, not per worker.

The session directory all this shares lives in the system's temporary directory: the
controller makes it and hands its path to every worker (``workerinput``), and removes
it at the end.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.state import LIVE_REPORT, PLUGIN_STATE, SKIP_AT_ITEM, LiveReport
from pytest_ooda.settings import RESUME, STOP_EARLY

if TYPE_CHECKING:
    from pytest_ooda.live import LiveRun, RunPlan
    from pytest_ooda.results import RunRecord, SessionStamp


class LiveItem(Protocol):
    """What this module reads of a live item (``plugin.nodes.LiveItem``, which imports
    this module)."""

    config: pytest.Config
    stash: pytest.Stash

    @property
    def nodeid(self) -> str: ...


#: What makes two runs the same run: procedure, scenario, variant, prompt sha256, run k.
RunKey = tuple[str, str, str | None, str, int]

#: The ``workerinput`` keys carrying the session directory and the session's stamp
#: to xdist workers.
WORKER_INPUT = "ooda_session_dir"
WORKER_STAMP = "ooda_session_stamp"


@dataclass
class Pacing:
    """Per-process state (``config.stash[PACING]``)."""

    directory: Path
    owner: bool
    #: What every record of the session says of it: the controller's (the only
    #: process's), handed to each xdist worker.
    stamp: SessionStamp | None = None
    #: ``(procedure, scenario, variant, prompt sha256, run)`` -> the earlier run: a
    #: valid one, else the latest ``error``.
    finished: dict[RunKey, RunRecord] | None = None

    @property
    def tallies(self) -> Path:
        return self.directory / "tallies"

    @property
    def slots(self) -> Path:
        return self.directory / "slots"

    @property
    def runs(self) -> Path:
        return self.directory / "runs"

    @property
    def said(self) -> Path:
        return self.directory / "said"

    def close(self) -> str | None:
        """Remove the session's directory (its owner's); what stays behind, named (a
        file an agent made undeletable in a run's workspace), else ``None``."""
        if not self.owner:
            return None
        from pytest_ooda.workspace import remove_tree

        problem = remove_tree(self.directory)
        if problem is None:
            return None
        return f"the session directory {self.directory} was not removed entirely: {problem}"


PACING = pytest.StashKey[Pacing]()


def pacing(config: pytest.Config) -> Pacing:
    """This process's session state: the controller's directory under xdist, else one
    made here (and removed at the end)."""
    found = config.stash.get(PACING, None)
    if found is not None:
        return found
    workerinput = getattr(config, "workerinput", {})
    given = workerinput.get(WORKER_INPUT)
    if given:
        from pytest_ooda.results import SessionStamp

        stamp = workerinput.get(WORKER_STAMP)
        state = Pacing(
            Path(given),
            owner=False,
            stamp=SessionStamp.from_json(stamp) if stamp is not None else None,
        )
    else:
        state = Pacing(Path(tempfile.mkdtemp(prefix="ooda-session-")), owner=True)
    config.stash[PACING] = state
    return state


def run_key(nodeid: str) -> str:
    return hashlib.sha256(nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def first_said(config: pytest.Config, text: str) -> bool:
    """Whether ``text``, a note said once per session, is said now for the first time:
    the first process to create its marker in the shared session directory says it (an
    exclusive create, so of two xdist workers that reach it together only one does)."""
    said = config.stash[PLUGIN_STATE].said
    if text in said:
        return False
    said.add(text)
    state = pacing(config)
    state.said.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    try:
        os.close(os.open(state.said / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


# --------------------------------------------------------------------------- before


def run_dir(config: pytest.Config, nodeid: str) -> Path:
    """Where the run of item ``nodeid`` makes its files: in the session directory, so
    the controller finds and removes what a crashed worker left."""
    return pacing(config).runs / run_key(nodeid)


def before_run(item: LiveItem, plan: RunPlan, *, marker: bool = True) -> RunPlan:
    """Skip the run when it is resumed or stopped early; else, on an xdist worker, leave
    the marker a crashed worker's controller reads (the run's plan as it travels and
    when it started; not for a run a cluster makes, ``marker=False``) and return the
    plan to run: under
    ``--ooda-resume``, one that names the ``error`` run it makes again (``replaces``:
    reports count the two once)."""
    state = pacing(item.config)
    settings = item.config.stash[PLUGIN_STATE].settings
    if settings[RESUME]:
        earlier = _finished(item, plan, state)
        if earlier is not None and not earlier.valid:
            plan = replace(plan, replaces=earlier.id)
        elif earlier is not None:
            item.stash[LIVE_REPORT] = LiveReport(resumed=earlier.id)
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(
                f"resumed: run {plan.run} of {plan.label} is already in the results "
                f"({earlier.outcome}, session {earlier.session or '?'}); not run again"
            )
    stopped = settled_gate(item.config, plan)
    if stopped is not None:
        item.stash[SKIP_AT_ITEM] = True
        pytest.skip(stopped)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if marker and worker is not None:
        # Only an xdist worker's controller outlives the worker's crash to read it.
        state.runs.mkdir(parents=True, exist_ok=True)
        held = pickle.dumps((plan.travelling(), time.time(), worker))
        (state.runs / f"{run_key(item.nodeid)}.plan").write_bytes(held)
    return plan


def resumed_plan(item: LiveItem, plan: RunPlan) -> RunPlan | None:
    """What :func:`before_run` will make of ``plan``, decided ahead (a cluster's window):
    ``None`` when ``--ooda-resume`` keeps an earlier run instead, else the plan to run
    (naming the ``error`` run it makes again)."""
    if not item.config.stash[PLUGIN_STATE].settings[RESUME]:
        return plan
    earlier = _finished(item, plan, pacing(item.config))
    if earlier is None:
        return plan
    return replace(plan, replaces=earlier.id) if not earlier.valid else None


def after_run(item: LiveItem, done: LiveRun) -> None:
    """The item's verdict: with an aggregate gate the gate decides, so a failed run is
    ``xfail`` (a sample) and an ``error`` run is skipped (not counted); without one a
    failed or errored run fails the item."""
    state = pacing(item.config)
    marker = state.runs / f"{run_key(item.nodeid)}.plan"
    marker.unlink(missing_ok=True)
    gated = done.record.head.aggregate_expect is not None
    if done.outcome == "error":
        reason = done.error_reason or "infrastructure error"
        if gated:
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(
                f"infrastructure error, not counted in the success rate: {reason}"
                + _after(done.record.retries)
            )
        text = (
            f"scenario {done.scenario} run {done.run}/{done.runs}: infrastructure error, not "
            f"the procedure's fault (left out of the success rate): {reason}"
        )
        raise ItemFailure(text + ("\n\n" + done.report if done.report else ""))
    if not done.problems and not done.report:
        return
    if gated:
        first = done.problems[0] if done.problems else done.report.strip().splitlines()[0]
        more = f" (+{len(done.problems) - 1} more)" if len(done.problems) > 1 else ""
        pytest.xfail(
            f"failed run, a sample of the aggregate expectations (which decide): {first}{more}"
        )
    raise ItemFailure(done.report)


def _after(retries: int) -> str:
    if not retries:
        return ""
    return f" (after {retries} retr{'y' if retries == 1 else 'ies'})"


def settled_gate(config: pytest.Config, plan: RunPlan) -> str | None:
    """Why the run is not needed: its scenario's gate is settled already (early
    stopping, by the session's shared tally)."""
    from pytest_ooda.results import tally_counts
    from pytest_ooda.stats import Sprt

    state = pacing(config)
    settings = config.stash[PLUGIN_STATE].settings
    scenario = plan.scenario
    aggregate = scenario.expect.aggregate if scenario.expect is not None else None
    if aggregate is None or aggregate.min_success_rate is None:
        return None
    if not (aggregate.stop_early or settings[STOP_EARLY]):
        return None
    if not 0 < aggregate.min_success_rate < 1:
        return None
    variant = plan.variant.name if plan.variant is not None else None
    key = f"{scenario.name}@{variant}" if variant else scenario.name
    counts = tally_counts(state.tallies, scenario.procedure, key)
    successes, failures = counts["success"], counts["failure"]
    sprt = Sprt(aggregate.min_success_rate)
    verdict = sprt.decide(successes, failures)
    if verdict is None:
        return None
    word = "passed" if verdict else "failed"
    return (
        f"stopped early: {scenario.procedure}/{key}'s success rate gate (min "
        f"{aggregate.min_success_rate:.0%}) is settled as {word} after "
        f"{successes + failures} valid run(s), {successes} successful ({sprt.describe()})"
    )


def _finished(item: LiveItem, plan: RunPlan, state: Pacing) -> RunRecord | None:
    """The earlier valid run this one would repeat: the same scenario, variant, run
    number and first prompt."""
    if state.finished is None:
        state.finished = finished_runs(item.config)
    if not state.finished:
        return None
    prompt = _first_prompt_sha(plan)
    if prompt is None:
        return None
    variant = plan.variant.name if plan.variant is not None else None
    scenario = plan.scenario
    return state.finished.get((scenario.procedure, scenario.name, variant, prompt, plan.run))


def finished_runs(config: pytest.Config) -> dict[RunKey, RunRecord]:
    """The runs of the results directory, by what makes a run the same run: the first
    valid one, else the latest ``error`` (which a resumed session runs again)."""
    found: dict[RunKey, RunRecord] = {}
    for record in sorted(results_records(config), key=lambda item: item.finished_at):
        if record.prompt_sha256 is None:
            continue
        key = (
            record.head.procedure,
            record.head.scenario,
            record.head.variant,
            record.prompt_sha256,
            record.head.run,
        )
        held = found.get(key)
        if held is None or not held.valid:
            found[key] = record
    return found


def results_records(config: pytest.Config, *, warn: bool = False) -> list[RunRecord]:
    """Every record the results directory holds (``--ooda-resume`` reads it); ``warn``:
    say what reading left out (a line nested too deep, a record cut short)."""
    from pytest_ooda.errors import OodaError
    from pytest_ooda.results import read_results

    directory = config.stash[PLUGIN_STATE].settings.results_dir
    if not directory.is_dir():
        return []
    try:
        results = read_results([directory])
    except OodaError as error:
        raise pytest.UsageError(f"--ooda-resume: cannot read the results: {error}") from None
    for warning in results.warnings if warn else ():
        config.issue_config_time_warning(warning, stacklevel=2)
    return list(results.records)


def _first_prompt_sha(plan: RunPlan) -> str | None:
    """The sha256 of the prompt the run's first iteration will receive (the prompt
    version the results key runs by); ``None`` when it cannot be told before running."""
    from pytest_ooda.compose import assemble_prompt, prompt_sha256
    from pytest_ooda.errors import OodaError

    try:
        prompt = assemble_prompt(
            plan.procedure,
            iteration=1,
            max_iterations=plan.settings.max_iterations,
            context=plan.context,
            # The run's workspace is a copy of this directory: the same context files.
            cwd=plan.workdir or plan.workspace or plan.root,
        )
    except OodaError:
        return None
    return prompt_sha256(plan.procedure, prompt)


# --------------------------------------------------------------------------- crashes


def crashed_run(state: Pacing, nodeid: str, message: str) -> RunRecord | None:
    """The results record of a run whose worker died, built from the plan its marker
    holds by the one record builder, and its directory removed; ``None`` when the item
    was no live run of ours."""
    from pytest_ooda.live import unmade_run

    key = run_key(nodeid)
    path = state.runs / f"{key}.plan"
    try:
        plan, started, worker = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        return None
    shutil.rmtree(state.runs / key, ignore_errors=True)
    path.unlink(missing_ok=True)
    return unmade_run(plan, f"worker-crashed: {message}", started=started, worker=worker).record

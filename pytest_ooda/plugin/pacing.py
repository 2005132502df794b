"""Around each live run, on the process that makes it (an xdist worker, or the only
process): whether to make it at all, and what its item reports afterwards.

Before a run: ``--ooda-resume`` skips a run the results directory already holds
(same scenario, prompt and run number, not an ``error``); early stopping skips a run
whose scenario's ``success_rate`` gate the shared tally has already settled; and a
marker names the run's directory, so that the controller can record and clean up a run
whose worker dies. After it: with an aggregate gate a failed run is a sample (``xfail``)
and an infrastructure ``error`` is not counted (``skip``); without one both fail the
item, as a failed run always has.

A note meant once per session (the unattended-agent sandbox note) is said by the first
process to claim it in the session directory, so ``-n 2`` says it once, not per worker.

The session directory all this shares lives in the system's temporary directory: the
controller makes it and hands its path to every worker (``workerinput``), and removes
it at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.state import PLUGIN_STATE, SKIP_AT_ITEM

if TYPE_CHECKING:
    from pytest_ooda.evaluate import RunRecord
    from pytest_ooda.live import LiveRun
    from pytest_ooda.scenario import Scenario


class LiveItem(Protocol):
    """What this module reads of a live item (``plugin.nodes.LiveItem``, which imports
    this module)."""

    config: pytest.Config
    stash: pytest.Stash
    user_properties: list[tuple[str, object]]
    run_index: int
    run_count: int
    scenario_path: Path

    @property
    def nodeid(self) -> str: ...

    @property
    def procedure_node(self) -> Any: ...


#: What makes two runs the same run: procedure, scenario, variant, prompt sha256, run k.
RunKey = tuple[str, str, str | None, str, int]

#: The ``workerinput`` key carrying the session directory to xdist workers.
WORKER_INPUT = "ooda_session_dir"
#: A resumed item's user property: the id of the earlier run that stands for it.
RESUMED_PROPERTY = "ooda_resumed"
#: The user property naming the ``error`` run a resumed session runs again.
REPLACES_PROPERTY = "ooda_replaces"


@dataclass
class Pacing:
    """Per-process state (``config.stash[PACING]``)."""

    directory: Path
    owner: bool
    #: ``(procedure, scenario, variant, prompt sha256, run)`` -> the earlier run: a
    #: valid one, else the latest ``error``.
    finished: dict[RunKey, RunRecord] | None = None
    prompts: dict[Path, str | None] = field(default_factory=dict)

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

    def close(self) -> None:
        if self.owner:
            shutil.rmtree(self.directory, ignore_errors=True)


PACING = pytest.StashKey[Pacing]()


def pacing(config: pytest.Config) -> Pacing:
    """This process's session state: the controller's directory under xdist, else one
    made here (and removed at the end)."""
    found = config.stash.get(PACING, None)
    if found is not None:
        return found
    given = getattr(config, "workerinput", {}).get(WORKER_INPUT)
    if given:
        state = Pacing(Path(given), owner=False)
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


def before_run(item: LiveItem, scenario: Scenario) -> Path:
    """Skip the run when it is resumed or stopped early; else leave the marker a
    crashed worker's controller reads, and return the directory the run's files go in."""
    state = pacing(item.config)
    settings = item.config.stash[PLUGIN_STATE].settings
    if settings.resume:
        earlier = _finished(item, scenario, state)
        if earlier is not None and not earlier.valid:
            # Run again; the new record replaces this one in every report.
            item.user_properties.append((REPLACES_PROPERTY, earlier.id))
        elif earlier is not None:
            item.user_properties.append((RESUMED_PROPERTY, earlier.id))
            item.stash[SKIP_AT_ITEM] = True
            pytest.skip(
                f"resumed: run {item.run_index} of {scenario.label} is already in the results "
                f"({earlier.outcome}, session {earlier.session or '?'}); not run again"
            )
    stopped = _settled(item, scenario, state)
    if stopped is not None:
        item.stash[SKIP_AT_ITEM] = True
        pytest.skip(stopped)
    key = run_key(item.nodeid)
    directory = state.runs / key
    state.runs.mkdir(parents=True, exist_ok=True)
    marker = {
        "nodeid": item.nodeid,
        "procedure": scenario.procedure,
        "scenario": scenario.name,
        "scenario_file": str(scenario.path) if scenario.path is not None else None,
        "run": item.run_index,
        "runs": item.run_count,
        "worker": os.environ.get("PYTEST_XDIST_WORKER"),
        "started_at": time.time(),
        "directory": str(directory),
        "aggregate_expect": (
            scenario.expect.aggregate.to_yaml()
            if scenario.expect is not None and scenario.expect.aggregate is not None
            else None
        ),
    }
    (state.runs / f"{key}.json").write_text(json.dumps(marker), encoding="utf-8")
    return directory


def after_run(item: LiveItem, done: LiveRun) -> None:
    """The item's verdict: with an aggregate gate the gate decides, so a failed run is
    ``xfail`` (a sample) and an ``error`` run is skipped (not counted); without one a
    failed or errored run fails the item."""
    state = pacing(item.config)
    marker = state.runs / f"{run_key(item.nodeid)}.json"
    marker.unlink(missing_ok=True)
    gated = done.record.aggregate_expect is not None
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


def _settled(item: LiveItem, scenario: Scenario, state: Pacing) -> str | None:
    """Why the run is not needed: its scenario's gate is settled already."""
    from pytest_ooda.evaluate import Sprt, tally_counts

    settings = item.config.stash[PLUGIN_STATE].settings
    aggregate = scenario.expect.aggregate if scenario.expect is not None else None
    if aggregate is None or aggregate.min_success_rate is None:
        return None
    if not (aggregate.stop_early or settings.stop_early):
        return None
    if not 0 < aggregate.min_success_rate < 1:
        return None
    variant = getattr(getattr(item, "variant", None), "name", None)
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


def _finished(item: LiveItem, scenario: Scenario, state: Pacing) -> RunRecord | None:
    if state.finished is None:
        state.finished = finished_runs(item.config)
    if not state.finished:
        return None
    prompt = state.prompts.get(item.scenario_path)
    if item.scenario_path not in state.prompts:
        prompt = _first_prompt_sha(item, scenario)
        state.prompts[item.scenario_path] = prompt
    if prompt is None:
        return None
    variant = getattr(item, "variant", None)
    name = getattr(variant, "name", None)
    return state.finished.get((scenario.procedure, scenario.name, name, prompt, item.run_index))


def finished_runs(config: pytest.Config) -> dict[RunKey, RunRecord]:
    """The runs of the results directory, by what makes a run the same run: the first
    valid one, else the latest ``error`` (which a resumed session runs again)."""
    found: dict[RunKey, RunRecord] = {}
    for record in sorted(results_records(config), key=lambda item: item.finished_at):
        if record.prompt_sha256 is None:
            continue
        key = (record.procedure, record.scenario, record.variant, record.prompt_sha256, record.run)
        held = found.get(key)
        if held is None or not held.valid:
            found[key] = record
    return found


def results_records(config: pytest.Config, *, warn: bool = False) -> list[RunRecord]:
    """Every record the results directory holds (``--ooda-resume`` reads it); ``warn``:
    say what reading left out (a line nested too deep, a record cut short)."""
    from pytest_ooda.errors import OodaError
    from pytest_ooda.evaluate import read_results
    from pytest_ooda.plugin.options import DEFAULT_RESULTS_DIR

    settings = config.stash[PLUGIN_STATE].settings
    directory = settings.results_dir or settings.rootpath.joinpath(*DEFAULT_RESULTS_DIR)
    if not directory.is_dir():
        return []
    try:
        results = read_results([directory])
    except OodaError as error:
        raise pytest.UsageError(f"--ooda-resume: cannot read the results: {error}") from None
    for warning in results.warnings if warn else ():
        config.issue_config_time_warning(warning, stacklevel=2)
    return list(results.records)


def _first_prompt_sha(item: LiveItem, scenario: Scenario) -> str | None:
    """The sha256 of the prompt the run's first iteration would receive (the prompt
    version the results key runs by); ``None`` when it cannot be told before running."""
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.errors import OodaError
    from pytest_ooda.scenario import sha256_text, workspace_of

    config = item.procedure_node.loaded.config
    root = item.config.rootpath
    try:
        limit = scenario.max_iterations
        if limit is None:
            limit = resolve_run_settings(
                config, scenario.procedure, require_ai=False
            ).max_iterations
        # The run's workspace is a copy of this directory: the same context files.
        cwd = workspace_of(scenario, root=root) or root
        prompt = assemble_prompt(
            config.procedure(scenario.procedure),
            iteration=1,
            max_iterations=limit,
            context=scenario.context,
            cwd=cwd,
        )
    except OodaError:
        return None
    return sha256_text(prompt)


# --------------------------------------------------------------------------- crashes


def crashed_run(state: Pacing, nodeid: str, message: str, *, root: Path) -> dict[str, Any] | None:
    """The results record (JSON) of a run whose worker died, from the marker it left,
    and its directory removed; ``None`` when the item was no live run of ours."""
    from pytest_ooda import __version__
    from pytest_ooda._util import display_path
    from pytest_ooda.evaluate import SCHEMA, SCHEMA_VERSION, timestamp

    key = run_key(nodeid)
    path = state.runs / f"{key}.json"
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    shutil.rmtree(state.runs / key, ignore_errors=True)
    path.unlink(missing_ok=True)
    now = time.time()
    started = float(marker.get("started_at") or now)
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "id": f"crash-{key}-{int(now * 1000)}",
        "started_at": timestamp(started),
        "finished_at": timestamp(now),
        "pytest_ooda": __version__,
        "worker": marker.get("worker"),
        "nodeid": nodeid,
        "procedure": marker["procedure"],
        "scenario": marker["scenario"],
        "scenario_file": (
            display_path(Path(marker["scenario_file"]), root)
            if marker.get("scenario_file")
            else None
        ),
        "run": marker["run"],
        "runs": marker["runs"],
        "status": "interrupted",
        "outcome": "error",
        "error_reason": f"worker-crashed: {message}",
        "iteration_count": 0,
        "elapsed_s": round(now - started, 3),
        "iterations": [],
        "files_changed": {},
        "problems": [],
        "aggregate_expect": marker.get("aggregate_expect"),
        "error": message,
    }

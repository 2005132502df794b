"""What a worker runs, here in this process with a ledger kept in memory: a plan made
for the project runs from the worker's unpacked copy of it (the real loop, a real agent
subprocess), its record names the worker, and its recording points back at the
project's scenario file; the ledger's refusals stop the run before it starts; a job's
plan carries only its own procedure of the config. The ledgers of the engines
themselves, called as their clusters call them."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.executors import NotRun, Ran, job_for, pack_source, run_attempt
from pytest_ooda.live import plan_run
from pytest_ooda.scenario import load_for
from pytest_ooda.settings import session_settings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from pytest_ooda._types import RecordMode
    from pytest_ooda.live import RunPlan

CONFIG = """\
procedures:
  greet:
    observe:
      - path: prompts/observe.md
    orient:
      - content: "Orient."
    decide:
      - content: "Decide."
    act:
      - content: "Say hello, then <promise>SUCCESS</promise>."
"""
AGENT = """\
import os, sys
sys.stdin.read()
open("hello.txt", "w").write(os.getcwd())
print("hello <promise>SUCCESS</promise>")
"""


class MemoryLedger:
    """A ledger in this process: what the engines keep on the cluster."""

    def __init__(self, refuse: str | None = None) -> None:
        self.refuse = refuse
        self.begun: list[str] = []
        self.held: list[tuple[str, int]] = []

    def begin(self, ticket: str, where: str) -> str | None:
        self.begun.append(ticket)
        return self.refuse

    @contextlib.contextmanager
    def hold(self, agent: str, limit: int, ticket: str) -> Iterator[float]:
        self.held.append((agent, limit))
        yield 0.25

    def where(self) -> str:
        return "memory:here"


def _plan(root: Path, *, record_mode: RecordMode = "none", cap: int | None = None) -> RunPlan:
    (root / "prompts").mkdir(parents=True)
    (root / "scenarios/greet/ws").mkdir(parents=True)
    (root / "ooda-config.yml").write_text(CONFIG)
    (root / "prompts/observe.md").write_text("Look around.\n")
    (root / "agent.py").write_text(AGENT)
    (root / "scenarios/greet/ws/README").write_text("the workspace\n")
    scenario_file = root / "scenarios/greet/s.yml"
    scenario_file.write_text(
        "procedure: greet\nmax_iterations: 1\nworkspace: ws\n"
        "expect:\n  status: success\n  files: {hello.txt: {exists: true}}\niterations: []\n"
    )
    session = session_settings(
        root,
        ai_cmd=f"{sys.executable} {root / 'agent.py'}",
        record_mode=record_mode,
        max_concurrent=cap,
    )
    scenario = load_for("greet", scenario_file)
    return plan_run(session, "greet", scenario, collected=root / "ooda-config.yml")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OODA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_run_is_made_from_the_workers_copy_and_points_back(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "project"
    plan = _plan(root, record_mode="all")
    ledger = MemoryLedger()
    answer = run_attempt("run-1", job_for(plan), pack_source(root), ledger)
    assert isinstance(answer, Ran), answer
    done = answer.value
    assert answer.where == "memory:here"
    assert ledger.begun == ["run-1"]
    assert done.outcome == "success"
    assert done.record.head.worker == "memory:here"
    assert done.record.head.scenario_file == "scenarios/greet/s.yml"
    # The fragment and the workspace came from the unpacked copy.
    (copy,) = (cache / "sources").iterdir()
    assert (copy / "prompts/observe.md").is_file()
    assert "Look around." in done.result.records[0].prompt
    # The recording is the controller's to write, to the project's own file.
    assert done.recording is not None
    assert done.recording.path == root / "scenarios/greet/s.yml"


def test_a_refused_attempt_never_starts(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "project"
    plan = _plan(root)
    for reason, cancelled in (("cancelled", True), ("the worker running it (x) was lost", False)):
        answer = run_attempt("t", job_for(plan), pack_source(root), MemoryLedger(reason))
        assert answer == NotRun(reason, cancelled=cancelled)
    assert not (cache / "sources").exists()  # refused before anything was unpacked


def test_under_a_cap_the_slot_comes_first_then_the_claim(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "project"
    plan = _plan(root, cap=3)
    ledger = MemoryLedger()
    answer = run_attempt("t", job_for(plan), pack_source(root), ledger)
    assert isinstance(answer, Ran)
    assert ledger.held == [(f"{sys.executable} {root / 'agent.py'}", 3)]
    assert answer.value.record.queued_s == 0.25
    refused = run_attempt("u", job_for(plan), pack_source(root), MemoryLedger("cancelled"))
    assert refused == NotRun("cancelled", cancelled=True)


def test_a_job_carries_only_its_own_procedure(tmp_path: Path) -> None:
    plan = _plan(tmp_path / "project")
    assert len(plan.config.procedures) > 1  # the built-ins too
    job = job_for(plan)
    assert list(job.plan.config.procedures) == ["greet"]
    assert all(
        not key.startswith("procedures.") or key.startswith("procedures.greet.")
        for key in job.plan.config.provenance
    )
    assert job.plan.run_id == plan.run_id
    assert job.plan.config.loop == plan.config.loop


def test_the_ray_ledger_actor_claims_and_counts() -> None:
    from pytest_ooda.executors.ray_engine import LedgerActor

    async def scenario() -> None:
        ledger = LedgerActor()
        assert await ledger.begin("a-1", "node-1") is None
        assert await ledger.begin("a-1", "node-2") == "the worker running it (node-1) was lost"
        assert await ledger.cancel("a-1") is False
        assert await ledger.cancel("b-1") is True
        assert await ledger.begin("b-1", "node-1") == "cancelled"
        await ledger.acquire("agent", 1, "a-1")
        waiting = asyncio.ensure_future(ledger.acquire("agent", 1, "c-1"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        await ledger.release("a-1")  # the controller frees a lost worker's slot too
        await asyncio.wait_for(waiting, 1)
        await ledger.release("nobody")

    asyncio.run(scenario())


def test_the_dask_ledger_claims_on_the_scheduler() -> None:
    pytest.importorskip("distributed")
    from pytest_ooda.executors import dask_ledger

    class Scheduler:
        def __init__(self) -> None:
            self.plugins = {"p": dask_ledger.Claims("p")}

    scheduler = Scheduler()

    assert dask_ledger.begin("a-1", "w1", "p", dask_scheduler=scheduler) is None
    assert "(w1) was lost" in str(dask_ledger.begin("a-1", "w2", "p", dask_scheduler=scheduler))
    assert dask_ledger.cancel("a-1", "p", dask_scheduler=scheduler) is False
    assert dask_ledger.cancel("b-1", "p", dask_scheduler=scheduler) is True
    assert dask_ledger.begin("b-1", "w1", "p", dask_scheduler=scheduler) == "cancelled"

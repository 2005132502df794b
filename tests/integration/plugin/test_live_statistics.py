"""Repeated live runs of a seeded random agent (a real subprocess): the statistics the
session prints and logs, ``ooda report`` and ``ooda compare``, checked against values
computed independently — the agent's own draws, ``scipy.stats`` and brute force."""

from __future__ import annotations

import importlib.util
import itertools
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from scipy import stats as scipy_stats

from pytest_ooda.cli import main as ooda
from pytest_ooda.results import read_results
from pytest_ooda.stats import summarize

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "random_agent.py"
RUNS, MAX_ITERATIONS = 20, 2
SEED, P_GOOD, P_BAD = 7, 0.55, 0.12


def _agent_module() -> Any:
    spec = importlib.util.spec_from_file_location("random_agent", AGENT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected(p: float) -> list[int | None]:
    runs: list[int | None] = _agent_module().expected_runs(SEED, p, RUNS, MAX_ITERATIONS)
    return runs


def scenario(min_rate: float) -> str:
    return (
        f"procedure: greet\nmax_iterations: {MAX_ITERATIONS}\nrepeat: {RUNS}\n"
        f"expect:\n  success_rate: {{min: {min_rate}}}\n  max_mean_iterations: 2\n"
        "iterations: []\n"
    )


def live_session(
    project: Project, p: float, state: Path, results: str, *xdist: str
) -> pytest.RunResult:
    command = f"{sys.executable} {AGENT} {state} {SEED} {p}"
    return project.run("-m", "live", "--ooda-ai-cmd", command, f"--ooda-results={results}", *xdist)


def brute_force(outcomes: list[bool], k: int) -> tuple[float, float]:
    """(pass^k, pass@k) as the fraction of all k-subsets of the runs that all / any
    succeeded — the quantity the unbiased estimators estimate, counted directly."""
    subsets = list(itertools.combinations(outcomes, k))
    return (
        sum(all(subset) for subset in subsets) / len(subsets),
        sum(any(subset) for subset in subsets) / len(subsets),
    )


def test_repeated_runs_measured_end_to_end(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two sessions of 20 runs (a good and a bad agent), then report and compare: one
    test, because each session is the expensive part."""
    good = expected(P_GOOD)
    rate = sum(run is not None for run in good) / RUNS
    project.scenario("coin", scenario(min_rate=round(rate - 0.1, 2)))
    # One session in one process, the other spread over two xdist workers.
    base = live_session(project, P_GOOD, tmp_path / "state-base", "results/base")
    new = live_session(project, P_BAD, tmp_path / "state-new", "results/new", "-n", "2")
    check_session_statistics(project, base)
    check_missed_gate(new)
    check_report_and_compare(project, capsys)


def check_session_statistics(project: Project, base: pytest.RunResult) -> None:
    runs = expected(P_GOOD)
    outcomes = [run is not None for run in runs]
    successes = sum(outcomes)
    iterations = [run if run is not None else MAX_ITERATIONS for run in runs]
    # Every run passes on its own (no per-run status expected); the gate is met.
    base.assert_outcomes(passed=RUNS, deselected=7)
    assert base.ret == pytest.ExitCode.OK

    [found] = summarize(read_results([project.path / "results/base"]).records, k=3)
    assert (found.runs, found.successes) == (RUNS, successes)
    wilson = scipy_stats.binomtest(successes, RUNS).proportion_ci(0.95, method="wilson")
    assert found.interval == pytest.approx((wilson.low, wilson.high), abs=1e-12)
    pass_hat, pass_at = brute_force(outcomes, 3)
    assert found.pass_hat_k == pytest.approx(pass_hat, abs=1e-12)
    assert found.pass_at_k == pytest.approx(pass_at, abs=1e-12)
    assert found.iterations_mean == pytest.approx(statistics.fmean(iterations))
    assert found.iterations_median == statistics.median(iterations)
    assert found.iterations_max == max(iterations)
    assert dict(found.statuses) == {
        key: value
        for key, value in (("success", successes), ("max-iters", RUNS - successes))
        if value
    }
    assert {record.head.worker for record in found.records} == {None}

    # The session's table shows the same numbers, as printed.
    base.stdout.fnmatch_lines(
        [
            f"greet/coin  *{RUNS}  *{successes}  *{successes / RUNS:.0%}  "
            f"{wilson.low:.0%}–{wilson.high:.0%}  *{pass_hat:.2f}  *{pass_at:.2f}  "
            f"{statistics.fmean(iterations):.2f}/*  success {successes}, "
            f"failure {RUNS - successes} (max-iters {RUNS - successes})",
            "gate passed greet/coin: success rate >= *, mean iterations <= 2",
        ]
    )


def check_missed_gate(new: pytest.RunResult) -> None:
    successes = sum(run is not None for run in expected(P_BAD))
    # Each run passes on its own; the aggregate expectation fails the session.
    # Under xdist the controller judges the runs of every worker.
    new.assert_outcomes(passed=RUNS)
    assert new.ret == pytest.ExitCode.TESTS_FAILED
    new.stdout.fnmatch_lines(
        [f"gate FAILED greet/coin: success rate {successes / RUNS:.0%} ({successes}/{RUNS}, *"]
    )


def check_report_and_compare(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    workers = {
        record.head.worker for record in read_results([project.path / "results/new"]).records
    }
    assert workers
    assert workers <= {"gw0", "gw1"}
    base = sum(run is not None for run in expected(P_GOOD))
    new = sum(run is not None for run in expected(P_BAD))
    results = project.path / "results"
    capsys.readouterr()

    # Both sessions merged: the gate is judged over all 40 runs.
    code = ooda(["report", "--check", "--markdown", str(results)])
    out = capsys.readouterr().out
    total = base + new
    merged = scipy_stats.binomtest(total, 2 * RUNS).proportion_ci(0.95, method="wilson")
    assert f"| greet/coin | {2 * RUNS} | {total} | 0 | {total / (2 * RUNS):.0%} | " in out
    assert f"{merged.low:.0%}–{merged.high:.0%}" in out
    assert code == (1 if total / (2 * RUNS) < round(base / RUNS - 0.1, 2) else 0)

    # The two sides are two agents on purpose (their command lines ask for other odds):
    # their fingerprints' settings differ, which the comparison is told to allow.
    drift = ("--allow-drift", "settings")
    code = ooda(["compare", str(results / "base"), str(results / "new"), *drift])
    out = capsys.readouterr().out
    p_value = scipy_stats.fisher_exact([[base, RUNS - base], [new, RUNS - new]]).pvalue
    assert f"{p_value:.4f}" in out
    # The seeds were chosen so that the drop is significant at 0.05.
    assert p_value < 0.05
    assert new < base
    assert code == 1
    assert "1 scenario(s) regressed significantly" in out
    # At a level below the p-value the same drop is no significant regression.
    stricter = f"{p_value / 2:.3g}"
    stricter_args = ["--alpha", stricter, *drift]
    assert ooda(["compare", str(results / "base"), str(results / "new"), *stricter_args]) == 0

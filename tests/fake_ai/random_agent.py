#!/usr/bin/env python3
"""A fake agent whose success is random with a fixed seed, for measuring tests.

Usage: ``random_agent.py STATE_DIR SEED P``. Every run (a fresh workspace) takes the
next run number from ``STATE_DIR/counter`` under an exclusive lock, so N runs are runs
0 … N-1 whatever order or process they run in; iteration ``i`` of run ``r`` signals
SUCCESS when ``draw(SEED, r, i) < P`` and otherwise just reports progress. Each
iteration appends a line to ``work.txt`` (a workspace change); the run number and the
iteration count are kept under ``.git/``, which is no workspace change.

A test computes what N runs must give from :func:`draw` alone, independently of the
harness it checks.
"""

from __future__ import annotations

import fcntl
import random
import sys
from pathlib import Path


def draw(seed: int, run: int, iteration: int) -> float:
    return random.Random(f"{seed}:{run}:{iteration}").random()


def expected_runs(seed: int, p: float, runs: int, max_iterations: int) -> list[int | None]:
    """Per run, the iteration that succeeds (``None``: none within the limit)."""
    out: list[int | None] = []
    for run in range(runs):
        out.append(
            next(
                (i for i in range(1, max_iterations + 1) if draw(seed, run, i) < p),
                None,
            )
        )
    return out


def _next_run(state: Path) -> int:
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "counter.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = state / "counter"
        run = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(run + 1))
    return run


def main() -> int:
    state, seed, p = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    sys.stdin.read()
    mine = Path(".git") / "ooda-test-run"
    if mine.exists():
        run, iteration = (int(part) for part in mine.read_text().split())
    else:
        run, iteration = _next_run(state), 0
    iteration += 1
    mine.write_text(f"{run} {iteration}")
    with open("work.txt", "a") as work:
        work.write(f"run {run} iteration {iteration}\n")
    print(f"run {run} iteration {iteration}")
    if draw(seed, run, iteration) < p:
        print("<promise>SUCCESS</promise>")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of repeated live runs: harness overhead per run, and scaling with xdist.

A scenario repeated 200 times (``repeat: 200``) runs against a fast fake agent — a real
Python subprocess that reads the prompt and prints ``<promise>SUCCESS</promise>`` — as
``pytest -m live`` sessions:

1. Baselines, measured in the same run: the agent started 200 times directly
   (``subprocess.run`` with a prompt on stdin, each in a fresh empty directory), i.e.
   what the runs cost without any harness; and one ``python -c pass`` start (the
   median of 21), the unit the harness's cost is given in.
2. Harness cost per run: the slope ``(T(200 runs) - T(50 runs)) / 150`` of a session
   without xdist, which removes pytest's start-up and collection, minus the bare
   agent's slope over the same counts: a fresh workspace (a copy made a git
   repository), prompt assembly, stat walks, the results record with redaction, the
   report and the log line. Goal: at most 0.7x one ``python -c pass`` start, in every
   pass (round).
3. Scaling: the same slope with ``-n 2``; goal: at least 1.6x faster per run than
   without xdist on 2 cores, in every pass.

Each figure is given in wall time and in CPU time (user + system of the processes and
of every process they waited for, from ``getrusage``): on a machine others share, wall
time measures the others too, and the CPU ratio is the one to read.

Measure in a fresh virtual environment as a user installs it (``python -m venv v &&
v/bin/pip install . pytest-xdist``), in which this script runs: ``v/bin/python
benchmarks/bench_live.py [--small 50] [--runs 200] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from quick import parse

if TYPE_CHECKING:
    from collections.abc import Callable

CONFIG = """\
procedures:
  fast:
    observe:
      - content: "Look at the workspace."
    orient:
      - content: "Decide what matters."
    decide:
      - content: "Pick one thing."
    act:
      - content: "Do it, then print <promise>SUCCESS</promise> (or <promise>FAILURE</promise>)."
"""
AGENT = """\
import sys
sys.stdin.read()
print("done\\n<promise>SUCCESS</promise>")
"""
PROMPT = "x" * 600


def project(root: Path, runs: int) -> str:
    (root / "scenarios/fast").mkdir(parents=True)
    (root / "ooda-config.yml").write_text(CONFIG, encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "scenarios/fast/s.yml").write_text(
        "procedure: fast\nexpect: {status: success}\niterations: []\n", encoding="utf-8"
    )
    return f"{sys.executable} {root / 'agent.py'}"


class Cost(NamedTuple):
    """Seconds of wall time and of CPU time (this process's children's, as waited for)."""

    wall: float
    cpu: float

    def __sub__(self, other: tuple[float, ...]) -> Cost:
        return Cost(self.wall - other[0], self.cpu - other[1])

    def __truediv__(self, other: float) -> Cost:
        return Cost(self.wall / other, self.cpu / other)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _Timed:
    """The wall and children's CPU time of a block."""

    def __enter__(self) -> _Timed:
        self.start = Cost(time.perf_counter(), _children_cpu())
        return self

    def __exit__(self, *exc: object) -> None:
        self.cost = Cost(time.perf_counter(), _children_cpu()) - self.start


def baseline(command: str, runs: int) -> Cost:
    """The cost of ``runs`` direct starts of the agent."""
    argv = command.split()
    with tempfile.TemporaryDirectory(prefix="bench-live-base-") as tmp, _Timed() as timed:
        for index in range(runs):
            workdir = Path(tmp) / str(index)
            workdir.mkdir()
            subprocess.run(
                argv, input=PROMPT, text=True, capture_output=True, cwd=workdir, check=True
            )
    return timed.cost


def python_start(starts: int = 21) -> Cost:
    """One ``python -c pass`` start: the median wall time and the mean CPU time of
    ``starts``."""
    walls = []
    with _Timed() as timed:
        for _ in range(starts):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            walls.append(time.perf_counter() - started)
    return Cost(statistics.median(walls), timed.cost.cpu / starts)


def session(root: Path, command: str, runs: int, workers: int | None) -> Cost:
    """The cost of one ``pytest -m live`` session of ``runs`` runs."""
    env = {**os.environ, "OODA_CONFIG_HOME": str(root / ".no-global-config")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-m",
        "live",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-p",
        "no:benchmark",
        f"--ooda-ai-cmd={command}",
        f"--ooda-repeat={runs}",
        f"--ooda-results={root / 'results'}",
    ]
    argv += ["-p", "no:xdist"] if workers is None else ["-n", str(workers)]
    with _Timed() as timed:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or f"{runs} passed" not in done.stdout:
        raise SystemExit(
            f"session failed ({' '.join(argv)}):\n{done.stdout[-3000:]}\n{done.stderr}"
        )
    return timed.cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse(parser, small=2, runs=4, rounds=1)
    small, runs, rounds = args.small, args.runs, args.rounds
    extra = runs - small
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        root = Path(tmp)
        command = project(root, runs)
        session(root, command, 1, None)  # warm-up: bytecode caches, git, the page cache
        print(f"cores: {os.cpu_count()}; python: {sys.executable}")
        print(f"fake agent (a Python subprocess); slopes between N={small} and N={runs} runs")
        # Interleaved, so a busy moment of the machine hits every measurement alike.
        plan: dict[str, Callable[[int], Cost]] = {
            "bare agent": lambda n: baseline(command, n),
            "no xdist": lambda n: session(root, command, n, None),
            "-n 2": lambda n: session(root, command, n, 2),
        }
        passes = []
        for index in range(rounds):
            start = python_start()
            slope = {
                label: (measure(runs) - measure(small)) / extra for label, measure in plan.items()
            }
            harness = slope["no xdist"] - slope["bare agent"]
            passes.append((start, slope, harness))
            print(
                f"pass {index + 1}: python -c pass {start.wall * 1000:.1f} ms wall, "
                f"{start.cpu * 1000:.1f} ms CPU; bare agent {slope['bare agent'].wall * 1000:.1f}"
                f" ms/run; no xdist {slope['no xdist'].wall * 1000:.1f} ms/run -> harness "
                f"{harness.wall * 1000:.1f} ms wall = {harness.wall / start.wall:.2f}x, "
                f"{harness.cpu * 1000:.1f} ms CPU = {harness.cpu / start.cpu:.2f}x python -c pass"
                f" (goal <= 0.7x); -n 2 {slope['-n 2'].wall * 1000:.1f} ms/run (wall, two "
                f"workers) -> {slope['no xdist'].wall / slope['-n 2'].wall:.2f}x per run"
            )
        for kind in ("wall", "cpu"):
            ratios = [getattr(harness, kind) / getattr(start, kind) for start, _, harness in passes]
            print(
                f"harness / python -c pass ({kind}), every pass: "
                f"{', '.join(f'{r:.2f}x' for r in ratios)} -> "
                f"{'met' if max(ratios) <= 0.7 else 'MISSED'} (goal <= 0.7x)"
            )
        speedups = [slope["no xdist"].wall / slope["-n 2"].wall for _, slope, _ in passes]
        print(
            f"-n 2 speed-up per run, every pass: {', '.join(f'{r:.2f}x' for r in speedups)} "
            f"-> {'met' if min(speedups) >= 1.6 else 'MISSED'} (goal >= 1.6x; cores: "
            f"{os.cpu_count()})"
        )


if __name__ == "__main__":
    main()

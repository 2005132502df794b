"""Benchmark of repeated live runs: harness overhead per run, and scaling with xdist.

A scenario repeated 200 times (``repeat: 200``) runs against a fast fake agent — a real
Python subprocess that reads the prompt and prints ``<promise>SUCCESS</promise>`` — as
``pytest -m live`` sessions:

1. Baseline, measured in the same run: the agent started 200 times directly
   (``subprocess.run`` with a prompt on stdin, each in a fresh empty directory), i.e.
   what the runs cost without any harness.
2. Harness cost per run: the slope ``(T(200 runs) - T(50 runs)) / 150`` of a session
   without xdist, which removes pytest's start-up and collection, minus the bare
   agent's slope over the same counts: a fresh workspace (a copy made a git
   repository), prompt assembly, stat walks, the results record with redaction, the
   report and the log line. Goal: at most 10 ms per run.
3. Scaling: the same slope with ``-n 2``; goal: at least 1.6x faster per run than
   without xdist on 2 cores.

Measure in a fresh virtual environment as a user installs it (``python -m venv v &&
v/bin/pip install . pytest-xdist``), in which this script runs: ``v/bin/python
benchmarks/bench_live.py [--small 50] [--runs 200] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def baseline(command: str, runs: int) -> float:
    """Seconds for ``runs`` direct starts of the agent."""
    argv = command.split()
    with tempfile.TemporaryDirectory(prefix="bench-live-base-") as tmp:
        started = time.perf_counter()
        for index in range(runs):
            workdir = Path(tmp) / str(index)
            workdir.mkdir()
            subprocess.run(
                argv, input=PROMPT, text=True, capture_output=True, cwd=workdir, check=True
            )
        return time.perf_counter() - started


def session(root: Path, command: str, runs: int, workers: int | None) -> float:
    """Wall time of one ``pytest -m live`` session of ``runs`` runs."""
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
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or f"{runs} passed" not in done.stdout:
        raise SystemExit(
            f"session failed ({' '.join(argv)}):\n{done.stdout[-3000:]}\n{done.stderr}"
        )
    return elapsed


def median_of(rounds: int, measure: object) -> float:
    return statistics.median(measure() for _ in range(rounds))  # type: ignore[operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    small, runs, rounds = args.small, args.runs, args.rounds
    extra = runs - small
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        root = Path(tmp)
        command = project(root, runs)
        session(root, command, 1, None)  # warm-up: bytecode caches, git, the page cache
        print(f"cores: {os.cpu_count()}; python: {sys.executable}")
        print(f"fake agent (a Python subprocess); slopes between N={small} and N={runs} runs")
        # Interleaved, so a busy moment of the machine hits every measurement alike.
        times: dict[str, list[float]] = {}
        plan = {
            "bare agent": lambda n: baseline(command, n),
            "no xdist": lambda n: session(root, command, n, None),
            "-n 2": lambda n: session(root, command, n, 2),
        }
        for _ in range(rounds):
            for label, measure in plan.items():
                for n in (small, runs):
                    times.setdefault(f"{label}@{n}", []).append(measure(n))
        slope = {
            label: (
                statistics.median(times[f"{label}@{runs}"])
                - statistics.median(times[f"{label}@{small}"])
            )
            / extra
            for label in plan
        }
        bare = slope["bare agent"]
        sequential = slope["no xdist"] - bare
        print(f"  bare agent: {bare * 1000:6.1f} ms/run (the baseline, one at a time)")
        print(
            f"    no xdist: {slope['no xdist'] * 1000:6.1f} ms/run -> harness overhead "
            f"{sequential * 1000:5.1f} ms/run"
        )
        # No overhead figure for -n 2: its slope is wall time over two workers, which the
        # baseline's sequential slope does not compare with; the speed-up below says it.
        print(f"        -n 2: {slope['-n 2'] * 1000:6.1f} ms/run (wall time, two workers)")
        print(f"overhead per run, sequential: {sequential * 1000:.1f} ms (goal <= 10 ms)")
        speedup = slope["no xdist"] / slope["-n 2"]
        whole = statistics.median(times[f"no xdist@{runs}"]) / statistics.median(
            times[f"-n 2@{runs}"]
        )
        print(
            f"speed-up of -n 2 over no xdist: {speedup:.2f}x per run, {whole:.2f}x for the "
            f"whole {runs}-run session (goal >= 1.6x per run; cores: {os.cpu_count()})"
        )


if __name__ == "__main__":
    main()

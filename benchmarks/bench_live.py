"""Benchmark of repeated live runs: harness overhead per run, and scaling with xdist.

A scenario repeated 200 times (``repeat: 200``) runs against a fast fake agent — a real
Python subprocess that reads the prompt and prints ``<promise>SUCCESS</promise>`` — as
``pytest -m live`` sessions:

1. Baseline, measured in the same run: the agent started 200 times directly
   (``subprocess.run`` with a prompt on stdin, each in a fresh empty directory), i.e.
   what the runs cost without any harness.
2. Harness cost per run: ``(T(200 runs) - T(1 run)) / 199`` for a session without
   xdist and with ``-n 1``, which removes pytest's start-up and collection. The
   overhead per run is that minus the baseline per run (a fresh workspace copy,
   ``git init`` + commit, prompt assembly, stat walks, the results record with
   redaction, the report to the controller and the log line). Goal: at most 100 ms
   per run on a 2-core machine, under 1% of a real agent run of 10 s or more. (The
   ratio to the baseline is printed too; against a fake agent that starts in ~15 ms
   it is large, and the fresh git repository per run is most of it.)
3. Scaling: wall time of the 200-run session with ``-n 1``, ``-n 2`` and ``-n 4``.
   The speed-up is bounded by the cores (``os.cpu_count()`` is printed): on 2 cores,
   ``-n 4`` cannot beat ~2x.

Usage: ``python benchmarks/bench_live.py [--runs 200] [--rounds 1]``.
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
        f"procedure: fast\nrepeat: {runs}\nexpect: {{status: success}}\niterations: []\n",
        encoding="utf-8",
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
        "--ooda-ai-cmd",
        command,
        "--ooda-repeat",
        str(runs),
        "--ooda-results",
        str(root / "results"),
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
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    runs, rounds = args.runs, args.rounds
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        root = Path(tmp)
        command = project(root, runs)
        session(root, command, 1, None)  # warm-up: bytecode caches, git, the page cache
        base = median_of(rounds, lambda: baseline(command, runs))
        print(f"cores: {os.cpu_count()}; {runs} runs of a fake agent (a Python subprocess)")
        print(f"baseline: {runs} direct agent starts {base:.2f}s = {base / runs * 1000:.1f} ms/run")
        per_run: dict[str, float] = {}
        for label, workers in (("no xdist", None), ("-n 1", 1)):
            whole = median_of(rounds, lambda w=workers: session(root, command, runs, w))
            one = median_of(rounds, lambda w=workers: session(root, command, 1, w))
            per_run[label] = (whole - one) / (runs - 1)
            overhead = per_run[label] - base / runs
            print(
                f"{label:>9}: session of {runs} runs {whole:.2f}s, of 1 run {one:.2f}s -> "
                f"{per_run[label] * 1000:.1f} ms/run in the harness, overhead "
                f"{overhead * 1000:.1f} ms/run (goal <= 100 ms), ratio harness/baseline "
                f"{per_run[label] / (base / runs):.2f}x"
            )
        timings = {}
        for workers in (1, 2, 4):
            timings[workers] = median_of(rounds, lambda w=workers: session(root, command, runs, w))
        for workers, elapsed in timings.items():
            print(
                f"  -n {workers}: {elapsed:.2f}s for {runs} runs "
                f"({elapsed / runs * 1000:.1f} ms/run), speed-up over -n 1 "
                f"{timings[1] / elapsed:.2f}x"
            )


if __name__ == "__main__":
    main()

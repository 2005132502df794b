"""How quickly the ``ooda`` command answers, against the interpreter starting and stopping.

Runs ``python -c pass`` and ``python -m pytest_ooda show build`` (and ``ooda --help`` and
``ooda list``) as fresh subprocesses, interleaved, and reports medians and each command's
ratio to ``python -c pass`` measured in the same run, beside the standard modules the
command cannot do without (argparse, dataclasses, pathlib, re, typing) imported alone.
Goal: ``ooda show build`` at most 2x ``python -c pass``.

Run it in a fresh virtual environment as a user installs it, from an empty directory:
``python -m venv v && v/bin/pip install . && v/bin/python benchmarks/bench_cli_startup.py``.

Usage: ``python benchmarks/bench_cli_startup.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL = 2.0
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    # What any command line tool built on these standard modules pays before its own
    # code runs: the floor under `ooda show build`.
    "stdlib floor": ["-c", "import argparse, dataclasses, pathlib, re, typing"],
    "ooda --help": ["-m", "pytest_ooda", "--help"],
    "ooda list": ["-m", "pytest_ooda", "list"],
    "ooda show build": ["-m", "pytest_ooda", "show", "build"],
}


def _once(args: list[str], cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{args} failed ({done.returncode}): {done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    rounds = parser.parse_args().rounds
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    with tempfile.TemporaryDirectory() as cwd:
        env["OODA_CONFIG_HOME"] = os.path.join(cwd, ".no-global-config")
        for args in COMMANDS.values():  # warm the bytecode caches
            _once(args, cwd, env)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            for name, args in COMMANDS.items():
                times[name].append(_once(args, cwd, env))
    base = statistics.median(times["python -c pass"])
    print(f"median of {rounds} interleaved runs each")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:18} {median * 1000:7.1f} ms  {median / base:5.2f}x python -c pass")
    floor = statistics.median(times["stdlib floor"])
    own = statistics.median(times["ooda show build"]) - floor
    print(f"ooda show build above the stdlib floor: {own * 1000:.1f} ms")
    ratio = statistics.median(times["ooda show build"]) / base
    print(f"ooda show build: {ratio:.2f}x python -c pass (goal <= {GOAL}x)")


if __name__ == "__main__":
    main()

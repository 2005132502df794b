"""How quickly the ``ooda`` command answers, against the interpreter starting and stopping.

Runs, as fresh subprocesses interleaved so that machine noise hits each alike:

- ``python -c pass``;
- the standard-library floor: ``python -c "import argparse, dataclasses, pathlib, re,
  typing"``, what any command line tool built on these modules pays before its own code
  runs;
- ``ooda --help``, ``ooda list`` and ``ooda show build`` (as the ``ooda`` console script
  and as ``python -m pytest_ooda``): each imports the library, reads the built-in
  procedures and composes the prompt, every time;
- ``ooda run build -n 1`` with a trivial agent (``python -c`` printing the success
  signal): one iteration of a real run.

It reports medians and ratios. Goals: ``ooda show build`` at most 1.5x the standard-library
floor; a 1-iteration ``ooda run`` at most 1.5x ``ooda show build``.

``--instructions`` counts instead, under valgrind's callgrind (the same whatever else
loads the machine): the instructions of the floor, ``ooda show build`` and ``ooda run
build -n 1`` (its own process: the agent it starts is not counted), and the same ratios.

Run it in a fresh virtual environment as a user installs it, from an empty directory:
``python -m venv v && v/bin/pip install . && cd "$(mktemp -d)" &&
v/bin/python /path/to/benchmarks/bench_cli_startup.py``.

Usage: ``python benchmarks/bench_cli_startup.py [--rounds N] [--instructions]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quick import parse

SHOW_GOAL = 1.5  # ooda show build / the stdlib floor
RUN_GOAL = 1.5  # ooda run build -n 1 / ooda show build
PYTHON = [sys.executable]
OODA = [str(Path(sys.executable).parent / "ooda")]
MODULE = [sys.executable, "-m", "pytest_ooda"]
AGENT = shlex.join([sys.executable, "-c", "print('<promise>SUCCESS</promise>')"])
#: name -> argv
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [*PYTHON, "-c", "pass"],
    "stdlib floor": [*PYTHON, "-c", "import argparse, dataclasses, pathlib, re, typing"],
    "ooda --help": [*OODA, "--help"],
    "ooda list": [*OODA, "list"],
    "python -m show": [*MODULE, "show", "build"],
    "ooda show": [*OODA, "show", "build"],
    "ooda run -n 1": [*OODA, "run", "build", "-n", "1", "--no-lint", "--ai-cmd", AGENT],
}


def _once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr.decode()}")
    return elapsed, done.stdout


def _instructions(argv: list[str], cwd: str, env: dict[str, str]) -> int:
    """The instructions ``argv``'s own process executes, under callgrind."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    started = re.search(r"==(\d+)== Command:", done.stderr)
    pid = started[1] if started else r"\d+"
    counted = re.search(rf"=={pid}== I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or counted is None:
        raise SystemExit(f"valgrind {argv} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(counted[1].replace(",", ""))


def count_instructions(cwd: str, env: dict[str, str]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    names = ("python -c pass", "stdlib floor", "ooda show", "ooda run -n 1")
    counts = {name: _instructions(COMMANDS[name], cwd, env) for name in names}
    print(f"instructions under callgrind ({sys.version.split()[0]})")
    for name, value in counts.items():
        print(f"  {name:16} {value:>15,}")
    floor, show, run = counts["stdlib floor"], counts["ooda show"], counts["ooda run -n 1"]
    print(f"ooda show build: {show / floor:.2f}x the stdlib floor (goal <= {SHOW_GOAL}x)")
    print(f"ooda run build -n 1: {run / show:.2f}x ooda show build (goal <= {RUN_GOAL}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    options = parse(parser, rounds=1)
    rounds = options.rounds
    if not Path(OODA[0]).exists():
        raise SystemExit(f"no ooda console script beside {sys.executable}: pip install it")
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    with tempfile.TemporaryDirectory() as cwd:
        env["OODA_CONFIG_HOME"] = os.path.join(cwd, ".no-global-config")
        outputs = {name: _once(argv, cwd, env)[1] for name, argv in COMMANDS.items()}  # warm-up
        if options.instructions:
            count_instructions(cwd, env)
            return
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            for name, argv in COMMANDS.items():
                elapsed, out = _once(argv, cwd, env)
                if name.endswith("show") and out != outputs[name]:
                    raise SystemExit(f"{name}: the output changed between runs")
                times[name].append(elapsed)
    median = {name: statistics.median(samples) for name, samples in times.items()}
    base = median["python -c pass"]
    print(f"median of {rounds} interleaved runs each ({sys.version.split()[0]})")
    for name, value in median.items():
        print(f"  {name:16} {value * 1000:7.1f} ms  {value / base:5.2f}x python -c pass")
    floor, show, run = median["stdlib floor"], median["ooda show"], median["ooda run -n 1"]
    print(f"ooda show build above the stdlib floor: {(show - floor) * 1000:.1f} ms")
    print(f"ooda show build: {show / floor:.2f}x the stdlib floor (goal <= {SHOW_GOAL}x)")
    print(f"ooda run build -n 1: {run / show:.2f}x ooda show build (goal <= {RUN_GOAL}x)")


if __name__ == "__main__":
    main()

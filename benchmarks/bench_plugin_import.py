"""What the plugin costs a project that has no procedure files.

Loading the plugin imports the root package (the version and the error trees), the
settings table its options are made from (with its checks and the vocabularies,
``_types``) and the plugin's entry point and fixture modules; nothing of the library
(``tests/integration/plugin/test_import_cost.py`` holds it to that list).

``pytest --collect-only -q`` of a plain project (one trivial test file) with the plugin
active, against the same command with ``-p no:ooda``, both as fresh subprocesses and
interleaved so machine noise hits both sides alike. A single run varies by a hundred
milliseconds on a shared machine, far more than the plugin costs, so each round is a
pair (with, then without) and what is reported is the pairs' difference: its median, and
its mean with a 95% confidence interval.

``--instructions`` counts instead, under valgrind's callgrind (deterministic whatever the
machine is doing): the instructions each side executes, and what the plugin adds as a
share and as milliseconds at the rate the machine ran the plain side. Goal: the plugin
adds at most 3% of the plain run's instructions.

Usage: ``python benchmarks/bench_plugin_import.py [--rounds N] [--instructions]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quick import parse

GOAL_SHARE = 0.03  # of the plain run's instructions


def _once(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout.decode()}")
    return elapsed


def _instructions(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={cwd / 'callgrind.out'}",
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    # Something in the session forks (a forked child stays under valgrind and reports
    # its own count): take the count of the process valgrind started.
    started = re.search(r"==(\d+)== Command:", done.stderr)
    pid = started[1] if started else r"\d+"
    counted = re.search(rf"=={pid}== I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or counted is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(counted[1].replace(",", ""))


def count_instructions(root: Path, env: dict[str, str]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    on = _instructions([], root, env)
    off = _instructions(["-p", "no:ooda"], root, env)
    rate = off / statistics.median(_once(["-p", "no:ooda"], root, env) for _ in range(9))
    print("pytest --collect-only, plain project, instructions under callgrind")
    print(f"  with pytest-ooda     {on:>15,}")
    print(f"  with -p no:ooda      {off:>15,}")
    print(
        f"  added by the plugin  {on - off:>15,}  ({(on - off) / off:.1%}; about "
        f"{(on - off) / rate * 1000:.1f} ms at this machine's {rate / 1e9:.2f} G/s; "
        f"goal <= {GOAL_SHARE:.0%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    options = parse(parser, rounds=2)
    rounds = options.rounds
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an ordinary installation has its .pyc files
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_plain.py").write_text("def test_plain():\n    assert True\n")
        env["OODA_CONFIG_HOME"] = str(root / ".no-global-config")
        for args in ([], ["-p", "no:ooda"]):  # warm the bytecode caches
            _once(args, root, env)
        if options.instructions:
            count_instructions(root, env)
            return
        with_plugin: list[float] = []
        without: list[float] = []
        for _ in range(rounds):
            with_plugin.append(_once([], root, env))
            without.append(_once(["-p", "no:ooda"], root, env))
    on, off = statistics.median(with_plugin), statistics.median(without)
    added = [(a - b) * 1000 for a, b in zip(with_plugin, without, strict=True)]
    median_ms = statistics.median(added)
    mean_ms = statistics.mean(added)
    half_ms = 1.96 * statistics.stdev(added) / len(added) ** 0.5
    print(f"pytest --collect-only, plain project, {rounds} interleaved pairs of runs")
    print(f"  with pytest-ooda     {on * 1000:8.1f} ms (median)")
    print(f"  with -p no:ooda      {off * 1000:8.1f} ms (median)")
    print(
        f"  added by the plugin  {median_ms:8.1f} ms median of the pairs' differences, "
        f"mean {mean_ms:.1f} ± {half_ms:.1f} ms (95%); ratio {on / off:.3f} "
        "(the goal is in instructions: --instructions)"
    )


if __name__ == "__main__":
    main()

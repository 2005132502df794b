"""Benchmarks for the pytest plugin (plain timing, medians, ratios measured in one run).

1. Wall time of ``pytest --ooda-builtin`` over the built-in suite (16 procedures: config,
   five prompt snapshots and every scenario replay each; live items deselected) against
   bare pytest running the same number of trivial test functions. Goal: ratio <= 1.3.
2. ``pytest --collect-only`` over generated configs of 500, 1,000 and 2,000 procedures.
   Goal: linear, and 1,000 procedures under 10 s.

Usage: ``python benchmarks/bench_plugin.py [--rounds N] [--instructions]``. Each pytest
run is a fresh subprocess, so interpreter start-up and plugin loading are included on
both sides; the rounds interleave the two sides. Runs use the bytecode cache as an
ordinary installation does (``PYTHONDONTWRITEBYTECODE`` is dropped and each side is run
once before timing): otherwise every run recompiles every module it imports, which
measures the compiler rather than the plugin. ``--instructions`` also counts each side's
user-space instructions once under valgrind: on a machine other jobs are loading, wall
times move by tens of percent from round to round while that ratio stays put (it leaves
the kernel out, so file-system calls count in wall time only).

Where the suite's time goes (sampling profiler, cProfile and ``-X importtime``; Python
3.11, pytest 9.2, in a fresh non-editable install). The trivial run takes about 0.28 s
and the suite about 0.2 s more, of which about:
- 80 ms importing the 60 library modules the suite needs (config, yamlload and PyYAML,
  compose, lint, scenario, loop, backends). A third of it is defining some 55
  dataclasses (a frozen one execs six generated methods on 3.11, about 0.6 ms); about
  25 ms is pytest's assertion rewriter, which imports every module of a plugin's
  distribution through its own importer (reading and hashing each source, unmarshalling
  from a file object) though the library holds no test assertions; 4 ms is PyYAML's
  reader compiling its character-class pattern;
- 45 ms the 49 replays: a third loading the scenario files, the rest the loop and the
  prompt of each iteration;
- 35 ms the 80 prompt items: composing, and syrupy's fixture and two assertions each;
- 10 ms linting the 16 procedures, and 20 ms collecting beyond the imports.
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

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _env(cwd: Path) -> dict[str, str]:
    env = {**os.environ, "OODA_CONFIG_HOME": str(cwd / ".no-global-config")}
    env.pop("OODA_LOOP_AI_CMD", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(args: list[str], cwd: Path) -> tuple[float, str]:
    env = _env(cwd)
    started = time.perf_counter()
    done = subprocess.run(
        PYTEST + args, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 5):
        raise SystemExit(f"pytest {' '.join(args)} failed in {cwd}:\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout


def instructions(args: list[str], cwd: Path) -> int:
    """The instructions one pytest run executes in user space (valgrind's cachegrind):
    unlike wall time, the same on a machine other work is loading."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install -y valgrind)")
    done = subprocess.run(
        [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            *PYTEST,
            *args,
        ],
        cwd=cwd,
        env={**_env(cwd), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=False,
    )
    match = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode not in (0, 5) or match is None:
        raise SystemExit(f"valgrind pytest {' '.join(args)} failed in {cwd}:\n{done.stderr}")
    return int(match.group(1).replace(",", ""))


def passed_count(output: str) -> int:
    match = re.search(r"(\d+) passed", output)
    return int(match.group(1)) if match else 0


def bench_builtin_suite(rounds: int, *, count_instructions: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-ooda-") as tmp:
        suite = Path(tmp) / "suite"
        trivial = Path(tmp) / "trivial"
        suite.mkdir()
        trivial.mkdir()
        # The suite's snapshots live in its own rootdir (the packaged built-ins are
        # collected from the package), so write them once before timing.
        _, out = run(["--ooda-builtin", "--snapshot-update"], suite)
        items = passed_count(out)
        body = "".join(f"def test_{i}():\n    pass\n\n\n" for i in range(items))
        (trivial / "test_trivial.py").write_text(body, encoding="utf-8")
        run([], trivial)  # warm-up, like the suite's --snapshot-update run above
        suite_times: list[float] = []
        trivial_times: list[float] = []
        for _ in range(rounds):
            # Interleaved so machine load affects both sides alike.
            elapsed, out = run(["--ooda-builtin"], suite)
            assert passed_count(out) == items, out
            suite_times.append(elapsed)
            elapsed, out = run([], trivial)
            assert passed_count(out) == items, out
            trivial_times.append(elapsed)
        if count_instructions:
            suite_instructions = instructions(["--ooda-builtin"], suite)
            trivial_instructions = instructions([], trivial)
    suite_median = statistics.median(suite_times)
    trivial_median = statistics.median(trivial_times)
    print(f"built-in suite: {items} items")
    print(f"  pytest --ooda-builtin     median {suite_median:.3f}s  ({_spread(suite_times)})")
    print(f"  {items} trivial tests      median {trivial_median:.3f}s  ({_spread(trivial_times)})")
    print(f"  ratio {suite_median / trivial_median:.2f}x (goal <= 1.3x)")
    if count_instructions:
        ratio = suite_instructions / trivial_instructions
        print(
            f"  instructions (valgrind, user space): {suite_instructions / 1e6:.0f}M against "
            f"{trivial_instructions / 1e6:.0f}M, ratio {ratio:.2f}x"
        )


def _spread(times: list[float]) -> str:
    return f"min {min(times):.3f}s max {max(times):.3f}s, {len(times)} runs"


def generated_config(count: int) -> str:
    lines = ["procedures:"]
    for i in range(count):
        lines += [
            f"  proc-{i:04d}:",
            f'    display: "Procedure {i}"',
            "    observe:",
            f'      - content: "Read the files relevant to item {i}."',
            "    orient:",
            '      - content: "Understand what they mean."',
            "    decide:",
            '      - content: "Pick the next step."',
            "    act:",
            '      - content: "Do it. <promise>SUCCESS</promise> / <promise>FAILURE</promise>"',
        ]
    return "\n".join(lines) + "\n"


def bench_collection(rounds: int, counts: list[int]) -> None:
    print("collection (--collect-only):")
    results: dict[int, float] = {}
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="bench-ooda-collect-") as tmp:
            root = Path(tmp)
            (root / "ooda-config.yml").write_text(generated_config(count), encoding="utf-8")
            times = []
            for _ in range(rounds):
                elapsed, out = run(["--collect-only"], root)
                assert f"{count * 6} tests collected" in out, out[-500:]
                times.append(elapsed)
        results[count] = statistics.median(times)
        print(
            f"  {count:>5} procedures ({count * 6} items): median {results[count]:.3f}s"
            f"  ({_spread(times)})"
        )
    small, middle, large = counts
    first = results[middle] - results[small]
    second = results[large] - results[middle]
    print(
        f"  increments: {small}->{middle} {first:.3f}s, {middle}->{large} {second:.3f}s "
        f"(linear when the second is about twice the first: {second / first:.2f}x); "
        f"goal 1000 < 10s: {results.get(1000, float('nan')):.2f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each side's instructions once under valgrind (a figure that "
        "other load on the machine does not move)",
    )
    parser.add_argument(
        "--procedures", type=int, nargs=3, default=[500, 1000, 2000], help="collection sizes"
    )
    args = parse(parser, rounds=1, procedures=[5, 10, 20])
    bench_builtin_suite(args.rounds, count_instructions=args.instructions)
    bench_collection(max(1, args.rounds // 2 + 1), args.procedures)


if __name__ == "__main__":
    main()

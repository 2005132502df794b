"""How quickly the ``ooda`` command answers, against the interpreter starting and stopping.

Runs ``python -c pass`` and ``ooda show build`` (both as ``python -m pytest_ooda`` and as
the ``ooda`` console script) as fresh subprocesses, interleaved, and reports medians and
each command's ratio to ``python -c pass`` measured in the same run:

- **cold**: the result cache off (``OODA_NO_CACHE=1``): the command imports the library,
  reads the configuration and composes the prompt, as on a first run or after an edit;
- **warm**: the same command repeated with nothing changed, answered from the result
  cache (``pytest_ooda/_entry.py``) without importing the library;

beside the standard modules the cold command cannot do without (argparse, dataclasses,
pathlib, re, typing) imported alone, ``ooda --help`` and a warm ``ooda list``.
Goal: ``ooda show build`` at most 2x ``python -c pass``.

Run it in a fresh virtual environment as a user installs it, from an empty directory:
``python -m venv v && v/bin/pip install . && cd "$(mktemp -d)" &&
v/bin/python /path/to/benchmarks/bench_cli_startup.py``.

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
from pathlib import Path

GOAL = 2.0
PYTHON = [sys.executable]
OODA = [str(Path(sys.executable).parent / "ooda")]
MODULE = [sys.executable, "-m", "pytest_ooda"]
NO_CACHE = {"OODA_NO_CACHE": "1"}
#: name -> (argv, extra environment)
COMMANDS: dict[str, tuple[list[str], dict[str, str]]] = {
    "python -c pass": ([*PYTHON, "-c", "pass"], {}),
    # What any command line tool built on these standard modules pays before its own
    # code runs: the floor under a cold `ooda show build`.
    "stdlib floor": ([*PYTHON, "-c", "import argparse, dataclasses, pathlib, re, typing"], {}),
    "ooda --help": ([*OODA, "--help"], {}),
    "cold python -m show": ([*MODULE, "show", "build"], NO_CACHE),
    "cold ooda show": ([*OODA, "show", "build"], NO_CACHE),
    "warm python -m show": ([*MODULE, "show", "build"], {}),
    "warm ooda show": ([*OODA, "show", "build"], {}),
    "warm ooda list": ([*OODA, "list"], {}),
}
WARM = [name for name in COMMANDS if name.startswith("warm ")]


def _once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr.decode()}")
    return elapsed, done.stdout


def _entries(cache: str) -> int:
    directory = Path(cache, "pytest-ooda", "cli")
    return len(list(directory.glob("*.entry"))) if directory.is_dir() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    rounds = parser.parse_args().rounds
    if not Path(OODA[0]).exists():
        raise SystemExit(f"no ooda console script beside {sys.executable}: pip install it")
    base_env = {**os.environ}
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as cache:
        base_env["OODA_CONFIG_HOME"] = os.path.join(cwd, ".no-global-config")
        base_env["XDG_CACHE_HOME"] = cache
        envs = {name: {**base_env, **extra} for name, (_, extra) in COMMANDS.items()}
        # An empty directory made a moment ago is "racy": nothing read from it is kept in
        # the cache for two seconds. Date it back as if the project had been there a while.
        past = time.time() - 60
        os.utime(cwd, (past, past))
        outputs: dict[str, bytes] = {}
        for _attempt in range(4):  # warm the bytecode and the result cache
            for name, (argv, _) in COMMANDS.items():
                outputs[name] = _once(argv, cwd, envs[name])[1]
            if _entries(cache) >= len(WARM):
                break
            time.sleep(2.1)  # a just-installed package is racy too
        else:
            raise SystemExit("the result cache kept no entry: the warm figures would be cold")
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            for name, (argv, _) in COMMANDS.items():
                elapsed, out = _once(argv, cwd, envs[name])
                if name.startswith(("cold ", "warm ")) and out != outputs[name]:
                    raise SystemExit(f"{name}: the output changed between runs")
                times[name].append(elapsed)
        if outputs["warm ooda show"] != outputs["cold ooda show"]:
            raise SystemExit("the cached `ooda show build` differs from the command's own output")
    base = statistics.median(times["python -c pass"])
    print(f"median of {rounds} interleaved runs each ({sys.version.split()[0]})")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:20} {median * 1000:7.1f} ms  {median / base:5.2f}x python -c pass")
    floor = statistics.median(times["stdlib floor"])
    own = statistics.median(times["cold ooda show"]) - floor
    print(f"cold ooda show build above the stdlib floor: {own * 1000:.1f} ms")
    for name in ("cold ooda show", "cold python -m show", "warm ooda show", "warm python -m show"):
        ratio = statistics.median(times[name]) / base
        print(f"{name + ' build':25} {ratio:5.2f}x python -c pass (goal <= {GOAL}x)")


if __name__ == "__main__":
    main()

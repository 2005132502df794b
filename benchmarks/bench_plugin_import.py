"""What the plugin costs a project that has no procedure files.

``pytest --collect-only -q`` of a plain project (one trivial test file) with the plugin
active, against the same command with ``-p no:ooda``, both as fresh subprocesses and
interleaved so machine noise hits both sides alike. Reports the medians, the time the
plugin adds and the ratio. Goal: under 15 ms added.

Usage: ``python benchmarks/bench_plugin_import.py [--rounds N]``.
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

GOAL_MS = 15.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    rounds = parser.parse_args().rounds
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an ordinary installation has its .pyc files
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_plain.py").write_text("def test_plain():\n    assert True\n")
        env["OODA_CONFIG_HOME"] = str(root / ".no-global-config")
        for args in ([], ["-p", "no:ooda"]):  # warm the bytecode caches
            _once(args, root, env)
        with_plugin: list[float] = []
        without: list[float] = []
        for _ in range(rounds):
            with_plugin.append(_once([], root, env))
            without.append(_once(["-p", "no:ooda"], root, env))
    on, off = statistics.median(with_plugin), statistics.median(without)
    added_ms = (on - off) * 1000
    print(f"pytest --collect-only, plain project, median of {rounds} interleaved runs")
    print(f"  with pytest-ooda     {on * 1000:8.1f} ms")
    print(f"  with -p no:ooda      {off * 1000:8.1f} ms")
    print(f"  added by the plugin  {added_ms:8.1f} ms  (ratio {on / off:.3f}; goal < {GOAL_MS} ms)")


if __name__ == "__main__":
    main()

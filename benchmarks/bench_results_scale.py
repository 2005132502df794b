"""Results at cluster scale: ``ooda report``, ``ooda compare``, ``ooda report --html`` and
``ooda view`` over generated logs of thousands of runs (``gen_results.py``: about 40 KB
a run with its transcript).

Each command runs as its own process, as a user runs it; measured are its wall time,
its CPU time (user + system, from the kernel's accounting of that child: other load on
a shared machine moves it less than the wall time) and its peak RSS. The floor is a
process that does nothing but ``json.loads`` every line of the same files, measured in
the same run; times are reported as ratios to it (the goal: within 1.5x). Peak RSS is
reported at each size with its growth from the size before (the goal: under 300 MB at
10,000 runs, growing slower than the runs). ``ooda view``: the time from starting the
server to its first page of the sessions (the whole log read), and of the page again
(what each refresh costs).

Usage: ``python benchmarks/bench_results_scale.py [--runs 2500 5000 10000] [--keep DIR]``.
On a machine others share, every figure is provisional.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from quick import parse

ROOT = Path(__file__).resolve().parents[1]
FLOOR = (
    "import json, sys\n"
    "for name in sys.argv[1:]:\n"
    "    for line in open(name, 'rb'):\n"
    "        json.loads(line)\n"
)


def measure(argv: list[str]) -> dict[str, float]:
    """Run ``argv``; its wall time, CPU time and peak RSS (MB)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{argv} exited {process.returncode}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
    }


def generate(out: Path, runs: int, seed: int) -> Path:
    if not any(out.glob("*.jsonl")):
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "gen_results.py"), str(out),
             "--runs", str(runs), "--seed", str(seed)],
            check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    return out


def view_times(directory: Path) -> tuple[float, float]:
    """Seconds from starting ``ooda view`` to its first sessions page, and for the
    page again."""
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "pytest_ooda", "view", str(directory), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with urllib.request.urlopen(url, timeout=600) as response:
            response.read()
        first = time.perf_counter() - start
        again = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as response:
            response.read()
        return first, time.perf_counter() - again
    finally:
        server.terminate()
        server.wait()


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[2500, 5000, 10000])
    parser.add_argument("--keep", type=Path, help="keep the generated logs here (and reuse them)")
    args = parse(parser, runs=[50])
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        rows, previous = [], None
        for runs in sorted(args.runs):
            a = generate(base / f"{runs}-a", runs, 1)
            b = generate(base / f"{runs}-b", runs, 2)
            files_a, files_b = (
                sorted(map(str, a.glob("*.jsonl"))),
                sorted(map(str, b.glob("*.jsonl"))),
            )
            size = sum(Path(name).stat().st_size for name in files_a)
            floor = measure([python, "-c", FLOOR, *files_a])
            floor2 = measure([python, "-c", FLOOR, *files_a, *files_b])
            report = measure([python, "-m", "pytest_ooda", "report", str(a)])
            compare = measure([python, "-m", "pytest_ooda", "compare", str(a), str(b)])
            html_dir = Path(scratch) / f"html-{runs}"
            html_dir.mkdir()
            html = measure(
                [python, "-m", "pytest_ooda", "report", str(a), "--html", str(html_dir / "r.html")]
            )
            written = sum(path.stat().st_size for path in html_dir.iterdir())
            first, again = view_times(a)
            rows.append(
                (runs, size, floor, floor2, report, compare, html, written, first, again, previous)
            )
            previous = (runs, report["rss"], compare["rss"])
    print("figures on a shared machine are provisional; ratios are to json.loads of every line")
    print("measured in the same run (CPU time: user + system of that process)")
    print()
    for runs, size, floor, floor2, report, compare, html, written, first, again, before in rows:
        print(f"{runs:,} runs, {size / 1e6:,.0f} MB log")
        print(f"  floor (json.loads of every line): {_figures(floor)}")
        print(f"  ooda report:        {_figures(report, floor)}")
        print(f"  ooda compare:       {_figures(compare, floor2)} (floor: both logs)")
        print(f"  ooda report --html: {_figures(html, floor)}, {written / 1e6:.1f} MB written")
        print(f"  ooda view: first sessions page {first:.2f}s after start, again {again:.2f}s")
        if before is not None:
            print(
                f"  peak RSS grew {report['rss'] / before[1]:.2f}x (report) and "
                f"{compare['rss'] / before[2]:.2f}x (compare) for {runs / before[0]:.1f}x the runs"
            )
        print()


def _figures(found: dict[str, float], floor: dict[str, float] | None = None) -> str:
    wall, cpu = f"{found['wall']:.2f}s wall", f"{found['cpu']:.2f}s CPU"
    if floor is not None:
        wall += f" ({ratio(found['wall'], floor['wall'])})"
        cpu += f" ({ratio(found['cpu'], floor['cpu'])})"
    return f"{wall}, {cpu}, {found['rss']:.0f} MB peak RSS"


if __name__ == "__main__":
    main()

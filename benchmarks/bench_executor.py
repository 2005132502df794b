"""Benchmark of live runs on a cluster (``--ooda-executor``): throughput, the controller's
cost per run, and its memory over 10,000 runs.

Real clusters on this machine's 127.0.0.1 (started with the test suite's helpers,
``tests/integration/scale/clusters.py``): a Dask scheduler with 2 workers × 4 threads,
and a Ray head plus a second node × 4 CPUs in a loopback-only network namespace. The
agent is a shell script, so the agent itself costs next to nothing and the figures are
the harness's:

1. Throughput: 200 runs of an agent that sleeps 0.5 s, on the cluster's 8 slots, beside
   the same session with ``-n 2`` locally (2 slots). The ideal is runs × 0.5 s / slots;
   the figure is that ideal over the time from the first run's start to the last one's
   end (the agents stamp both). Goal: at least 80 %.
2. The controller's own cost per dispatched run: the pytest session's CPU time (user and
   system, from ``wait4``), its slope between 50 and 200 runs, in ms. Goal: at most 5 ms.
3. 10,000 runs of an instant agent: the controller's peak RSS and its CPU per run, as
   slopes between 1,000 and 10,000 runs (dispatch overhead; RSS growth per run, goal
   under 2 KiB).

Run it in a fresh virtual environment holding the package as a user installs it, from
this checkout (which it takes the cluster helpers from)::

    python -m venv v && v/bin/pip install '.[dask,ray]'
    v/bin/python benchmarks/bench_executor.py [--engines dask,ray] [--runs 200]
        [--many 10000] [--no-local]

Ray's cluster needs root (a network namespace) and ``unshare``/``nsenter``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quick import parse  # noqa: E402

from tests.integration.scale.clusters import DaskCluster, RayCluster  # noqa: E402

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
      - content: "Do it, then print <promise>SUCCESS</promise>."
"""
#: Sleeps ``$1`` seconds; appends its start and end to ``$2``.
AGENT = """\
cat > /dev/null
start=$(date +%s.%N)
[ "$1" = 0 ] || sleep "$1"
[ -z "$2" ] || echo "$start $(date +%s.%N)" >> "$2"
echo "<promise>SUCCESS</promise>"
"""
SLOTS_PER_WORKER = 4


@dataclass
class Session:
    runs: int
    wall: float
    cpu: float
    rss_kib: int
    span: float | None


def project(root: Path) -> None:
    (root / "scenarios/fast").mkdir(parents=True)
    (root / "ooda-config.yml").write_text(CONFIG, encoding="utf-8")
    (root / "agent.sh").write_text(AGENT, encoding="utf-8")
    (root / "scenarios/fast/s.yml").write_text(
        "procedure: fast\nmax_iterations: 1\nexpect: {status: success}\niterations: []\n",
        encoding="utf-8",
    )


def session(
    root: Path, runs: int, sleep: float, *, executor: str | None, prefix: tuple[str, ...] = ()
) -> Session:
    """One ``pytest -m live`` session: its wall time, the controller's CPU and peak RSS,
    and (with a sleeping agent) the span of its runs."""
    stamps = root / f"stamps-{time.time_ns()}.txt"
    command = f"sh {root / 'agent.sh'} {sleep} {stamps if sleep else ''}".strip()
    argv = [
        *prefix,
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
    argv += [f"--ooda-executor={executor}"] if executor else ["-n", "2"]
    env = {**os.environ, "OODA_CONFIG_HOME": str(root / ".no-global-config")}
    started = time.perf_counter()
    with open(root / "session.log", "w") as log:
        child = subprocess.Popen(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    output = (root / "session.log").read_text()
    if os.waitstatus_to_exitcode(status) != 0 or f"{runs} passed" not in output:
        raise SystemExit(f"session failed ({' '.join(argv)}):\n{output[-3000:]}")
    span = None
    if stamps.exists():
        pairs = [tuple(map(float, line.split())) for line in stamps.read_text().splitlines()]
        span = max(end for _, end in pairs) - min(start for start, _ in pairs)
    return Session(runs, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, span)


def cpu_of(pids: list[int]) -> float:
    """CPU seconds of these processes and of their children they have reaped."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / ticks


def sessions_of(leaders: list[int]) -> list[int]:
    """Every process in the sessions these processes lead."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) in leaders:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def throughput(label: str, done: Session, slots: int, sleep: float) -> None:
    ideal = done.runs * sleep / slots
    assert done.span is not None
    print(
        f"  {label}: {done.runs} runs of {sleep} s on {slots} slots in {done.span:.1f} s "
        f"(ideal {ideal:.1f} s): {ideal / done.span:.0%} of ideal throughput "
        f"(goal >= 80%); session {done.wall:.1f} s"
    )


def measure(
    label: str,
    executor: str,
    prefix: tuple[str, ...],
    args: argparse.Namespace,
    workers: Callable[[], list[int]] | None,
) -> None:
    slots = 2 * SLOTS_PER_WORKER
    with tempfile.TemporaryDirectory(prefix="bench-executor-") as tmp:
        root = Path(tmp)
        project(root)
        session(root, 4, 0, executor=executor, prefix=prefix)  # warm-up: every worker's cache
        print(f"{label} ({executor}):")
        small = session(root, args.small, args.sleep, executor=executor, prefix=prefix)
        before = cpu_of(workers()) if workers is not None else 0.0
        full = session(root, args.runs, args.sleep, executor=executor, prefix=prefix)
        throughput(label, full, slots, args.sleep)
        if workers is not None:
            # Dask's worker processes live as long as the cluster, so their CPU (and that
            # of the agents and git they reaped) is all counted; Ray's come and go.
            spent = (cpu_of(workers()) - before) / full.runs
            cores = os.cpu_count() or 1
            print(
                f"  the workers' own CPU: {spent * 1000:.0f} ms per run, so {cores} cores "
                f"make at most {cores / spent:.0f} runs/s (the slots ask for "
                f"{slots / args.sleep:.0f}/s)"
            )
        per_run = (full.cpu - small.cpu) / (full.runs - small.runs)
        print(
            f"  controller CPU per dispatched run: {per_run * 1000:.2f} ms "
            f"(slope {small.runs} -> {full.runs} runs; goal <= 5 ms)"
        )
        if not args.many:
            return
        few = session(root, args.many // 10, 0, executor=executor, prefix=prefix)
        many = session(root, args.many, 0, executor=executor, prefix=prefix)
        extra = many.runs - few.runs
        print(
            f"  {many.runs} instant runs: session {many.wall:.0f} s, controller peak RSS "
            f"{many.rss_kib / 1024:.0f} MiB ({few.runs} runs: {few.rss_kib / 1024:.0f} MiB): "
            f"{(many.rss_kib - few.rss_kib) / extra:.2f} KiB per run (goal < 2 KiB); "
            f"dispatch overhead {(many.cpu - few.cpu) / extra * 1000:.2f} ms of controller "
            f"CPU per run"
        )


def local(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-executor-local-") as tmp:
        root = Path(tmp)
        project(root)
        session(root, 4, 0, executor=None)
        print("local (-n 2):")
        throughput("-n 2", session(root, args.runs, args.sleep, executor=None), 2, args.sleep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="dask,ray")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--many", type=int, default=10000, help="0: skip the 10,000 runs")
    parser.add_argument("--no-local", action="store_true", help="skip the -n 2 session")
    args = parse(parser, engines="dask", runs=4, small=2, sleep=0.05, many=0, no_local=True)
    print(f"cores: {os.cpu_count()}; python: {sys.executable}; load: {os.getloadavg()}")
    if not args.no_local:
        local(args)
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-clusters-") as tmp:
        if "dask" in engines:
            dask = DaskCluster(
                Path(tmp) / "dask", workers=2, threads=SLOTS_PER_WORKER, pythonpath=False
            )
            try:
                dask.start()
                leaders = [worker.pid for worker in dask.workers]
                measure("dask", f"dask:{dask.address}", (), args, lambda: sessions_of(leaders))
            finally:
                dask.stop()
        if "ray" in engines:
            ray = RayCluster(Path(tmp) / "ray", cpus=SLOTS_PER_WORKER, pythonpath=False)
            try:
                ray.start()
                measure("ray", f"ray:{ray.address}", tuple(ray.command()), args, None)
            finally:
                ray.stop()


if __name__ == "__main__":
    main()

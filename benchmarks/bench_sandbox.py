"""Benchmark of the sandboxes: what isolating a live run costs per run.

In one process, ``--runs`` (default 100) runs of a trivial agent — ``/bin/sh`` reading
the prompt from stdin and printing ``<promise>SUCCESS</promise>`` — each in a fresh
workspace, through the command backend exactly as a live run starts its agent, under
``none``, ``bwrap`` and ``docker`` (vfs storage driver in CI). Each run is split into:

- start-up: ``Sandbox.start`` (a fresh HOME; for Docker the container),
- agent: the backend's ``run`` (for bwrap the namespace set-up is in here; for Docker
  the ``docker exec``),
- cleanup: ``SandboxRun.stop`` (for Docker ``docker rm -f``).

Goals: ``bwrap`` adds at most 30 ms per run over ``none``; ``docker`` at most 700 ms.
The session-level checks (``prepare``: the program, the daemon, the image) run once,
before the timed runs, and are reported apart.

Usage: ``python benchmarks/bench_sandbox.py [--runs 100] [--image IMAGE]``; without
``--image`` the Docker kind uses the test suite's busybox image (built offline with
``docker import`` when missing). A kind whose program is missing is reported as skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from quick import parse

from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox import parse_spec
from pytest_ooda.sandbox.registry import load_kind

AGENT = ["/bin/sh", "-c", "cat > /dev/null; echo done; echo '<promise>SUCCESS</promise>'"]
PROMPT = "x" * 600
GOALS_MS = {"bwrap": 30.0, "docker": 700.0}


def _test_image() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from sandbox_images import busybox_image

    return busybox_image()


def measure(spec_value: object, runs: int) -> dict[str, list[float]]:
    """Per-run seconds of start-up, agent and cleanup for ``runs`` runs."""
    spec = parse_spec(spec_value)
    sandbox = load_kind(spec.kind)(spec)
    started = time.perf_counter()
    sandbox.prepare()
    times: dict[str, list[float]] = {
        "prepare": [time.perf_counter() - started],
        "start": [],
        "agent": [],
        "stop": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        for index in range(runs):
            workspace = Path(tmp) / f"run-{index}" / "workspace"
            workspace.mkdir(parents=True)
            scratch = workspace.parent / "scratch"
            scratch.mkdir()
            t0 = time.perf_counter()
            run = sandbox.start(workspace, scratch)
            t1 = time.perf_counter()
            try:
                done = CommandBackend(AGENT, sandbox=run, kill_grace=2.0).run(
                    PROMPT, iteration=1, workdir=workspace, timeout=60, max_output=1 << 16,
                    stream=None,
                )  # fmt: skip
                t2 = time.perf_counter()
            finally:
                run.stop()
            t3 = time.perf_counter()
            if "<promise>SUCCESS</promise>" not in done.output:
                raise SystemExit(f"{spec.kind}: the agent did not run: {done.output!r}")
            times["start"].append(t1 - t0)
            times["agent"].append(t2 - t1)
            times["stop"].append(t3 - t2)
    return times


def _ms(values: list[float]) -> float:
    return statistics.mean(values) * 1000


def _median_total_ms(times: dict[str, list[float]]) -> float:
    totals = [
        sum(parts) for parts in zip(times["start"], times["agent"], times["stop"], strict=True)
    ]
    return statistics.median(totals) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--image", help="Docker image for the docker kind")
    args = parse(parser, runs=2)
    results: dict[str, dict[str, list[float]]] = {}
    kinds: list[tuple[str, object]] = [("none", "none"), ("bwrap", {"kind": "bwrap"})]
    if args.quick:
        print("docker: skipped (--quick: its image may take minutes to make)")
    else:
        try:
            image = args.image or _test_image()
            kinds.append(("docker", {"kind": "docker", "image": image, "network": "none"}))
        except Exception as exc:  # no daemon, no docker: reported, not fatal
            print(f"docker: skipped ({exc})")
    for name, value in kinds:
        try:
            results[name] = measure(value, args.runs)
        except SandboxError as exc:
            print(f"{name}: skipped ({exc.message})")
    print(f"{args.runs} runs per kind; mean per run in ms (prepare: once per session)")
    print(
        f"{'kind':8} {'prepare':>9} {'start-up':>9} {'agent':>9} {'cleanup':>9} "
        f"{'total':>9} {'over none':>10} {'median over':>12}  goal (mean over none)"
    )
    base = median_base = None
    if "none" in results:
        base = sum(_ms(results["none"][part]) for part in ("start", "agent", "stop"))
        median_base = _median_total_ms(results["none"])
    for name, times in results.items():
        total = sum(_ms(times[part]) for part in ("start", "agent", "stop"))
        over = total - base if base is not None else float("nan")
        median_over = (
            _median_total_ms(times) - median_base if median_base is not None else float("nan")
        )
        goal = GOALS_MS.get(name)
        verdict = "" if goal is None else f"<= {goal:g} ms: {'met' if over <= goal else 'MISSED'}"
        print(
            f"{name:8} {_ms(times['prepare']):9.1f} {_ms(times['start']):9.1f} "
            f"{_ms(times['agent']):9.1f} {_ms(times['stop']):9.1f} {total:9.1f} "
            f"{over:10.1f} {median_over:12.1f}  {verdict}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

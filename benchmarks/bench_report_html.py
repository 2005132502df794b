"""Benchmark of the HTML transcript report: size and render time for 1,000 runs.

Runs a small procedure live a few times against a fake agent (a real Python subprocess
that calls no tools but writes a file and prints its answer), so every record carries a
real transcript (the prompt by fragment, outputs, diffs), then copies those records to
``--runs`` runs (half of them failures) and renders ``ooda report --html`` over them.
Reported: the report's size in bytes and per run, the share of it that is transcript
budget, and the render time (median of ``--rounds``) against rendering the same runs
without transcripts (the previous report's content) as the baseline ratio.

Usage: ``python benchmarks/bench_report_html.py [--runs 1000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from quick import parse

CONFIG = """\
procedures:
  greet:
    observe:
      - path: builtin:fragments/observe/read_agents_md.md
    act:
      - content: "Write GREETING.md, then print <promise>SUCCESS</promise>."
      - path: builtin:fragments/act/emit_success.md
"""
AGENT = """\
import pathlib, sys
sys.stdin.read()
pathlib.Path("GREETING.md").write_text("Hello!\\n" * 20)
print("Read AGENTS.md and wrote GREETING.md.\\n" * 5 + "<promise>SUCCESS</promise>")
"""
SCENARIO = "procedure: greet\\nrepeat: 4\\nexpect: {status: success}\\niterations: []\\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse(parser, runs=20, rounds=1)

    from pytest_ooda.report import render_html
    from pytest_ooda.results import read_results
    from pytest_ooda.stats import summarize

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ooda-config.yml").write_text(CONFIG)
        (root / "agent.py").write_text(AGENT)
        (root / "scenarios/greet").mkdir(parents=True)
        (root / "scenarios/greet/hello.yml").write_text(SCENARIO.replace("\\n", "\n"))
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "live",
             f"--ooda-ai-cmd={sys.executable} {root / 'agent.py'}"],
            cwd=root, check=True, capture_output=True,
        )  # fmt: skip
        records = read_results([str(root / ".ooda/results")]).records
    many = [
        replace(
            records[i % len(records)],
            id=f"run-{i}",
            head=replace(records[i % len(records)].head, run=i + 1, runs=args.runs),
            outcome="failure" if i % 2 else "success",
            problems=("file GREETING.md: expected to contain 'Bye'",) if i % 2 else (),
        )
        for i in range(args.runs)
    ]
    bare = [replace(record, transcript=None) for record in many]

    def render(items: list) -> tuple[int, float]:  # type: ignore[type-arg]
        times, size = [], 0
        for _ in range(args.rounds):
            start = time.perf_counter()
            size = len(render_html(summarize(items, k=3), k=3, title="bench").encode("utf-8"))
            times.append(time.perf_counter() - start)
        return size, statistics.median(times)

    size, seconds = render(many)
    bare_size, bare_seconds = render(bare)
    print(f"runs: {args.runs}")
    print(f"report with transcripts: {size:,} bytes ({size / args.runs:,.0f} per run)")
    print(f"report without transcripts (baseline): {bare_size:,} bytes")
    ratio = seconds / bare_seconds
    print(f"render time: {seconds:.2f}s, baseline {bare_seconds:.2f}s, ratio {ratio:.2f}")


if __name__ == "__main__":
    main()

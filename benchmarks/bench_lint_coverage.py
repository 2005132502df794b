"""Benchmark: lint and fragment-coverage overheads.

Reports, as medians measured in the same run:
- lint: ``lint_path`` over the 16 built-ins (all rules), and ``lint_procedure`` for one
  procedure (what each pytest ``config`` item costs), next to ``load_builtin_config``;
- observers: assembling all 16 built-in prompts with no observer (baseline), with the
  ``--ooda-fragment-coverage`` tracker, and with the coverage.py plugin's observer (which
  executes one small code object per fragment; measured without a tracer running);
- statement lines: ``statement_lines`` over every built-in fragment.

Goals (issue 7): linting the built-ins stays interactive (well under 1 s); either
coverage observer costs at most ~10 us per fragment composed.

Run: ``python benchmarks/bench_lint_coverage.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from quick import parse

from pytest_ooda import compose, coverage_plugin
from pytest_ooda.config import load_builtin_config
from pytest_ooda.fragment_coverage import FragmentCoverage
from pytest_ooda.fragments import builtin_root
from pytest_ooda.lint import lint_path, lint_procedure

if TYPE_CHECKING:
    from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parse(parser, repeat=1)
    repeat = args.repeat

    config = load_builtin_config()
    procedures = list(config.procedures.values())
    with tempfile.TemporaryDirectory() as empty:
        load = median_seconds(load_builtin_config, repeat)
        lint_all = median_seconds(lambda: lint_path(None, cwd=Path(empty)), repeat)
    lint_one = median_seconds(lambda: lint_procedure(config, "build"), repeat)
    print(f"load_builtin_config (cached) {load * 1e3:8.2f} ms")
    print(f"lint 16 built-ins (ooda lint) {lint_all * 1e3:8.2f} ms")
    print(f"lint_procedure('build')      {lint_one * 1e3:8.2f} ms")

    def assemble_all() -> None:
        for procedure in procedures:
            compose.assemble_prompt(procedure, iteration=1, max_iterations=5)

    base = median_seconds(assemble_all, repeat)
    tracker = FragmentCoverage()
    tracker.start()
    with_tracker = median_seconds(assemble_all, repeat)
    tracker.stop()
    remove = compose.add_use_observer(coverage_plugin._on_use)
    with_plugin = median_seconds(assemble_all, repeat)
    remove()
    uses: list[object] = []
    remove = compose.add_use_observer(uses.append)
    assemble_all()
    remove()
    per_use = 1e6 / len(uses)
    print(f"assemble 16, no observer     {base * 1e3:8.2f} ms  ({len(uses)} fragments)")
    for label, took in (("fragment-coverage", with_tracker), ("coverage.py observer", with_plugin)):
        extra = (took - base) * per_use
        ratio = took / base
        print(f"  with {label:<22}{took * 1e3:8.2f} ms  ({ratio:.2f}x, +{extra:.1f} us/fragment)")

    texts = [p.read_text(encoding="utf-8") for p in (builtin_root() / "fragments").rglob("*.md")]
    lines = median_seconds(lambda: [coverage_plugin.statement_lines(t) for t in texts], repeat)
    print(f"statement_lines, {len(texts)} files  {lines * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()

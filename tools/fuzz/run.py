"""The long fuzzing job: ``python tools/fuzz/run.py --cases 10000``.

Generates mutated configs and scenarios (deep and wide structures, odd scalars, tabs,
cuts, duplicate keys, alias bombs, long strings, random characters — the same generator
as ``tests/fuzz``) and drives each through the library in-process; every
``--cli-every``-th case also through ``ooda show/lint/run --replay`` and every
``--pytest-every``-th through pytest collection, as subprocesses. Prints the counts —
cases, loaded, clean errors, crashes, hangs — and the first few defects; exits 1 if
there was any crash or hang.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fuzz"))

from fuzzing import (
    GOOD_CONFIG,
    GOOD_SCENARIO,
    Outcome,
    load_in_process,
    mutated,
    through_cli,
    through_pytest,
)


def _run_case(
    case: int, config: str, scenario: str, args: argparse.Namespace
) -> list[tuple[str, Outcome]]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        outcomes = [("library", load_in_process(config, scenario, workdir))]
        if args.cli_every and case % args.cli_every == 0:
            outcomes.append(("ooda", through_cli(config, scenario, workdir, args.timeout)))
        if args.pytest_every and case % args.pytest_every == 0:
            outcomes.append(("pytest", through_pytest(config, workdir, args.timeout)))
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cli-every", type=int, default=20, help="0 turns it off")
    parser.add_argument("--pytest-every", type=int, default=40, help="0 turns it off")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    defects: list[str] = []
    started = time.monotonic()
    for case in range(args.cases):
        seed = args.seed * 1_000_003 + case
        config, scenario = mutated(GOOD_CONFIG, seed), mutated(GOOD_SCENARIO, seed + 1)
        for channel, outcome in _run_case(case, config, scenario, args):
            counts[f"{channel}:{outcome.kind}"] += 1
            counts[outcome.kind] += 1
            if outcome.kind in {"crash", "hang"} and len(defects) < 20:
                defects.append(f"case {case} (seed {seed}) {channel}: {outcome.detail}")
        if (case + 1) % 500 == 0:
            print(f"... {case + 1} cases, {time.monotonic() - started:.0f}s", flush=True)
    runs_total = sum(counts[kind] for kind in ("ok", "clean", "crash", "hang"))
    print(f"cases: {args.cases} ({runs_total} runs: library, ooda every {args.cli_every}, "
          f"pytest every {args.pytest_every}) in {time.monotonic() - started:.0f}s")  # fmt: skip
    for channel in ("library", "ooda", "pytest"):
        parts = [
            f"{kind} {counts[f'{channel}:{kind}']}" for kind in ("ok", "clean", "crash", "hang")
        ]
        print(f"  {channel:8} " + ", ".join(parts))
    print(f"crashes: {counts['crash']}, hangs: {counts['hang']}")
    for defect in defects:
        print("  " + defect)
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

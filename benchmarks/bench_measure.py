"""Benchmark of what the measurement is worth: infrastructure errors kept apart from
failures, and the runs early stopping saves.

1. Bias: 1,000 simulated runs of a procedure whose true success rate is 0.7, with 10%
   of the runs spoiled by injected infrastructure errors (a 529 the retries did not
   beat). The runs become results records and go through ``summarize`` exactly as a
   session's do. Printed: the reported rate with its 95% interval (which should cover
   0.7), and the bias of the rate with the error class (errors left out) and without it
   (errors counted as failures, as before this class existed: about 0.7 x 0.9 = 0.63).
   Repeated over ``--trials`` samples, the interval's coverage of 0.7 is printed too.
2. Early stopping: a scenario of ``--max-runs`` repeats of the same procedure, gated at
   ``success_rate.min`` 0.5 (the truth, 0.7, is well above) and 0.9 (well below), with
   ``stop_early: true``. Over ``--sequences`` simulated sessions, printed: the mean
   valid runs made before the sequential test settled, the runs saved against running
   them all, and how often the early verdict was wrong.

Usage: ``python benchmarks/bench_measure.py [--runs 1000] [--trials 200]
[--max-runs 100] [--sequences 2000] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from quick import parse

from pytest_ooda.results import IterationEntry, RecordHead, RunRecord
from pytest_ooda.stats import Sprt, summarize

TRUE_RATE = 0.7
ERROR_RATE = 0.1


def _records(runs: int, rng: random.Random) -> list[RunRecord]:
    out = []
    for index in range(runs):
        if rng.random() < ERROR_RATE:
            outcome, status = "error", "aborted"
        elif rng.random() < TRUE_RATE:
            outcome, status = "success", "success"
        else:
            outcome, status = "failure", "max-iters"
        out.append(
            RunRecord(
                id=f"run-{index}",
                head=RecordHead(procedure="build", scenario="bench", run=index + 1, runs=runs),
                status=status,
                outcome=outcome,
                error_reason="overloaded: HTTP 529" if outcome == "error" else None,
                elapsed_s=1.0,
                iterations=(
                    IterationEntry(
                        number=1,
                        outcome="success" if outcome == "success" else "failure",
                        signal=None,
                        exit_code=0,
                        duration_s=1.0,
                    ),
                ),
            )
        )
    return out


def bias(runs: int, trials: int, seed: int) -> None:
    rng = random.Random(seed)
    started = time.perf_counter()
    [stats] = summarize(_records(runs, rng))
    elapsed = time.perf_counter() - started
    low, high = stats.interval
    naive = stats.successes / stats.runs
    print(f"1) {runs} runs, true rate {TRUE_RATE}, {ERROR_RATE:.0%} infrastructure errors")
    print(
        f"   with the error class:    rate {stats.rate:.3f} over {stats.valid_runs} valid runs, "
        f"95% CI {low:.3f}-{high:.3f} ({'covers' if low <= TRUE_RATE <= high else 'MISSES'} "
        f"{TRUE_RATE}), bias {stats.rate - TRUE_RATE:+.3f}"
    )
    print(
        f"   errors as failures:      rate {naive:.3f} over {stats.runs} runs, "
        f"bias {naive - TRUE_RATE:+.3f}"
    )
    print(f"   summarize() over {runs} records: {elapsed * 1000:.1f} ms")
    covered, biases, naive_biases = 0, [], []
    for _ in range(trials):
        [item] = summarize(_records(runs, rng))
        low, high = item.interval
        covered += low <= TRUE_RATE <= high
        biases.append(item.rate - TRUE_RATE)
        naive_biases.append(item.successes / item.runs - TRUE_RATE)
    print(
        f"   over {trials} samples: the interval covered {TRUE_RATE} in {covered / trials:.1%}; "
        f"mean bias {statistics.fmean(biases):+.4f} with the error class, "
        f"{statistics.fmean(naive_biases):+.4f} without"
    )


def early_stopping(max_runs: int, sequences: int, seed: int) -> None:
    rng = random.Random(seed)
    print(
        f"2) early stopping, true rate {TRUE_RATE}, repeat {max_runs}, {sequences} sessions, "
        f"{ERROR_RATE:.0%} errors (not counted, not deciding)"
    )
    for minimum in (0.5, 0.9):
        sprt = Sprt(minimum)
        made: list[int] = []
        wrong = 0
        for _ in range(sequences):
            successes = failures = runs = 0
            verdict = None
            while runs < max_runs and verdict is None:
                runs += 1
                if rng.random() < ERROR_RATE:
                    continue
                if rng.random() < TRUE_RATE:
                    successes += 1
                else:
                    failures += 1
                verdict = sprt.decide(successes, failures)
            made.append(runs)
            truth = minimum <= TRUE_RATE
            wrong += verdict is not None and verdict != truth
        mean = statistics.fmean(made)
        print(
            f"   min {minimum}: ({sprt.describe()}) {mean:.1f} runs on average instead of "
            f"{max_runs}: {max_runs - mean:.1f} saved ({1 - mean / max_runs:.0%}); "
            f"wrong early verdicts {wrong / sequences:.2%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--max-runs", type=int, default=100)
    parser.add_argument("--sequences", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parse(parser, runs=20, trials=2, max_runs=10, sequences=10)
    bias(args.runs, args.trials, args.seed)
    early_stopping(args.max_runs, args.sequences, args.seed)


if __name__ == "__main__":
    main()

"""``ooda plan-runs SCENARIO --detect 10pp``: how many runs each arm of a comparison
needs to detect a change of that size, and what they will cost, from the scenario's
past results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, fraction, rate_difference, read_results_noting
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_ALPHA, DEFAULT_POWER

    parser = subparsers.add_parser(
        "plan-runs",
        help="the runs per arm a comparison needs, and their cost, from past results",
        description="From a scenario's past runs (its success rate, its share of "
        "infrastructure errors, its cost and tokens per run): how many valid runs each arm "
        "of an A/B comparison needs for a two-sided test at --alpha to detect a change of "
        "--detect in success rate with probability --power (Cohen's arcsine effect size), "
        "how many runs to start for them, and what both arms will cost.",
        epilog="exit codes: 0 done, 1 a usage error (no past runs of the scenario), 2 a "
        "results file cannot be read.",
    )
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        help="procedure/scenario (@variant for a variant), or the scenario's file",
    )
    parser.add_argument(
        "--detect",
        type=rate_difference,
        required=True,
        metavar="D",
        help="the change in success rate to detect: 10pp, 10%% or 0.1",
    )
    parser.add_argument(
        "--power",
        type=fraction,
        default=DEFAULT_POWER,
        metavar="P",
        help=f"the chance of detecting it when it is there (default {DEFAULT_POWER})",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"significance level of the test (default {DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--results",
        action="append",
        metavar="PATH",
        help="past results: files or directories (repeatable; default .ooda/results)",
    )
    parser.set_defaults(func=command)


def _label(text: str) -> str:
    """``procedure/scenario`` from a label or a scenario file (``scenarios/greet/x.yml``
    is ``greet/x``)."""
    from pathlib import Path

    path = Path(text)
    if path.suffix in (".yml", ".yaml"):
        return f"{path.parent.name}/{path.stem}"
    return text


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.cli.report import default_results
    from pytest_ooda.report import money
    from pytest_ooda.stats import drop_duplicates, plan_runs, summarize

    results = read_results_noting(args.results or [default_results()], summary=True)
    label = _label(args.scenario)
    found = [item for item in summarize(drop_duplicates(results.records)[0]) if item.label == label]
    if not found:
        raise UsageError(
            f"no past runs of {label} in the results",
            hint="run it a few times first (pytest -m live --ooda-repeat=5), or name the "
            "results with --results",
        )
    stats = found[0]
    plan = plan_runs(stats, detect=args.detect, power=args.power, alpha=args.alpha)
    cost = f", {money(plan.cost_per_run)} a run" if plan.cost_per_run is not None else ""
    tokens = f", {plan.tokens_per_run:,.0f} tokens a run" if plan.tokens_per_run else ""
    print(
        f"{label}: from {plan.valid_runs + plan.errors} past run(s) ({plan.valid_runs} valid, "
        f"{plan.errors} infrastructure error(s)): success rate {plan.base_rate:.0%}{cost}{tokens}"
    )
    test = (
        f"a change of {plan.detect * 100:.0f} pp (two-sided, alpha {plan.alpha:g}, power "
        f"{plan.power:.0%})"
    )
    if plan.valid_per_arm is None or plan.per_arm is None:
        print(f"to detect {test}: no such change fits from a rate of {plan.base_rate:.0%}")
        return EXIT_OK
    errors = (
        f" (its runs were {plan.errors / (plan.valid_runs + plan.errors):.0%} infrastructure "
        "errors)"
        if plan.errors
        else ""
    )
    print(
        f"to detect {test}: {plan.valid_per_arm} valid runs per arm; start "
        f"{plan.per_arm} per arm{errors}"
    )
    total = f", about {money(plan.total_cost)}" if plan.total_cost is not None else ""
    print(f"both arms: {2 * plan.per_arm} runs{total}")
    if plan.total_cost is not None:
        arm = plan.total_cost / 2
        print(
            f"each arm: pytest -m live -k {stats.scenario.split('@')[0]} "
            f"--ooda-repeat={plan.per_arm} --ooda-budget={arm * 1.1:.2f}  (10% headroom)"
        )
    return EXIT_OK

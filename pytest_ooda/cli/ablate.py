"""``ooda ablate SCENARIO``: which fragments of the scenario's prompt earn their tokens —
each left out in turn, run in rounds paired with the full prompt until its verdict is
settled (keep, cut) or the runs or the budget run out (can't tell yet)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import (
    EXIT_OK,
    add_settings,
    fraction,
    load_from_args,
    note,
    positive_int,
    rate_difference,
    read_settings,
)

if TYPE_CHECKING:
    import argparse

    from pytest_ooda.results import RunRecord, Spent


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_ALPHA, DEFAULT_MARGIN, DEFAULT_ROUNDS

    parser = subparsers.add_parser(
        "ablate",
        help="which fragments earn their tokens: leave-one-out runs against the full prompt",
        description="Run SCENARIO's full prompt and, beside it, one variant per fragment "
        "of its procedure with that fragment left out (and, with --phase, whole phases), "
        "in paired rounds. After rounds 5, 10, 20, ... each left-out fragment is judged: "
        "keep (the full prompt does significantly better: McNemar's exact test, "
        "Holm-corrected over the fragments), cut (leaving it out costs less than --margin "
        "of success rate, at the interval's confidence), or can't tell yet; a settled "
        "fragment stops, and no run starts once --budget would be passed. Each fragment's "
        "tokens per iteration, its change in success rate with the interval and the "
        "verdict are printed; the runs go to the results directory (`ooda view` shows the "
        "ablation).",
        epilog="exit codes: 0 done, 1 a usage error, 2 a configuration error.",
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="the scenario file")
    add_settings(parser)
    parser.add_argument(
        "--runs",
        type=positive_int,
        default=DEFAULT_ROUNDS,
        metavar="N",
        help=f"rounds at most: runs of each arm (default {DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--phase",
        action="append",
        default=[],
        choices=("observe", "orient", "decide", "act", "all"),
        help="also leave out this whole phase (repeatable; all: every phase)",
    )
    parser.add_argument(
        "--margin",
        type=rate_difference,
        default=DEFAULT_MARGIN,
        metavar="D",
        help=f"cut a fragment that costs less success rate than this (default "
        f"{DEFAULT_MARGIN * 100:.0f}pp)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"the chance of a wrong keep or cut over the whole ablation (default {DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--results", metavar="DIR", help="where the runs go (default .ooda/results)"
    )
    parser.add_argument("--html", metavar="FILE", help="also write the verdicts as an HTML page")
    parser.set_defaults(func=command)


def _progress(record: RunRecord, spent: Spent) -> None:
    from pytest_ooda.report import money

    cost = f" cost={money(record.cost)}" if record.cost is not None else ""
    note(
        f"ooda: {record.label} {record.head.run}/{record.head.runs}: {record.outcome}{cost} "
        f"(spent {money(spent.cost)}, {spent.tokens:,} tokens, {spent.runs} run(s))"
    )


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.ablate import ablation_arms, run_ablation
    from pytest_ooda.report import ablation_lines, money, render_ablation_html
    from pytest_ooda.results import Budget
    from pytest_ooda.scenario import load_scenario
    from pytest_ooda.settings import BUDGET, BUDGET_TOKENS

    settings = read_settings(args)
    if args.results:
        settings = settings.but(results=Path(args.results).resolve())
    config = load_from_args(args, settings)
    scenario = load_scenario(Path(args.scenario))
    procedure = config.procedure(scenario.procedure)
    places = ablation_arms(procedure, args.phase)
    budget = Budget(settings[BUDGET], settings[BUDGET_TOKENS])
    note(
        f"ooda ablate: {scenario.label}: the full prompt and {len(places)} arm(s) "
        f"({', '.join(places)}), {args.runs} round(s) at most"
        + (f", budget {budget.describe()}" if budget else "")
    )
    done = run_ablation(
        settings,
        scenario,
        config=config,
        places=places,
        rounds=args.runs,
        budget=budget,
        alpha=args.alpha,
        margin=args.margin,
        on_run=_progress,
    )
    if done.result is not None:
        print("\n".join(ablation_lines(done.result)))
    spent = f"{money(done.spent.cost)}, {done.spent.tokens:,} tokens"
    print(
        f"\n{done.spent.runs} run(s), {spent}"
        + (f" of a budget of {budget.describe()}" if budget else "")
    )
    for arm, number in done.settled.items():
        print(f"  {arm}: settled after round {number}")
    if done.stopped is not None:
        print(f"stopped: {done.stopped}; arms still open are can't tell yet")
    unheld = budget.unheld(done.spent)
    if unheld is not None:
        note(f"warning: {unheld}")
    if done.log is not None:
        print(f"results: {done.log} (`ooda view {done.log.parent}` shows the ablation)")
    if args.html and done.result is not None:
        from pytest_ooda._util import atomic_write_text

        html = render_ablation_html([done.result], title=f"ablation of {scenario.label}")
        atomic_write_text(Path(args.html), html)
        note(f"ooda ablate: wrote {args.html}")
    return EXIT_OK

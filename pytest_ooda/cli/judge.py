"""``ooda judge check SCENARIO``: grade a rubric's labelled examples N times and report
how far the judge can be trusted (accuracy against the labels, agreement between its
repeated gradings, Cohen's kappa); exit 1 below ``--min-accuracy``/``--min-kappa``, or
when no grading succeeded (a judge that was never heard cannot be trusted)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, add_config_option, note, positive_int

if TYPE_CHECKING:
    from pytest_ooda.judge import Calibration

#: The judge's figures fell below a --min-* threshold, or no grading succeeded.
EXIT_UNTRUSTED = 1


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from -1 to 1, got {value:g}")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="check a scenario's judge against labelled examples (calibration)",
        description="Model-graded rubrics (expect.judge) and how far to trust them.",
    )
    actions = parser.add_subparsers(dest="judge_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="grade the labelled examples N times; report accuracy, agreement, kappa",
        description="Grade each labelled example of SCENARIO's expect.judge (its "
        "examples:, or --examples FILE) --runs times with the scenario's judge, and "
        "report the accuracy against the labels, the agreement between repeated "
        "gradings and Cohen's kappa. Gradings are cached in the results directory's "
        "judge-cache/ (default .ooda/results, shared with pytest's live runs), so a "
        "second check asks nothing again.",
        epilog="exit codes: 0 checked (and above every --min-*), 1 no grading succeeded, "
        "a --min-* threshold not met (below it, or n/a) or a usage error, 2 a scenario, "
        "examples or config error.",
    )
    check.add_argument("scenario", metavar="SCENARIO", help="scenario file with expect.judge")
    check.add_argument(
        "--examples",
        metavar="FILE",
        help="labelled examples file (a YAML list, or a mapping with examples:) instead "
        "of the scenario's own",
    )
    check.add_argument(
        "--runs",
        "-n",
        type=positive_int,
        default=5,
        metavar="N",
        help="gradings per example (default 5)",
    )
    check.add_argument(
        "--results-dir",
        metavar="DIR",
        help="results directory whose judge-cache/ holds the gradings (default .ooda/results, "
        "where pytest's live runs cache theirs)",
    )
    check.add_argument("--no-cache", action="store_true", help="ask the judge every time")
    check.add_argument("--min-accuracy", type=_rate, metavar="A", help="exit 1 below accuracy A")
    check.add_argument("--min-kappa", type=_rate, metavar="K", help="exit 1 below kappa K")
    add_config_option(check)
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.config import load_config
    from pytest_ooda.errors import ScenarioError
    from pytest_ooda.judge import (
        cache_for,
        calibrate,
        judge_places,
        load_examples,
        make_asker,
        render,
    )
    from pytest_ooda.scenario import load_scenario

    scenario = load_scenario(args.scenario)
    spec = scenario.expect.judge if scenario.expect is not None else None
    if spec is None:
        raise ScenarioError(
            "the scenario has no expect.judge to check",
            file=args.scenario,
            line=1,
            hint="add expect.judge with a rubric, a judge and examples",
        )
    examples = load_examples(Path(args.examples)) if args.examples else spec.examples
    if not examples:
        raise ScenarioError(
            "no labelled examples to grade",
            file=args.scenario,
            line=spec.line,
            hint="add expect.judge.examples (label: pass|fail with output/diff/transcript/"
            "files), or pass --examples FILE",
        )
    config = None
    if spec.backend.ai_cmd_alias is not None or "{config_dir}" in (spec.backend.ai_cmd or ""):
        config = load_config(args.config, cwd=Path.cwd())
    asker = make_asker(
        spec.backend,
        config=config,
        procedure=scenario.procedure,
        places=judge_places(scenario, config),
    )
    cache = None
    if not args.no_cache:
        default = Path(".ooda")
        cache = cache_for(
            args.results_dir or default / "results",
            ignore_dir=None if args.results_dir else default,
        )

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            end = "\n" if done == total else ""
            sys.stderr.write(f"\r  graded {done}/{total}{end}")
            sys.stderr.flush()

    calibration = calibrate(spec, examples, asker, runs=args.runs, cache=cache, progress=progress)
    print("\n".join(render(calibration, title=f"judge check {scenario.label}")))
    failed = _unmet(calibration, args.min_accuracy, args.min_kappa)
    if failed:
        note("ooda judge check: " + "; ".join(failed))
        return EXIT_UNTRUSTED
    return EXIT_OK


def _unmet(
    calibration: Calibration, min_accuracy: float | None, min_kappa: float | None
) -> list[str]:
    """What keeps the judge from being trusted: no grading at all, or a figure below
    its threshold. A figure that is n/a is said to be n/a, never "below"."""
    failed = []
    none = "no grading succeeded"
    if not calibration.gradings:
        failed.append(f"{none} ({calibration.errors} judge error(s)); the judge is unchecked")
    one_class = "the gradings and the labels hold one verdict only"
    for name, value, minimum, why in (
        ("accuracy", calibration.accuracy, min_accuracy, none),
        ("kappa", calibration.kappa, min_kappa, one_class if calibration.gradings else none),
    ):
        if minimum is None:
            continue
        if value is None:
            failed.append(f"{name} is n/a ({why}), so --min-{name} {minimum:g} is not met")
        elif value < minimum:
            failed.append(f"{name} {value:.2f} is below {minimum:g}")
    return failed

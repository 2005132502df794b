"""``ooda run``: run a procedure in the loop (or replay or record a scenario)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import AI_OUTPUTS
from pytest_ooda.cli.common import (
    EXIT_OK,
    RawDescriptionHelpFormatter,
    add_config_option,
    add_prompt_format_option,
    check_context,
    load_from_args,
    note,
    positive_int,
    write_prompt,
)
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pytest_ooda.config import Config
    from pytest_ooda.live import RunPlan
    from pytest_ooda.loop import LoopEvent


#: ``ooda run``'s exit codes, as ``ooda run --help`` and ``ooda --help`` print them.
EXIT_TABLE = """\
exit codes of ooda run:
  0    success: the procedure signalled SUCCESS
  1    aborted: the failure threshold was reached, or the AI command could not start
       (also: a usage error in the options)
  2    configuration error: the config, a fragment, a template, a scenario, or lint
       errors that make the run meaningless, such as <no value> in the prompt (checked
       before the first iteration; --no-lint skips lint; advice such as OODA301 is
       printed as a warning)
  3    iteration limit reached without a signal (max-iters)
  130  interrupted"""


def _positive_amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an amount in US dollars, got {text!r}"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected an amount in US dollars > 0, got {text}")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a procedure in the loop until it signals success",
        description="Run PROCEDURE: each iteration assembles the prompt afresh, starts the AI "
        "command as a new process with the prompt on stdin, and reads its output for "
        "<promise>SUCCESS</promise> / <promise>FAILURE</promise>. Log lines go to stderr; "
        "with --verbose the AI output is streamed to stdout.",
        epilog=EXIT_TABLE,
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.add_argument("procedure", metavar="PROCEDURE", help="procedure name (see `ooda list`)")
    ai = parser.add_mutually_exclusive_group()
    ai.add_argument("--ai-cmd", metavar="CMD", help="AI command line (split like a shell would)")
    ai.add_argument("--ai-cmd-alias", metavar="NAME", help="AI command alias (e.g. claude)")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--max-iterations", "-n", type=positive_int, metavar="N", help="iteration limit"
    )
    limit.add_argument("--unlimited", action="store_true", help="no iteration limit")
    parser.add_argument(
        "--max-cost",
        type=_positive_amount,
        metavar="USD",
        help="stop (aborted) after the iteration that brings the run's cost to USD",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        metavar="N",
        help="stop (aborted) after the iteration that brings the run's tokens to N",
    )
    parser.add_argument(
        "--ai-output",
        choices=AI_OUTPUTS,
        help="how the AI command's output is read (default: as its own flags say, else text)",
    )
    parser.add_argument(
        "--context",
        "-x",
        action="append",
        default=[],
        metavar="X",
        help="context text, or a file whose content is included (repeatable)",
    )
    add_config_option(parser)
    add_prompt_format_option(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate everything (config, fragments, templates, the AI command) and print "
        "the resolved settings and the prompt, without starting anything",
    )
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument(
        "--verbose", "-v", action="store_true", help="stream the AI output; per-iteration details"
    )
    noise.add_argument(
        "--quiet", "-q", action="store_true", help="only warnings and the final summary"
    )
    parser.add_argument(
        "--no-lint",
        action="store_true",
        help="start the run even when `ooda lint` finds errors that make it meaningless "
        "(by default they stop it before the first iteration, exit 2)",
    )
    parser.add_argument(
        "--record", metavar="SCENARIO.yml", help="write the run to this scenario file"
    )
    parser.add_argument(
        "--sandbox",
        type=_sandbox_kind,
        metavar="KIND",
        help="run the agent (and verification commands) in a sandbox: none, bwrap, docker "
        "or a plugin's kind; beats sandbox: in the config and scenario (`ooda help sandbox`)",
    )
    parser.add_argument(
        "--replay",
        metavar="SCENARIO.yml",
        help="serve the AI's iterations from this scenario file instead of running it",
    )
    parser.set_defaults(func=command)


def _sandbox_kind(text: str) -> str:
    from pytest_ooda.sandbox import OptionError, load_kind

    try:
        load_kind(text.strip())
    except OptionError as exc:
        raise argparse.ArgumentTypeError(exc.one_line()) from None
    return text.strip()


def _lint_gate(config: Config, procedure: str) -> None:
    """Lint errors that make the run meaningless (the prompt would hold ``<no value>``,
    a fragment would not render) stop it before any AI time is spent. Advice — no
    fragment says when to signal SUCCESS (OODA301), an unused parameter made an error
    by the project — is printed as a warning and the run goes on, as it would in rooda,
    whose preamble explains the signals as ours does."""
    import dataclasses

    from pytest_ooda.diagnostics import format_findings
    from pytest_ooda.errors import ConfigError
    from pytest_ooda.lint import lint_procedure

    errors = [f for f in lint_procedure(config, procedure) if f.severity == "error"]
    for finding in errors:
        if not finding.rule.stops_run:
            advice = dataclasses.replace(finding, severity="warning")
            note(f"warning: {advice.format(relative_to=Path.cwd())} (an error in `ooda lint`)")
    stops = [finding for finding in errors if finding.rule.stops_run]
    if stops:
        note(format_findings(stops, root=Path.cwd()))
        raise ConfigError(
            f"procedure {procedure}: {len(stops)} lint error(s) that would make the run "
            "meaningless; the run was not started",
            hint="fix them (`ooda lint` lists them), change their severity in the config's "
            "lint: section, or pass --no-lint to run anyway",
        )


def command(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        return _run(args, stack)


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    """A live run goes the one live path (plan, preflight, sandbox, loop:
    :func:`pytest_ooda.live.run_live`); ``--replay`` serves a recording instead."""
    from pytest_ooda import live

    if args.replay and (args.ai_cmd or args.ai_cmd_alias):
        raise UsageError("--replay serves recorded output; it cannot be combined with --ai-cmd")
    if args.replay and args.record:
        raise UsageError("--replay and --record cannot be combined")
    check_context(args.context)
    # A named sandbox is a command-line override of loop.sandbox: it beats the
    # procedure's and the scenario's, and --provenance / --dry-run show it as `cli`.
    config = load_from_args(args)
    config.procedure(args.procedure)
    if args.replay:
        return _replay(args, config, stack)
    plan = _plan(args, config)
    if not args.no_lint:
        _lint_gate(config, args.procedure)
    # Before the first iteration (and in a dry run): it would fail every one of them.
    live.run_preflight(plan)
    if args.dry_run:
        return _dry_run(args, plan)
    for text in plan.notes:
        note(f"note: {text.message}")
    with _console(args, config, plan.settings.show_ai_output) as on_event:
        done = live.run_live(plan, on_event=on_event, handle_signals=True)
    for warning in done.warnings:
        note(f"warning: {warning.message}")
    if args.record:
        for problem in done.problems:
            note(f"warning: scenario expectation not met: {problem}")
        if done.recording is not None:
            written = live.write_recording(done.recording)
            note(f"recorded {done.result.iterations} iteration(s) to {written}")
        else:
            note(f"warning: not recorded: {done.not_recorded}")
    return done.result.exit_code


def _plan(args: argparse.Namespace, config: Config) -> RunPlan:
    """The run, decided from the flags and ``config`` (:func:`pytest_ooda.live.plan_run`):
    in the current directory itself, recorded to ``--record``'s file when given."""
    import dataclasses

    from pytest_ooda import live, scenario
    from pytest_ooda.settings import SessionSettings

    workdir = Path.cwd()
    session = SessionSettings(
        root=workdir,
        ai_cmd=args.ai_cmd,
        ai_cmd_alias=args.ai_cmd_alias,
        ai_output=args.ai_output,
        max_iterations=args.max_iterations,
        unlimited=args.unlimited,
        context=tuple(args.context),
        max_cost=args.max_cost,
        max_tokens=args.max_tokens,
        show_ai_output=True if args.verbose else None,
        record_mode="all" if args.record else "none",
        flag_prefix="--",
        labels=MappingProxyType({"show_ai_output": "--verbose"}),
    )
    base = scenario.Scenario(procedure=args.procedure, name=args.procedure)
    target = Path(args.record) if args.record else None
    if target is not None:
        # Checked before the run, so a wrong target costs no AI time.
        scenario.check_writable(target, create=not args.dry_run)
        base = scenario.Scenario(procedure=args.procedure, name=target.stem, path=target)
        if target.exists():
            base = scenario.load_scenario(target)
            if base.procedure != args.procedure:
                raise UsageError(
                    f"{target} records procedure {base.procedure!r}, not {args.procedure!r}"
                )
    plan = live.plan_run(
        session, args.procedure, base, config=config, record_to=target, workdir=workdir
    )
    if target is not None and not target.exists():
        # A new scenario file states the limit and context the run had.
        recorded = dataclasses.replace(
            base, max_iterations=plan.settings.max_iterations, context=plan.context
        )
        plan = dataclasses.replace(plan, scenario=recorded)
    return plan


def _dry_run(args: argparse.Namespace, plan: RunPlan) -> int:
    """Check everything a run would need — the agent's executable or API, the prompt,
    the sandbox — and print the plan's settings and the prompt; nothing is started."""
    from pytest_ooda import loop
    from pytest_ooda.compose import assemble_prompt

    settings, workdir = plan.settings, Path.cwd()
    executable: str | None = None
    if settings.ai_cmd is not None:
        from pytest_ooda.backends import resolve_executable

        executable = resolve_executable(settings.ai_cmd, workdir=workdir)
    elif settings.ai_api is not None:
        from pytest_ooda.backends import HttpBackend

        HttpBackend.from_settings(settings.ai_api).check()
    prompt = assemble_prompt(
        plan.procedure,
        iteration=1,
        max_iterations=settings.max_iterations,
        context=plan.context,
        cwd=workdir,
    )
    if settings.sandbox is not None and settings.sandbox.kind != "none":
        from pytest_ooda.sandbox import open_sandbox

        # The daemon, image and program are checked now, as a run would check them.
        open_sandbox(settings.sandbox)
    print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
    print(loop.format_run_settings(settings, executable=executable), file=sys.stderr)
    if args.record:
        print(f"  record  {args.record} (checked: writable)", file=sys.stderr)
    write_prompt(prompt)
    return EXIT_OK


@contextlib.contextmanager
def _console(
    args: argparse.Namespace, config: Config, streaming: bool
) -> Iterator[Callable[[LoopEvent], None]]:
    """The loop's events for the person at the terminal, for the block."""
    import logging

    from pytest_ooda import loop

    # A progress line redrawn under streamed AI output would garble both.
    reporter = loop.ConsoleReporter(
        verbose=args.verbose,
        quiet=args.quiet,
        progress=False if streaming else None,
        level=config.loop.log_level,
        timestamps=config.loop.log_timestamp_format,
    )
    # The reporter prints the events; keep logging's last-resort handler from echoing them.
    quiet_logger = logging.getLogger("pytest_ooda.loop")
    null = logging.NullHandler()
    quiet_logger.addHandler(null)
    try:
        yield reporter
    finally:
        reporter.close()
        quiet_logger.removeHandler(null)


def _replay(args: argparse.Namespace, config: Config, stack: contextlib.ExitStack) -> int:
    """``--replay``: the scenario's recorded outputs through the loop, in a scratch copy
    of its workspace (a recording's file changes, deletions included, must never land
    in the user's tree; the workspace must lie inside the project, as in pytest)."""
    import shutil
    import tempfile

    from pytest_ooda import loop, scenario
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings

    replay = scenario.load_scenario(args.replay)
    if replay.procedure != args.procedure:
        raise UsageError(
            f"{args.replay} records procedure {replay.procedure!r}, not {args.procedure!r}"
        )
    max_iterations = args.max_iterations
    if max_iterations is None and not args.unlimited:
        max_iterations = replay.max_iterations
    context = list(args.context) or list(replay.context)
    workdir = Path.cwd()
    files = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ooda-replay-")))
    source = scenario.workspace_of(replay, root=workdir)
    if source is not None:
        shutil.copytree(source, files, dirs_exist_ok=True, symlinks=True)
    if args.dry_run:
        settings = resolve_run_settings(
            config,
            args.procedure,
            max_iterations=max_iterations,
            unlimited=args.unlimited,
            require_ai=False,
            max_cost=args.max_cost,
            max_tokens=args.max_tokens,
        )
        prompt = assemble_prompt(
            config.procedure(args.procedure),
            iteration=1,
            max_iterations=settings.max_iterations,
            context=context,
            cwd=workdir,
        )
        print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
        print(loop.format_run_settings(settings), file=sys.stderr)
        print(f"  replay  {replay.path} ({len(replay.iterations)} iterations)", file=sys.stderr)
        write_prompt(prompt)
        return EXIT_OK
    with _console(args, config, bool(args.verbose or config.loop.show_ai_output)) as on_event:
        replayed = scenario.replay_scenario(
            config,
            replay,
            workdir=workdir,
            files_dir=files,
            source=source,
            max_iterations=max_iterations,
            unlimited=args.unlimited,
            context=context,
            on_event=on_event,
            failure_threshold=replay.failure_threshold,
            show_ai_output=True if args.verbose else None,
            max_cost=args.max_cost,
            max_tokens=args.max_tokens,
        )
    for drift in replayed.drifts:
        note(f"warning: {drift.describe()}")
    for problem in replayed.problems:
        note(f"warning: scenario expectation not met: {problem}")
    return replayed.result.exit_code

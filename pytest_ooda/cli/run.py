"""``ooda run``: run a procedure in the loop (or replay or record a scenario)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
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
    from collections.abc import Callable

    from pytest_ooda.config import Config
    from pytest_ooda.live import LiveRun
    from pytest_ooda.scenario import Scenario


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


def _record(
    args: argparse.Namespace,
    config: Config,
    base: Scenario,
    workdir: Path,
    run_options: dict[str, Any],
) -> LiveRun:
    """``--record``: the live-run path of ``pytest -m live``, run in place (the current
    directory) and recorded to ``base``'s file whatever it held."""
    from pytest_ooda.config import CONFIG_FILENAME
    from pytest_ooda.live import LiveSettings, run_live

    settings = LiveSettings(
        root=workdir,
        ai_cmd=args.ai_cmd,
        ai_cmd_alias=args.ai_cmd_alias,
        ai_output=args.ai_output,
        record_mode="all",
        max_cost=args.max_cost,
        max_tokens=args.max_tokens,
        flag_prefix="--",
    )
    options = dict(run_options)
    on_event = options.pop("on_event")
    # The scenario's budget still applies: the tighter of it and the flag's.
    options.pop("max_cost")
    options.pop("max_tokens")
    target = Path(args.record)
    return run_live(
        config.files[-1] if config.files else workdir / CONFIG_FILENAME,
        args.procedure,
        target,
        settings=settings,
        scenario=base,
        config=config,
        workdir=workdir,
        record_to=target,
        on_event=on_event,
        run_options=options,
    )


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
    import logging

    from pytest_ooda import live, loop, scenario
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.scenario import replay_scenario

    if args.replay and (args.ai_cmd or args.ai_cmd_alias):
        raise UsageError("--replay serves recorded output; it cannot be combined with --ai-cmd")
    if args.replay and args.record:
        raise UsageError("--replay and --record cannot be combined")
    check_context(args.context)
    # A named sandbox is a command-line override of loop.sandbox: it beats the
    # procedure's and the scenario's, and --provenance / --dry-run show it as `cli`.
    config = load_from_args(args)
    config.procedure(args.procedure)
    replay: scenario.Scenario | None = None
    max_iterations, context = args.max_iterations, list(args.context)
    threshold: int | None = None
    if args.replay:
        replay = scenario.load_scenario(args.replay)
        if replay.procedure != args.procedure:
            raise UsageError(
                f"{args.replay} records procedure {replay.procedure!r}, not {args.procedure!r}"
            )
        if max_iterations is None and not args.unlimited:
            max_iterations = replay.max_iterations
        context = context or list(replay.context)
        threshold = replay.failure_threshold
    settings = resolve_run_settings(
        config,
        args.procedure,
        max_iterations=max_iterations,
        unlimited=args.unlimited,
        ai_cmd=args.ai_cmd,
        ai_cmd_alias=args.ai_cmd_alias,
        require_ai=replay is None,
        ai_output=args.ai_output,
        max_cost=args.max_cost,
        max_tokens=args.max_tokens,
    )
    workdir = Path.cwd()
    if replay is not None:
        # A recording's file changes (deletions included) must never land in the user's
        # tree: they go to a scratch copy of the scenario's workspace, as in pytest, and
        # the workspace must lie inside the project, as in pytest.
        import shutil
        import tempfile

        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="ooda-replay-"))
        replay_files = Path(scratch)
        source = scenario.workspace_of(replay, root=workdir)
        if source is not None:
            shutil.copytree(source, replay_files, dirs_exist_ok=True, symlinks=True)
    if replay is None and not args.no_lint:
        _lint_gate(config, args.procedure)
    if replay is None:
        import os

        from pytest_ooda.errors import ConfigError
        from pytest_ooda.live import root_refusal, sandbox_env

        # Before the first iteration (and in a dry run): it would fail every one of them.
        box = settings.sandbox
        if box is None or box.kind == "none":
            problem = root_refusal(settings.ai_cmd)
        else:
            inside = sandbox_env(box.options, os.environ)
            problem = root_refusal(settings.ai_cmd, env=inside, sandbox=box.kind)
        if problem is not None:
            raise ConfigError(problem)
    record_base: scenario.Scenario | None = None
    if args.record:
        # Checked before the run, so a wrong target costs no AI time.
        target = Path(args.record)
        scenario.check_writable(target, create=not args.dry_run)
        if target.exists():
            base = scenario.load_scenario(target)
            if base.procedure != args.procedure:
                raise UsageError(
                    f"{target} records procedure {base.procedure!r}, not {args.procedure!r}"
                )
        else:
            base = scenario.Scenario(
                procedure=args.procedure,
                name=target.stem,
                path=target,
                context=tuple(context),
                max_iterations=settings.max_iterations,
            )
        record_base = base
    if args.dry_run:
        executable: str | None = None
        if replay is None and settings.ai_cmd is not None:
            from pytest_ooda.backends import resolve_executable

            executable = resolve_executable(settings.ai_cmd, workdir=workdir)
        elif replay is None and settings.ai_api is not None:
            from pytest_ooda.backends import HttpBackend

            HttpBackend.from_settings(settings.ai_api).check()
        prompt = assemble_prompt(
            config.procedure(args.procedure),
            iteration=1,
            max_iterations=settings.max_iterations,
            context=context,
            cwd=workdir,
        )
        if settings.sandbox is not None and settings.sandbox.kind != "none":
            from pytest_ooda.sandbox import open_sandbox

            # The daemon, image and program are checked now, as a run would check them.
            open_sandbox(settings.sandbox)
        print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
        print(loop.format_run_settings(settings, executable=executable), file=sys.stderr)
        if replay is not None:
            print(f"  replay  {replay.path} ({len(replay.iterations)} iterations)", file=sys.stderr)
        if args.record:
            print(f"  record  {args.record} (checked: writable)", file=sys.stderr)
        write_prompt(prompt)
        return EXIT_OK
    streaming = args.verbose or settings.show_ai_output
    # A progress line redrawn under streamed AI output would garble both.
    reporter = loop.ConsoleReporter(
        verbose=args.verbose,
        quiet=args.quiet,
        progress=False if streaming else None,
        level=config.loop.log_level,
        timestamps=config.loop.log_timestamp_format,
    )
    on_event: Callable[[loop.LoopEvent], None] = reporter
    # The reporter prints the events; keep logging's last-resort handler from echoing them.
    quiet_logger = logging.getLogger("pytest_ooda.loop")
    null = logging.NullHandler()
    quiet_logger.addHandler(null)
    run_options: dict[str, Any] = {
        "max_iterations": max_iterations,
        "unlimited": args.unlimited,
        "context": context,
        "on_event": on_event,
        "failure_threshold": threshold,
        "show_ai_output": True if args.verbose else None,
        "max_cost": args.max_cost,
        "max_tokens": args.max_tokens,
    }
    recorded: live.LiveRun | None = None
    try:
        if replay is not None:
            replayed = replay_scenario(
                config, replay, workdir=workdir, files_dir=replay_files, **run_options
            )
            result = replayed.result
        elif record_base is not None:
            recorded = _record(args, config, record_base, workdir, run_options)
            result = recorded.result
        else:
            from pytest_ooda.sandbox import sandboxed, unattended_warning

            unattended = unattended_warning(settings.sandbox, settings.ai_cmd)
            if unattended is not None:
                note(f"note: {unattended.message}")
            sandbox = stack.enter_context(sandboxed(settings.sandbox, workdir))
            result = loop.run_procedure(
                config,
                args.procedure,
                backend=loop.make_backend(settings, sandbox=sandbox),
                workdir=workdir,
                ai_cmd=args.ai_cmd,
                ai_cmd_alias=args.ai_cmd_alias,
                ai_output=args.ai_output,
                **run_options,
            )
    finally:
        reporter.close()
        quiet_logger.removeHandler(null)
    if replay is not None:
        for drift in replayed.drifts:
            note(f"warning: {drift.describe()}")
        for problem in replayed.problems:
            note(f"warning: scenario expectation not met: {problem}")
    if recorded is not None:
        for warning in recorded.warnings:
            note(f"warning: {warning.message}")
        for problem in recorded.problems:
            note(f"warning: scenario expectation not met: {problem}")
        if recorded.recorded is not None:
            note(f"recorded {result.iterations} iteration(s) to {recorded.recorded}")
        else:
            note(f"warning: not recorded: {recorded.not_recorded}")
    return result.exit_code

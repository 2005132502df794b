"""``ooda run``: run a procedure in the loop (or replay or record a scenario)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import (
    EXIT_OK,
    RawDescriptionHelpFormatter,
    add_settings,
    load_from_args,
    note,
    read_settings,
    write_prompt,
)
from pytest_ooda.errors import (
    BackendError,
    ConfigError,
    NoAICommandError,
    OodaError,
    UsageError,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator

    from pytest_ooda.config import Config, RunSettings
    from pytest_ooda.live import RunPlan
    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.scenario import Scenario
    from pytest_ooda.settings import Given, SessionSettings


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
    # The settings a run takes, as the settings table declares them (its `ooda` flags).
    add_settings(parser)
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
        "--replay",
        metavar="SCENARIO.yml",
        help="serve the AI's iterations from this scenario file instead of running it",
    )
    parser.set_defaults(func=command)


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


def _known(config: Config, name: str) -> None:
    """A procedure the config does not define at all is a usage mistake (exit 1, as in
    rooda), pointing at ``ooda list``; one it defines badly is its own located error."""
    from pytest_ooda._util import closest

    if name in config.procedures or name in config.broken:
        config.procedure(name)
        return
    near = closest(name, [*config.procedures, *config.broken])
    raise UsageError(
        f"unknown procedure {name!r}",
        hint=(f"did you mean {near!r}? " if near else "")
        + "Run `ooda list` to see the available procedures",
    )


def command(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        return _run(args, stack)


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    """A live run goes the one live path (plan, preflight, sandbox, loop:
    :func:`pytest_ooda.live.run_live`); ``--replay`` plans the same way and serves a
    recording instead."""
    from pytest_ooda import live
    from pytest_ooda.settings import Given

    if args.replay and (args.ai_cmd or args.ai_cmd_alias):
        raise UsageError("--replay serves recorded output; it cannot be combined with --ai-cmd")
    if args.replay and args.record:
        raise UsageError("--replay and --record cannot be combined")
    # The flags decided as the pytest plugin decides its options (the settings table).
    typed = {"record_mode": Given("all" if args.record else "none", "cli", "--record")}
    show = True if args.verbose else None
    settings = read_settings(args, typed=typed, show_ai_output=show)
    limits = _budget_as_limits(settings)
    if limits:
        settings = read_settings(args, typed={**typed, **limits}, show_ai_output=show)
    config = load_from_args(args, settings)
    _known(config, args.procedure)
    if args.replay:
        return _replay(args, settings, config, stack)
    try:
        plan = _plan(args, settings, config)
    except ConfigError as missing:
        if not args.dry_run:
            raise
        # A dry run shows the prompt all the same (no agent configured, an unknown
        # alias), and says what a run would lack.
        if not args.no_lint:
            _lint_gate(config, args.procedure)
        return _dry_run_without_agent(args, config, missing)
    if not args.no_lint:
        _lint_gate(config, args.procedure)
    if args.dry_run:
        # What run_live checks before the first iteration, checked without running.
        live.run_preflight(plan)
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


def _budget_as_limits(settings: SessionSettings) -> dict[str, Given]:
    """``--budget``/``--budget-tokens`` as the run's ``--max-cost``/``--max-tokens``
    where smaller: ``ooda run`` makes one run, and a session's first run always starts,
    so its budget is held the one way a single run can be — it stops at the iteration
    that reaches it."""
    from pytest_ooda.settings import BUDGET, BUDGET_TOKENS, MAX_COST, MAX_TOKENS, Given

    limits: dict[str, Given] = {}
    for budget, limit in ((BUDGET, MAX_COST), (BUDGET_TOKENS, MAX_TOKENS)):
        cap, own = settings[budget], settings[limit]
        if cap is not None and (own is None or cap < own):
            limits[limit.name] = Given(cap, "cli", settings.label(budget.name))
    return limits


def _plan(args: argparse.Namespace, settings: SessionSettings, config: Config) -> RunPlan:
    """The run, decided from the settings and ``config`` (:func:`pytest_ooda.live.plan_run`):
    in the current directory itself, recorded to ``--record``'s file when given."""
    import dataclasses

    from pytest_ooda import live, scenario

    workdir = Path.cwd()
    base = scenario.Scenario(procedure=args.procedure, name=args.procedure)
    target = Path(args.record) if args.record else None
    if target is not None:
        # Checked before the run, so a wrong target costs no AI time.
        scenario.check_writable(target, create=not args.dry_run)
        base = scenario.Scenario(procedure=args.procedure, name=target.stem, path=target)
        if target.exists():
            base = _one_run(scenario.load_scenario(target), "--record")
            if base.procedure != args.procedure:
                raise UsageError(
                    f"{target} records procedure {base.procedure!r}, not {args.procedure!r}"
                )
    plan = live.plan_run(
        settings, args.procedure, base, config=config, record_to=target, workdir=workdir
    )
    if target is not None and not target.exists():
        # A new scenario file states the limit and context the run had.
        recorded = dataclasses.replace(
            base, max_iterations=plan.settings.max_iterations, context=plan.context
        )
        plan = dataclasses.replace(plan, scenario=recorded)
    return plan


def _one_run(loaded: Scenario, flag: str) -> Scenario:
    """``loaded``, when it is one run to record or replay; a trigger set is one live run
    per prompt, which ``pytest -m live`` makes (an item each), never recorded."""
    if loaded.triggers is None:
        return loaded
    raise UsageError(
        f"{flag} {loaded.path}: scenario {loaded.label} is a trigger set (one live run per "
        f"prompt, never recorded): run it with  pytest -m live -k {loaded.name}"
    )


def _dry_run(args: argparse.Namespace, plan: RunPlan, *, replay: Scenario | None = None) -> int:
    """Check everything a run would need — the agent's executable or API, the prompt,
    the sandbox — and print the plan's settings and the prompt; nothing is started. A
    replay (``replay``: the scenario it serves) starts no agent: only the prompt is
    checked."""
    from pytest_ooda import loop
    from pytest_ooda.compose import assemble_prompt

    settings, workdir = plan.settings, Path.cwd()
    missing: OodaError | None = None
    executable = None
    if replay is None:
        try:
            executable = _checked_agent(settings, workdir)
        except BackendError as error:
            # The prompt is shown all the same; the run would stop here.
            missing = _naming_alias(error, args, plan.config)
    prompt = assemble_prompt(
        plan.procedure,
        iteration=1,
        max_iterations=settings.max_iterations,
        context=plan.context,
        cwd=workdir,
    )
    print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
    print(loop.format_run_settings(settings, executable=executable), file=sys.stderr)
    if args.record:
        print(f"  record  {args.record} (checked: writable)", file=sys.stderr)
    if replay is not None:
        print(f"  replay  {replay.path} ({len(replay.iterations)} iterations)", file=sys.stderr)
    write_prompt(prompt)
    if missing is not None:
        raise missing
    return EXIT_OK


def _dry_run_without_agent(args: argparse.Namespace, config: Config, missing: ConfigError) -> int:
    """A dry run whose run could not be planned (no agent configured, an unknown alias):
    the procedure's prompt (as iteration 1 of its own limit), then what a run would
    lack; exit 2, as the run."""
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import resolve_run_settings

    procedure = config.procedure(args.procedure)
    limit = resolve_run_settings(
        config, args.procedure, require_ai=False, agent=False
    ).max_iterations
    prompt = assemble_prompt(
        procedure,
        iteration=1,
        max_iterations=limit,
        context=tuple(args.context or ()),
        cwd=Path.cwd(),
    )
    print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
    write_prompt(prompt)
    if not isinstance(missing, NoAICommandError):
        raise missing
    raise ConfigError(
        f"no AI command configured for procedure {args.procedure!r}: the prompt above is "
        "what a run would send, once it has one",
        hint="give --ai-cmd 'my-cli --flag' or --ai-cmd-alias NAME, or set ai_cmd / "
        f"ai_cmd_alias in ooda-config.yml (`ooda run --help`; known aliases: "
        f"{', '.join(sorted(config.aliases))})",
    ) from missing


def _naming_alias(error: BackendError, args: argparse.Namespace, config: Config) -> OodaError:
    """``error`` (an agent that cannot start) naming the alias its command came from."""
    alias = args.ai_cmd_alias
    if alias is None and not args.ai_cmd:
        procedure = config.procedure(args.procedure)
        if procedure.ai_cmd is None and procedure.ai_api is None:
            alias = procedure.ai_cmd_alias or (
                config.loop.ai_cmd_alias if config.loop.ai_cmd is None else None
            )
    if alias is None or alias not in config.aliases:
        return error
    return error.relocated(message=f"alias {alias}: {error.message}")


def _checked_agent(settings: RunSettings, workdir: Path) -> str | None:
    """The agent's executable (or its API) and its sandbox, checked as a run would
    check them; the executable's path."""
    executable: str | None = None
    if settings.ai_cmd is not None:
        from pytest_ooda.backends import resolve_executable

        executable = resolve_executable(settings.ai_cmd, workdir=workdir)
    elif settings.ai_api is not None:
        from pytest_ooda.backends import HttpBackend

        HttpBackend.from_settings(settings.ai_api).check()
    if settings.sandbox is not None and settings.sandbox.kind != "none":
        from pytest_ooda.sandbox import open_sandbox

        # The daemon, image and program are checked now, as a run would check them.
        open_sandbox(settings.sandbox)
    return executable


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


def _replay(
    args: argparse.Namespace,
    settings: SessionSettings,
    config: Config,
    stack: contextlib.ExitStack,
) -> int:
    """``--replay``: the run planned as a live run is (:func:`pytest_ooda.live.plan_run`,
    the recording standing in for the agent), then the scenario's recorded outputs
    through the loop, in a scratch copy of its workspace (a recording's file changes,
    deletions included, must never land in the user's tree; the workspace must lie
    inside the project, as in pytest)."""
    import shutil
    import tempfile

    from pytest_ooda import live, scenario
    from pytest_ooda.settings import SANDBOX

    replay = _one_run(scenario.load_scenario(args.replay), "--replay")
    if replay.procedure != args.procedure:
        raise UsageError(
            f"{args.replay} records procedure {replay.procedure!r}, not {args.procedure!r}"
        )
    workdir = Path.cwd()
    plan = live.plan_run(
        settings, args.procedure, replay, config=config, workdir=workdir, require_ai=False
    )
    files = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ooda-replay-")))
    source = scenario.workspace_of(replay, root=workdir)
    if source is not None:
        shutil.copytree(source, files, dirs_exist_ok=True, symlinks=True)
    if args.dry_run:
        return _dry_run(args, plan, replay=replay)
    with _console(args, config, plan.settings.show_ai_output) as on_event:
        replayed = scenario.replay_scenario(
            plan.config,
            replay,
            workdir=workdir,
            files_dir=files,
            source=source,
            sandbox=settings[SANDBOX],
            settings=plan.settings,
            context=plan.context,
            on_event=on_event,
        )
    for drift in replayed.drifts:
        note(f"warning: {drift.describe()}")
    for problem in replayed.problems:
        note(f"warning: scenario expectation not met: {problem}")
    return replayed.result.exit_code

"""The ``ooda`` command: a thin argparse front end over the library.

Each subcommand is a pair ``_add_<cmd>_parser(subparsers)`` / ``_cmd_<cmd>(args) -> int``
defined in this module and listed once in ``COMMANDS``. Exit codes: 0 success, 1 usage
error (bad options), 2 configuration error (any ``OodaError``), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_ooda import __version__
from pytest_ooda.config import (
    PHASES,
    Config,
    check_config_file,
    load_config,
    resolve_run_settings,
)
from pytest_ooda.errors import OodaError, ScenarioError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


# Subcommands in the order `ooda --help` lists them. Adding one: define
# `_add_<name>_parser` and `_cmd_<name>` below and append the name here.
COMMANDS: tuple[str, ...] = ("list", "show", "run", "lint")

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_CONFIG = 2
EXIT_INTERRUPTED = 130

_EPILOG = """\
configuration tiers (highest first): command-line flags, OODA_* environment variables,
the workspace config (./ooda-config.yml or --config FILE), the global config
($OODA_CONFIG_HOME/ooda-config.yml, $XDG_CONFIG_HOME/ooda/ooda-config.yml or
~/.config/ooda/ooda-config.yml), the built-in procedures.

exit codes: 0 success, 1 usage error, 2 configuration error."""


class UsageError(Exception):
    """Bad command-line usage (exit code 1)."""


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on bad usage; we reserve 2 for configuration errors."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """``--config FILE``: the workspace config file to use instead of ./ooda-config.yml."""
    parser.add_argument(
        "--config",
        "-c",
        metavar="FILE",
        help="config file to use instead of ./ooda-config.yml "
        "(any file with the same schema, e.g. rooda-config.yml)",
    )


def note(text: str) -> None:
    """A line for the person at the terminal, on stderr. Best effort: a closed or broken
    stderr (`ooda run 2>&1 | head`) must not turn a run's exit code into a crash or 0."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr)


def write_prompt(text: str) -> None:
    """Write prompt text to stdout as the UTF-8 bytes the AI command receives.

    Whatever the locale: `ooda show build > prompt.txt` must hold the exact prompt, and a
    terminal in Latin-1 must not turn the box-drawing bars into a UnicodeEncodeError.
    """
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


def load_from_args(args: argparse.Namespace, **overrides: Any) -> Config:
    """Load the configuration for a command; prints config warnings to stderr."""
    config = load_config(getattr(args, "config", None), overrides=overrides or None)
    for warning in config.warnings:
        note(f"warning: {warning.format(Path.cwd())}")
    return config


def check_context(values: Sequence[str]) -> None:
    """Refuse ``--context`` values that name a directory or a file that cannot be read.

    The library treats such values as plain text; on the command line they are almost
    certainly a mistake, and for ``ooda run`` one that would cost AI time.
    """
    for value in values:
        if not value or "\n" in value or len(value) >= 4096:
            continue
        path = Path(value)
        try:
            if path.is_dir():
                raise UsageError(
                    f"--context {value}: is a directory; give a file, or text that is not a path"
                )
            if path.is_file():
                with open(path, "rb"):
                    pass
        except OSError as exc:
            raise UsageError(f"--context {value}: cannot read: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- list


def _add_list_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the available procedures",
        description="List every procedure (built-in plus workspace and global config) "
        "with its display name and summary.",
    )
    add_config_option(parser)
    parser.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    config = load_from_args(args)
    rows = [(name, proc.title, proc.summary) for name, proc in sorted(config.procedures.items())]
    if not rows:
        print("no procedures defined")
        return EXIT_OK
    name_width = max(len(row[0]) for row in rows)
    title_width = max(len(row[1]) for row in rows)
    for name, title, summary in rows:
        print(f"{name:<{name_width}}  {title:<{title_width}}  {summary}".rstrip())
    return EXIT_OK


# --------------------------------------------------------------------------- show


def _add_show_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "show",
        help="print a procedure's assembled prompt",
        description="Print the prompt a procedure sends to the AI command (without the "
        "Iteration line), or one phase of it, or where each setting comes from.",
    )
    parser.add_argument("procedure", metavar="PROCEDURE", help="procedure name (see `ooda list`)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--phase",
        "-p",
        choices=PHASES,
        help="print only this phase's composed text",
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
    what.add_argument(
        "--provenance",
        action="store_true",
        help="print each resolved setting and the tier/file:line it came from "
        "instead of the prompt",
    )
    parser.set_defaults(func=_cmd_show)


def format_provenance(config: Config, procedure: str) -> str:
    """The resolved run settings of ``procedure`` and each one's source, one per line."""
    from pytest_ooda.config import Provenance

    proc = config.procedure(procedure)
    run = resolve_run_settings(config, procedure, require_ai=False)
    values: list[tuple[str, str, str]] = []
    limit = "unlimited" if run.max_iterations is None else str(run.max_iterations)
    values.append(("max_iterations", limit, str(run.provenance["max_iterations"])))
    timeout = "none" if run.iteration_timeout is None else f"{run.iteration_timeout}s"
    values.append(("iteration_timeout", timeout, str(run.provenance["iteration_timeout"])))
    for key in ("max_output_buffer", "failure_threshold", "show_ai_output"):
        values.append((key, str(getattr(run, key)).lower(), str(run.provenance[key])))
    if run.ai_cmd is not None:
        import shlex

        values.append(("ai_cmd", shlex.join(run.ai_cmd), str(run.provenance["ai_cmd"])))
    elif run.ai_api is not None:
        values.append(
            ("ai_api", f"{run.ai_api.provider} {run.ai_api.model}", str(run.provenance["ai_api"]))
        )
    else:
        values.append(("ai_cmd", "(none configured)", ""))
    for key in ("log_level",):
        values.append(
            (key, str(getattr(config.loop, key)), str(config.provenance.get(f"loop.{key}", "")))
        )
    default = Provenance("default")
    for phase, actions in proc.phases().items():
        where = str(config.provenance.get(f"procedures.{procedure}.{phase}", default))
        values.append((phase, f"{len(actions)} fragment(s)", where))
    width = max(len(key) for key, _, _ in values)
    vwidth = max(len(value) for _, value, _ in values)
    lines = [f"procedure {procedure} ({proc.title})"]
    lines += [f"  {k:<{width}}  {v:<{vwidth}}  {s}".rstrip() for k, v, s in values]
    for phase, actions in proc.phases().items():
        for index, action in enumerate(actions):
            loc = action.location
            lines.append(f"  {phase}[{index}]  {action.source_label()}  ({loc})")
    return "\n".join(lines) + "\n"


def _cmd_show(args: argparse.Namespace) -> int:
    from pytest_ooda.compose import assemble_prompt, compose_phase

    check_context(args.context)
    config = load_from_args(args)
    proc = config.procedure(args.procedure)
    if args.provenance:
        sys.stdout.write(format_provenance(config, args.procedure))
    elif args.phase:
        text = compose_phase(proc.phases()[args.phase], procedure=proc.name, phase=args.phase)
        write_prompt(text + "\n" if text else "")
    else:
        write_prompt(assemble_prompt(proc, context=args.context, cwd=Path.cwd()))
    return EXIT_OK


# --------------------------------------------------------------------------- lint


def _add_lint_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="check procedures and fragments against the lint rules",
        description="Check the procedures declared in the workspace config (the built-ins "
        "when there is none) against the rules in docs/lint-rules.md. Prints one "
        "`file:line:col: ID severity: message` line per finding and a summary; exits 1 "
        "when any error-severity finding remains.",
    )
    add_config_option(parser)
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (text)"
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="IDS",
        help="only these rules: ids, id prefixes (OODA2) or names, comma-separated",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="IDS",
        help="skip these rules: ids, id prefixes or names, comma-separated",
    )
    parser.add_argument(
        "--severity",
        action="append",
        default=[],
        metavar="RULE=LEVEL",
        help="override a rule's severity (error, warning, info, off); beats the config's "
        "lint: section",
    )
    parser.add_argument(
        "--builtin",
        action="store_true",
        help="also lint the built-in procedures",
    )
    parser.set_defaults(func=_cmd_lint)


def _cmd_lint(args: argparse.Namespace) -> int:
    from pytest_ooda import lint

    try:
        severities = lint.parse_severity_overrides(args.severity, source="--severity")
        lint.parse_rule_list(args.select, source="--select")
        lint.parse_rule_list(args.ignore, source="--ignore")
    except OodaError as exc:
        raise UsageError(str(exc)) from None
    if args.config is not None:
        check_config_file(args.config)
    report = lint.lint_path(
        args.config,
        builtin=args.builtin,
        severities=severities,
        select=args.select,
        ignore=args.ignore,
    )
    formatter = lint.format_json if args.format == "json" else lint.format_text
    sys.stdout.write(formatter(report))
    return report.exit_code


# --------------------------------------------------------------------------- run


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _add_run_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a procedure in the loop until it signals success",
        description="Run PROCEDURE: each iteration assembles the prompt afresh, starts the AI "
        "command as a new process with the prompt on stdin, and reads its output for "
        "<promise>SUCCESS</promise> / <promise>FAILURE</promise>. Log lines go to stderr; "
        "with --verbose the AI output is streamed to stdout.",
        epilog="exit codes: 0 success, 1 aborted (failure threshold reached or the AI command "
        "could not start), 2 iteration limit reached (or a configuration error), "
        "130 interrupted.",
    )
    parser.add_argument("procedure", metavar="PROCEDURE", help="procedure name (see `ooda list`)")
    ai = parser.add_mutually_exclusive_group()
    ai.add_argument("--ai-cmd", metavar="CMD", help="AI command line (split like a shell would)")
    ai.add_argument("--ai-cmd-alias", metavar="NAME", help="AI command alias (e.g. claude)")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--max-iterations", "-n", type=_positive_int, metavar="N", help="iteration limit"
    )
    limit.add_argument("--unlimited", action="store_true", help="no iteration limit")
    parser.add_argument(
        "--context",
        "-x",
        action="append",
        default=[],
        metavar="X",
        help="context text, or a file whose content is included (repeatable)",
    )
    add_config_option(parser)
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
        "--record", metavar="SCENARIO.yml", help="write the run to this scenario file"
    )
    parser.add_argument(
        "--replay",
        metavar="SCENARIO.yml",
        help="serve the AI's iterations from this scenario file instead of running it",
    )
    parser.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        return _run(args, stack)


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    import logging

    from pytest_ooda import loop, scenario
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.scenario.replay import replay_scenario

    if args.replay and (args.ai_cmd or args.ai_cmd_alias):
        raise UsageError("--replay serves recorded output; it cannot be combined with --ai-cmd")
    if args.replay and args.record:
        raise UsageError("--replay and --record cannot be combined")
    check_context(args.context)
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
    )
    workdir = Path.cwd()
    if replay is not None:
        # A recording's file changes (deletions included) must never land in the user's
        # tree: they go to a scratch copy of the scenario's workspace, as in pytest.
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="ooda-replay-"))
        replay_files = Path(scratch)
        source = replay.workspace_dir()
        if source is not None:
            if not source.is_dir():
                raise ScenarioError(
                    f"scenario workspace not found: {replay.workspace} (resolved to {source})",
                    file=str(replay.path),
                )
            shutil.copytree(source, replay_files, dirs_exist_ok=True, symlinks=True)
    recorder: scenario.Recorder | None = None
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
        recorder = scenario.Recorder(base, "all", path=target)
    if args.dry_run:
        executable: str | None = None
        if replay is None and settings.ai_cmd is not None:
            from pytest_ooda.backends.command import resolve_executable

            executable = resolve_executable(settings.ai_cmd, workdir=workdir)
        elif replay is None and settings.ai_api is not None:
            from pytest_ooda.backends.http import HttpBackend

            HttpBackend.from_settings(settings.ai_api).check()
        prompt = assemble_prompt(
            config.procedure(args.procedure),
            iteration=1,
            max_iterations=settings.max_iterations,
            context=context,
            cwd=workdir,
        )
        print(f"dry run: procedure {args.procedure} — nothing will be started", file=sys.stderr)
        print(loop.format_run_settings(settings, executable=executable), file=sys.stderr)
        if replay is not None:
            print(f"  replay  {replay.path} ({len(replay.iterations)} iterations)", file=sys.stderr)
        if recorder is not None:
            print(f"  record  {recorder.path} (checked: writable)", file=sys.stderr)
        write_prompt(prompt)
        return EXIT_OK
    streaming = args.verbose or settings.show_ai_output
    # A progress line redrawn under streamed AI output would garble both.
    reporter = loop.ConsoleReporter(
        verbose=args.verbose,
        quiet=args.quiet,
        progress=False if streaming else None,
        level=config.loop.log_level,
    )
    on_event: Callable[[loop.LoopEvent], None] = reporter
    if recorder is not None:
        watch = recorder.watch(workdir)

        def watch_and_report(event: loop.LoopEvent) -> None:
            watch(event)
            reporter(event)

        on_event = watch_and_report
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
    }
    try:
        if replay is not None:
            replayed = replay_scenario(
                config, replay, workdir=workdir, files_dir=replay_files, **run_options
            )
            result = replayed.result
        else:
            result = loop.run_procedure(
                config,
                args.procedure,
                backend=loop.make_backend(settings),
                workdir=workdir,
                ai_cmd=args.ai_cmd,
                ai_cmd_alias=args.ai_cmd_alias,
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
    if recorder is not None:
        written = recorder.commit(result, recorder.scenario.check(result, workdir))
        if written is not None:
            for warning in recorder.warnings:
                note(f"warning: {warning}")
            note(f"recorded {result.iterations} iteration(s) to {written}")
        else:
            note(f"warning: not recorded: {recorder.skipped_reason}")
    return result.exit_code


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    """The full ``ooda`` argument parser with every registered subcommand."""
    parser = _Parser(
        prog="ooda",
        description="Compose, inspect and run OODA prompt procedures for AI coding agents.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", parser_class=_Parser
    )
    for name in COMMANDS:
        globals()[f"_add_{name}_parser"](subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ooda`` console script; returns the exit code."""
    # Started with stdout or stderr closed (`ooda show build >&-`), Python leaves them
    # None; write into the void rather than fail on it.
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    # A display name or path the terminal's encoding cannot show is escaped, not a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            with contextlib.suppress(ValueError):
                reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        # --help/--version (0) and usage errors (1) end here; return like every other path.
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        os.getcwd()
    except OSError as exc:
        print(
            f"ooda: error: cannot use the current directory: {exc.strerror or exc} "
            "(was it deleted?)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"ooda: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OodaError as exc:
        print(f"ooda: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("ooda: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `ooda show build | head` closes the pipe early; that is not an error.
        return EXIT_OK
    except OSError as exc:
        # The last line of defence against a traceback: a file or directory the user named
        # that the library did not expect to be unusable.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ooda: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_CONFIG


if __name__ == "__main__":
    sys.exit(main())

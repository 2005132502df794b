"""What every ``ooda`` subcommand shares: exit codes, the argument parser class,
the ``--config`` option, output helpers and config loading."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.config import Config
    from pytest_ooda.results import Results
    from pytest_ooda.settings import Given, SessionSettings


EXIT_OK = 0
EXIT_USAGE = 1
EXIT_CONFIG = 2
EXIT_INTERRUPTED = 130

_EPILOG = """\
configuration tiers (highest first): command-line flags, OODA_* environment variables
(else rooda's ROODA_* ones), the workspace config (./ooda-config.yml, else
./rooda-config.yml, or --config FILE), the global config ($OODA_CONFIG_HOME/ooda-config.yml,
$XDG_CONFIG_HOME/ooda/ooda-config.yml or ~/.config/ooda/ooda-config.yml), the built-in
procedures.

exit codes: 0 success, 1 usage error, 2 configuration error (and lint errors that stop
`ooda run`); `ooda run` also exits 1 aborted, 3 iteration limit reached, 130 interrupted
(`ooda run --help` has the table)."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing ``shutil`` (and the
    compression modules it brings, a noticeable part of a quick ``ooda show``'s time):
    ``$COLUMNS``, else the width of the terminal on stdout, else 80."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Width:
    """A help formatter as wide as argparse's own default, measured without ``shutil``
    (argparse builds a formatter for every ``add_argument`` call)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)  # type: ignore[call-arg]


class HelpFormatter(_Width, argparse.HelpFormatter):
    """argparse's default formatter."""


class RawDescriptionHelpFormatter(_Width, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs printed as written (tables, lists)."""


class Parser(argparse.ArgumentParser):
    """argparse exits with 2 on bad usage; we reserve 2 for configuration errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_settings(parser: argparse.ArgumentParser) -> None:
    """The rows of the settings table (:mod:`pytest_ooda.settings`) that have an
    ``ooda`` flag, as arguments; rows of one ``group`` mutually exclusive. Each value is
    stored as given: :func:`read_settings` checks it with its row."""
    from pytest_ooda import settings

    groups: dict[str, Any] = {}
    for row in settings.SETTINGS:
        if not row.ooda:
            continue
        target: Any = parser
        if row.group is not None:
            if row.group not in groups:
                groups[row.group] = parser.add_mutually_exclusive_group()
            target = groups[row.group]
        options: dict[str, Any] = {"dest": row.name, "default": None}
        if row.kind == "flag":
            options["action"] = "store_true"
        elif row.kind == "optional":
            options.update(nargs="?", const=row.const, metavar=row.shown)
        else:
            options.update(action="append" if row.kind == "list" else "store", metavar=row.shown)
        target.add_argument(*row.ooda, help=row.ooda_help or row.help, **options)


def read_settings(
    args: argparse.Namespace,
    *,
    typed: Mapping[str, Given] | None = None,
    show_ai_output: bool | None = None,
) -> SessionSettings:
    """The settings ``args`` give, decided by the table (a ``UsageError`` naming the
    flag when one is wrong), in the current directory; ``typed`` are values the command
    decided itself. A row's variable (``OODA_BUDGET``) gives it where the command has
    the row's flag and the flag was not given, as in a pytest session."""
    import os

    from pytest_ooda import settings
    from pytest_ooda.settings import Given, decide

    rows = settings.SETTINGS
    here = Path.cwd()
    given: dict[str, Given] = {}
    for row in rows:
        if not row.ooda or not hasattr(args, row.name):
            continue  # not one of this command's settings
        value = getattr(args, row.name)
        if value is not None:
            value = tuple(value) if row.kind == "list" else value
            given[row.name] = Given(value, "cli", row.ooda[0], here)
        elif row.env is not None and os.environ.get(row.env, "").strip():
            label = f"environment variable {row.env}"
            given[row.name] = Given(os.environ[row.env].strip(), "env", label, here)
    return decide(
        given, root=here, front="ooda", table=rows, typed=typed, show_ai_output=show_ai_output
    )


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """``--config FILE``: the workspace config file to use instead of ./ooda-config.yml
    (the settings table's ``config`` row)."""
    from pytest_ooda.settings import CONFIG

    parser.add_argument(*CONFIG.ooda, metavar="FILE", help=CONFIG.ooda_help)


def add_prompt_format_option(parser: argparse.ArgumentParser) -> None:
    """``--prompt-format``: the prompt layout, beating every config's ``prompt_format``
    (the settings table's ``prompt_format`` row)."""
    from pytest_ooda.settings import PROMPT_FORMAT

    parser.add_argument(
        *PROMPT_FORMAT.ooda, choices=PROMPT_FORMAT.choices, help=PROMPT_FORMAT.ooda_help
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


def load_from_args(args: argparse.Namespace, settings: SessionSettings | None = None) -> Config:
    """Load the configuration for a command; prints config warnings to stderr.

    The command's ``--prompt-format``, when it has one, is the command-line tier; a
    command that decided its ``settings`` (``ooda run``) gives their config file and
    command-line tier.
    """
    from pytest_ooda.config import command_line_overrides, load_config

    if settings is not None:
        from pytest_ooda.settings import CONFIG

        config = load_config(settings[CONFIG], overrides=settings.config_overrides())
    else:
        overrides = command_line_overrides(prompt_format=getattr(args, "prompt_format", None))
        config = load_config(getattr(args, "config", None), overrides=overrides)
    for warning in config.warnings:
        note(f"warning: {warning.format(Path.cwd())}")
    return config


def check_context(values: Sequence[str]) -> None:
    """Refuse ``--context`` values that name a directory or a file that cannot be read
    (the check of the settings table's ``context`` row)."""
    from pytest_ooda.settings import CONTEXT

    CONTEXT.check(tuple(values), CONTEXT.ooda[0])


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def fraction(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a significance level, a
    power)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, got {text!r}"
        ) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value:g}")
    return value


def rate_difference(text: str) -> float:
    """An argparse type: a change of success rate, ``0.2``, ``20%`` or ``20pp``."""
    raw = text.strip()
    scale = 100 if raw.endswith(("%", "pp")) else 1
    try:
        value = float(raw.removesuffix("%").removesuffix("pp")) / scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a rate difference such as 0.2, 20% or 20pp, got {text!r}"
        ) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a rate difference between 0 and 1 (such as 0.2), got {text}"
        )
    return value


def amount(text: str) -> float:
    """An argparse type: an amount of US dollars above zero (``2``, ``0.50``, ``$5``)."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an amount in US dollars, got {text!r}"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected an amount above 0, got {text}")
    return value


def read_results_noting(paths: Sequence[str], *, summary: bool = False) -> Results:
    """Read and merge results files (``ResultsError`` when one is unusable); what was
    left out is a warning line on stderr. ``summary``: records as tables need them
    (``Results.whole`` reads one whole)."""
    from pytest_ooda.results import read_results

    results = read_results(paths, summary=summary)
    for warning in results.warnings:
        note(f"warning: {warning.format(Path.cwd())}")
    return results


def append_step_summary(markdown: str) -> None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when GitHub Actions set it (the
    file is the job's summary page, appended to by every step). A summary that cannot
    be written is a warning: the report itself was printed."""
    import os

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown + "\n")
    except OSError as exc:
        note(f"warning: cannot append to $GITHUB_STEP_SUMMARY ({target}): {exc.strerror or exc}")


def has_display() -> bool:
    """Whether a browser could open a window here: always on macOS and Windows; on
    other systems an X11 or Wayland display must be set."""
    import os

    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> bool:
    """Open ``url`` in the user's web browser (``$BROWSER`` first, as Python's
    ``webbrowser`` does). Without a display, or when no browser starts, say so and do
    nothing: the URL was printed."""
    if not has_display():
        note(f"--open: no display here (DISPLAY is not set); open {url} yourself")
        return False
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except webbrowser.Error as exc:
        note(f"--open: cannot start a web browser ({exc}); open {url} yourself")
        return False
    if not opened:
        note(f"--open: no web browser found; open {url} yourself")
    return opened

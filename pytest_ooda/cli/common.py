"""What every ``ooda`` subcommand shares: exit codes, the argument parser class,
the ``--config`` option, output helpers and config loading."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.config import Config
    from pytest_ooda.evaluate import Results


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


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """``--config FILE``: the workspace config file to use instead of ./ooda-config.yml."""
    parser.add_argument(
        "--config",
        "-c",
        metavar="FILE",
        help="config file to use instead of ./ooda-config.yml (or ./rooda-config.yml "
        "when there is none); any file with the same schema",
    )


def add_prompt_format_option(parser: argparse.ArgumentParser) -> None:
    """``--prompt-format``: the prompt layout, beating every config's ``prompt_format``."""
    from pytest_ooda._types import PROMPT_FORMATS

    parser.add_argument(
        "--prompt-format",
        choices=PROMPT_FORMATS,
        help="prompt layout: ooda (ours) or rooda (rooda's, byte for byte); default: "
        "the procedure's prompt_format, else loop.prompt_format, else ooda",
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


def load_from_args(args: argparse.Namespace) -> Config:
    """Load the configuration for a command; prints config warnings to stderr.

    The command's flags for ``loop:`` keys (``--prompt-format``, ``--sandbox``), when it
    has them, are the command-line tier.
    """
    from pytest_ooda.config import command_line_overrides, load_config

    overrides = command_line_overrides(
        prompt_format=getattr(args, "prompt_format", None),
        sandbox=getattr(args, "sandbox", None),
    )
    config = load_config(getattr(args, "config", None), overrides=overrides)
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


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def read_results_noting(paths: Sequence[str], *, summary: bool = False) -> Results:
    """Read and merge results files (``ResultsError`` when one is unusable); what was
    left out is a warning line on stderr. ``summary``: records as tables need them
    (``Results.whole`` reads one whole)."""
    from pytest_ooda.evaluate import read_results

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

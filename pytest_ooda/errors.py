"""The exception hierarchy: every mistake a user can make surfaces as an ``OodaError``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

_E = TypeVar("_E", bound="OodaError")
_UNSET: Any = object()


class _Located(Exception):
    """A message about a place: ``file``/``line``/``column`` (1-based) and an optional
    ``hint`` line; ``str()`` renders ``file:line:col: message`` then the hint."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        self.hint = hint
        #: Further mistakes found in the same pass (a reader that collects), in file order.
        self.also: tuple[_Located, ...] = ()

    @property
    def location(self) -> str:
        """``file:line:col`` with whatever parts are known (empty when none)."""
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file)
            if self.line is not None:
                parts.append(str(self.line))
                if self.column is not None:
                    parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        return self.format()

    def format(self, root: Path | None = None) -> str:
        """``file:line:col: message`` and the hint; with ``root``, a file under it is
        shown relative to it."""
        loc = self.location
        if root is not None and self.file is not None:
            from pytest_ooda._util import display_path

            shown = display_path(self.file, root)
            loc = shown + loc[len(self.file) :]
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f"\n  {self.hint}"
        for other in self.also:
            text += "\n" + other.format(root)
        return text

    @property
    def every(self) -> tuple[_Located, ...]:
        """This mistake and the others found with it, in file order."""
        return (self, *self.also)


class OodaError(_Located):
    """Root of every error pytest-ooda raises for a user's input or environment.

    ``file``/``line``/``column`` (1-based) say where the mistake is; ``hint`` is an
    optional second line such as a "did you mean" suggestion or the expected value.
    ``str(err)`` renders ``file:line:col: message`` followed by the hint.
    """

    def relocated(
        self: _E,
        *,
        file: str | Path | None = _UNSET,
        line: int | None = _UNSET,
        column: int | None = _UNSET,
        hint: str | None = _UNSET,
        message: str = _UNSET,
    ) -> _E:
        """A copy of this error with some of its location (or hint, or message) replaced.

        Errors are never changed after being raised: a caller that knows better where a
        mistake is raises ``err.relocated(file=…, line=…) from err`` instead."""
        # Not copy.copy: that re-runs __init__ with ``args`` alone, which a subclass with
        # required keyword arguments (TemplateError's ``kind``) refuses.
        clone = type(self).__new__(type(self), *self.args)
        clone.__dict__.update(self.__dict__)
        if file is not _UNSET:
            clone.file = str(file) if file is not None else None
        if line is not _UNSET:
            clone.line = line
        if column is not _UNSET:
            clone.column = column
        if hint is not _UNSET:
            clone.hint = hint
        if message is not _UNSET:
            clone.message = message
            clone.args = (message,)
        return clone

    @classmethod
    def gathered(cls, errors: Sequence[OodaError]) -> OodaError:
        """One error standing for ``errors`` (a file's mistakes, found in one pass): the
        first by position, carrying the others in ``also``."""
        ordered = sorted(errors, key=lambda e: (e.line or 0, e.column or 0))
        first = ordered[0].relocated()
        first.also = tuple(ordered[1:])
        return first


class ConfigError(OodaError):
    """A config file (or environment variable, or option) is malformed or inconsistent."""


class FragmentError(ConfigError):
    """A fragment action cannot be resolved or loaded."""


class TemplateError(OodaError):
    """A Go template failed to parse (``kind == "parse"``) or execute (``kind == "exec"``).

    ``template_line`` is the 1-based line inside the template source and
    ``template_file`` the fragment file holding it (``None`` for inline content);
    ``message`` is shaped like Go's (``template: fragment:3: unexpected EOF``).
    ``file``/``line``/``column`` locate the config entry that uses the fragment.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        template_line: int | None = None,
        template_file: str | Path | None = None,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, file=file, line=line, column=column, hint=hint)
        self.kind = kind
        self.template_line = template_line
        self.template_file = str(template_file) if template_file is not None else None


class ScenarioError(OodaError):
    """A scenario file is malformed, or replay asked for more than it recorded."""


class BackendError(OodaError):
    """An AI backend could not be started or configured."""


class UsageError(OodaError):
    """A command-line or option value is wrong (``ooda`` exits 1, pytest shows a usage
    error)."""


class SandboxError(OodaError):
    """A sandbox cannot be used: its program is missing, its daemon does not answer, its
    image is neither present nor buildable, or its settings are wrong. Raised before any
    run starts, naming what to do."""


class WorkspaceError(OodaError):
    """A run's workspace cannot be put back or cleaned as the run needs: a protected path
    the agent made immutable, a directory it locked, a file it made undeletable. The run
    is an ``error`` (kind ``workspace``) naming the path, never a traceback."""


class ExecutorError(OodaError):
    """Live runs cannot go to the engine named by ``--ooda-executor``: an unknown
    engine, its extra not installed, or its cluster not reachable. Raised before any run
    starts, naming the extra to install or the address tried."""


class NoAICommandError(ConfigError):
    """A run needs an AI command or API and none is configured."""


class ResultsError(OodaError):
    """A results log (``.jsonl`` of live runs) cannot be read: missing, not JSON, or not
    a record of a schema version this pytest-ooda knows."""


class ResultsNestingError(ResultsError):
    """A results record nests deeper than any reader follows (``reader.MAX_DEPTH``):
    reading a log leaves its line out with a warning."""


# --------------------------------------------------------------------------- warnings


class OodaWarning(_Located, UserWarning):
    """Root of every warning pytest-ooda emits; ``-W error::pytest_ooda.OodaWarning``
    turns them all into errors, ``-W ignore::pytest_ooda.OodaWarning`` silences them.

    Like :class:`OodaError` a warning carries where it is about: ``str(w)`` is
    ``file:line:col: message``, and the parts stay available as attributes, so callers
    never parse the text back."""


class ConfigWarning(OodaWarning):
    """A config file loads, but something in it is probably a mistake."""


class LintWarning(OodaWarning):
    """A lint finding reported as a warning by a ``config`` item."""


class ScenarioWarning(OodaWarning):
    """A scenario file is ignored or cannot be matched to a procedure."""


class DriftWarning(OodaWarning):
    """A replayed scenario's recorded prompt differs from the current one."""


class RecordingWarning(OodaWarning):
    """A live run could not be recorded as asked."""


class AgentWarning(OodaWarning):
    """An agent run completed but reported something a user must know (e.g. every tool
    call was denied)."""


class SandboxWarning(OodaWarning):
    """Something about isolation a user must know: an agent runs unattended with no
    sandbox, or a sandbox could not hold a promise (a leftover container)."""


class ResultsWarning(OodaWarning):
    """A results log was read with something left out (an interrupted last record, a
    record seen twice)."""


class JudgeWarning(OodaWarning):
    """A graded run's verdicts need a person's eye: recorded verdicts for another rubric
    or other inputs, or a regrade that flipped a verdict."""


class ReplayExhaustedError(ScenarioError):
    """The loop asked a replayed scenario for more iterations than it recorded.

    ``served`` holds the ``(output, exit_code)`` of each iteration that was served, so a
    report can show why the loop went on."""

    def __init__(
        self,
        message: str,
        *,
        served: tuple[tuple[str, int], ...],
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, file=file, line=line, column=column, hint=hint)
        self.served = served

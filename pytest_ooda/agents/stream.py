"""Reading an agent CLI's machine-readable output as it arrives: the
:class:`AgentStream` every JSON-lines format's reader builds on (bytes in, lines out,
bounded memory, the CLI's own words kept apart from its events), and the little helpers
each reader uses. An agent's own format — its events and what they report — is a
subclass in the agent's module.

The command backend merges stderr into stdout, so a line that does not start with ``{``
is the CLI's own text (a warning, an error message): shown, kept for the error message,
and harmless when the stream completes. A line that starts like JSON and is not is
broken output. The tool calls' texts are kept within the run's
:class:`~pytest_ooda.agents.text.ToolTextBudget`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import deque
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.faults import Fault, message_fault
from pytest_ooda.agents.text import ToolTextBudget, one_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.agents.activation import Activation
    from pytest_ooda.agents.report import AgentReport

__all__ = ["DEFAULT_MAX_LINE", "AgentStream", "as_int", "as_mapping"]

#: A line longer than this is skipped (the stream stays bounded, whatever it prints).
DEFAULT_MAX_LINE = 10_485_760
_FOREIGN_KEPT = 5


def as_mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """``value`` when it is a JSON integer (not a boolean), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class AgentStream(ABC):
    """One invocation's output in a machine-readable format, fed as it arrives.

    :meth:`feed_bytes` takes raw chunks and returns the text to show a person;
    :meth:`feed` takes one line; :meth:`report` says what the stream reported.
    Subclasses read the events of one format (:meth:`_event`).
    """

    #: The format's name (``ai_output``), in messages.
    kind: str = "text"
    #: What the command needs to print this format (said when it printed none of it).
    flags_hint: str = ""

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        if max_line < 1:
            raise ValueError("max_line must be >= 1")
        self.max_line = max_line
        #: What a tool call's input (or a failed call's result) shown to a person is
        #: redacted with before its ``→ Bash:`` head is put in front of it: a line rule
        #: (``export API_TOKEN=…`` alone on its line) must see the line as it was.
        self.redact = redact
        #: Whether a person is shown the stream: a tool call's lines are rendered only
        #: then (the agent's own text and the closing line always are).
        self.watched = watched
        #: How much tool-call text the run may still hold (a run's, shared by its
        #: iterations' streams; a stream of its own when none is given).
        self.budget = budget if budget is not None else ToolTextBudget()
        self._line = 0
        self._partial = bytearray()
        self._skipping = False
        self._skipped: list[int] = []
        self._foreign: deque[str] = deque(maxlen=_FOREIGN_KEPT)
        self._events = 0
        self._error: str | None = None

    def activations(self, prompt: str) -> tuple[Activation, ...]:
        """What fired besides the tool calls (a format that says nothing: nothing)."""
        return ()

    def _clean(self, text: str) -> str:
        """``text`` as a person watching may see it (see ``redact``)."""
        return self.redact(text) if self.redact is not None and text else text

    # -- bytes in, lines out --------------------------------------------------------

    def feed_bytes(self, data: bytes) -> str:
        """Feed raw output; returns what to show a person (lines, ``\\n``-terminated)."""
        shown: list[str] = []
        start = 0
        size = len(data)
        while start < size:
            end = data.find(b"\n", start)
            stop = size if end < 0 else end
            if not self._skipping:
                if len(self._partial) + stop - start > self.max_line:
                    # Bounded memory: the rest of this line is dropped, not buffered.
                    self._skipping = True
                    self._partial.clear()
                elif end >= 0 and not self._partial:
                    # A whole line inside one chunk (the usual case): no copy to buffer.
                    self._line_read(data[start:end], shown)
                    start = end + 1
                    continue
                else:
                    self._partial += data[start:stop]
            if end < 0:
                break
            self._end_line(shown)
            start = end + 1
        return "".join(line + "\n" for line in shown)

    def close(self) -> str:
        """The end of the output: a last line without a newline is read too."""
        shown: list[str] = []
        if self._partial or self._skipping:
            self._end_line(shown)
        return "".join(line + "\n" for line in shown)

    def _end_line(self, shown: list[str]) -> None:
        if self._skipping:
            self._skipping = False
            self._line += 1
            self._skipped.append(self._line)
            return
        self._line_read(bytes(self._partial), shown)
        self._partial.clear()

    def _line_read(self, raw: bytes, shown: list[str]) -> None:
        rendered = self.feed(raw.decode("utf-8", errors="replace"))
        if rendered:
            shown.append(rendered)

    # -- lines in -------------------------------------------------------------------

    def feed(self, line: str) -> str | None:
        """Read one line; returns its readable form for a person, if it has one."""
        self._line += 1
        # Events start with "{" at once; only other lines pay for a stripped copy.
        stripped = line if line[:1] == "{" else line.strip()
        if not stripped:
            return None
        if not stripped.startswith(("{", "[")):
            # stderr shares the pipe: the CLI's own words, not broken JSON.
            self._foreign.append(one_line(stripped, 300))
            return line.rstrip("\n")
        try:
            event = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if self._error is None:
                self._error = f"{self.kind}: line {self._line} is not JSON ({exc.msg})"
            return line.rstrip("\n")
        except (ValueError, RecursionError):
            # A tool call's input the model nested thousands deep, echoed by the CLI.
            if self._error is None:
                self._error = f"{self.kind}: line {self._line} nests too deep to be read"
            return one_line(stripped, 300)
        if not isinstance(event, dict):
            return None
        self._events += 1
        return self._event(event)

    @abstractmethod
    def _event(self, event: dict[str, Any]) -> str | None:
        """Take one JSON event of the format; a line to show a person, if any."""

    @abstractmethod
    def report(self) -> AgentReport:
        """What the stream said about the invocation, once it has ended."""

    def _text_fault(self, text: str) -> Fault | None:
        """What the CLI's own words (not an event) say went wrong, by the agent's
        reading of its messages; subclasses of an agent's format override it."""
        return message_fault(text)

    def _foreign_infra(self) -> str | None:
        """An API failure the CLI reported in its own words (not as an event)."""
        if not self._foreign:
            return None
        fault = self._text_fault("\n".join(self._foreign))
        return fault.reason if fault is not None else None

    def _refusal(self, line: str) -> str | None:
        """Why the CLI would not start at all, when ``line`` (its own words) says it
        refused to; ``None`` otherwise. An agent's format overrides it."""
        return None

    def _missing(self, what: str) -> str:
        """Why there is no final report: the stream's end came first, or it never was
        this format; with the CLI's own last words, and lines skipped for length."""
        if not self._events:
            for line in self._foreign:
                refusal = self._refusal(line)
                if refusal is not None:
                    # Not a flags problem: the CLI would not start at all.
                    return f"{self.kind}: {refusal} (it printed: {line})"
        if self._events:
            text = f"{self.kind}: {what} (the CLI stopped mid-run)"
        else:
            text = f"{self.kind}: the output has no JSON events; {self.flags_hint}"
        if self._skipped:
            text += (
                f"; line {self._skipped[-1]} was longer than max_output_buffer "
                f"({self.max_line} bytes) and was skipped"
            )
        if self._foreign:
            text += "; it printed: " + " | ".join(self._foreign)
        return text

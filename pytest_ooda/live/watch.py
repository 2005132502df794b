"""What a live run observes of its loop: the files each iteration changed (names for
the record, diffs for the transcript, contents for a recording), the agent's output
shown to a person watching, redacted line by line, and the caller's own observer."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.redact import Redactor, StreamRedactor
    from pytest_ooda.scenario import Recorder

__all__ = ["Watch", "shown_output"]


class Watch:
    """What the run observes of the loop: the files each iteration changed (names for
    the record, diffs for the transcript, contents for a recording) and the caller's
    own observer."""

    def __init__(
        self,
        workdir: Path,
        redactor: Redactor,
        recorder: Recorder | None,
        on_event: Callable[[LoopEvent], None] | None,
        *,
        watching: bool,
        shown: bool,
    ) -> None:
        from pytest_ooda.live.transcript import DiffWatcher
        from pytest_ooda.workspace import PathChanges

        self.changes = PathChanges(workdir) if watching else None
        self.diffs = DiffWatcher(workdir, redactor) if watching else None
        # Watching file contents costs a read of each changed file per iteration: only
        # when the run may be written. Names alone (for the results) are a stat walk.
        self.contents = recorder.watch(workdir) if recorder is not None else None
        self.on_event = on_event
        #: The agent's output shown live (``-s``, ``--verbose``), redacted line by line.
        self.shown = shown_output(redactor) if shown else None

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished

        for observer in (self.changes, self.diffs, self.contents, self.on_event):
            if observer is not None:
                observer(event)
        if self.shown is not None and isinstance(event, IterationFinished):
            self.shown.flush()


def shown_output(redactor: Redactor) -> StreamRedactor:
    """Where the agent's output goes when someone watches: stdout, a whole line at a
    time and redacted (CI keeps what ``-s`` printed); a closed stdout ends the copy."""
    import sys

    from pytest_ooda.redact import StreamRedactor

    def write(data: bytes) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    return StreamRedactor(redactor, write)

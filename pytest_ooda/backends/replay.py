"""The ``replay`` backend: serves recorded or scripted iterations in order, starting nothing.

A step carries the output and exit code to report, an optional delay to sleep, and
optional file changes to apply in the run's working directory (so a scripted "agent"
can leave the traces a workspace check looks for), and what an agent CLI reported about
the iteration (usage, tool calls, permission denials), so a replayed run is checked and
budgeted as the recorded one was. ``script`` builds one from a plain list for
hand-written tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ooda.backends import BackendResult, StreamCallback, ToolCall, Usage
from pytest_ooda.errors import ScenarioError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents import Activation

__all__ = ["ReplayBackend", "ReplayStep", "ScriptItem", "script"]


@dataclass(frozen=True)
class ReplayStep:
    """One served iteration. ``files`` maps a path (relative to the workdir) to new text,
    or to ``None`` to delete it; the other fields are what an agent CLI reported."""

    output: str = ""
    exit_code: int = 0
    delay: float = 0.0
    timed_out: bool = False
    files: Mapping[str, str | None] = field(default_factory=dict)
    usage: Usage | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    permission_denials: tuple[ToolCall, ...] = ()
    turns: int | None = None
    model: str | None = None
    tools_reported: bool = False
    error: str | None = None
    activations: tuple[Activation, ...] = ()


StepLike = str | tuple[str, int] | ReplayStep
ScriptItem = StepLike | Callable[[str], StepLike]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _as_step(item: object, index: int) -> ReplayStep:
    if isinstance(item, ReplayStep):
        return item
    if isinstance(item, str):
        return ReplayStep(output=item)
    if (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], int)
        and not isinstance(item[1], bool)
    ):
        return ReplayStep(output=item[0], exit_code=item[1])
    raise TypeError(
        f"script step {index + 1}: expected an output string, an (output, exit_code) pair, "
        f"a ReplayStep or a callable returning one, got {type(item).__name__}"
    )


def _apply_files(workdir: Path, files: Mapping[str, str | None]) -> None:
    root = workdir.resolve()
    for name, text in files.items():
        given = root / name
        target = given.resolve()
        if not target.is_relative_to(root):
            raise ScenarioError(f"replayed file change {name!r} points outside the workspace")
        if text is None:
            # Deleting a symlink removes the link, as the agent's `rm` did, not its target.
            (given if given.is_symlink() else target).unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


class ReplayBackend:
    """Serves ``steps`` one per call; ``prompts`` collects what the loop sent.

    ``name`` and ``file`` identify the scenario in the error raised when the loop asks for
    more iterations than there are steps. Recorded file changes are applied to
    ``files_dir`` when given, else to the run's ``workdir``.
    """

    def __init__(
        self,
        steps: Sequence[ReplayStep | Callable[[str], StepLike]],
        *,
        name: str = "script",
        file: str | Path | None = None,
        sleep: bool = True,
        files_dir: Path | None = None,
    ) -> None:
        self.steps = list(steps)
        self.name = name
        self.file = file
        self.sleep = sleep
        self.files_dir = files_dir
        self.prompts: list[str] = []

    def __repr__(self) -> str:
        return f"ReplayBackend({self.name!r}, {len(self.steps)} iterations)"

    @property
    def served(self) -> int:
        return len(self.prompts)

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: StreamCallback | None,
    ) -> BackendResult:
        index = len(self.prompts)
        if index >= len(self.steps):
            count = len(self.steps)
            raise ScenarioError(
                f"scenario {self.name!r} has {count} iteration{'s' if count != 1 else ''}, "
                f"loop asked for a {_ordinal(index + 1)}",
                file=self.file,
                hint="record more iterations, or lower max_iterations / fix the expected outcome",
            )
        self.prompts.append(prompt)
        started = time.monotonic()
        entry = self.steps[index]
        step = _as_step(entry(prompt) if callable(entry) else entry, index)
        if step.delay and self.sleep:
            time.sleep(step.delay if timeout is None else min(step.delay, timeout))
        if step.files:
            _apply_files(self.files_dir if self.files_dir is not None else workdir, step.files)
        data = step.output.encode("utf-8")
        if stream is not None and data:
            stream(data)
        truncated = len(data) > max_output
        kept = data[len(data) - max_output :] if truncated else data
        timed_out = step.timed_out or (timeout is not None and step.delay > timeout)
        return BackendResult(
            output=kept.decode("utf-8", errors="replace"),
            exit_code=step.exit_code,
            duration=time.monotonic() - started,
            timed_out=timed_out,
            term_signal=-step.exit_code if step.exit_code < 0 else None,
            truncated=truncated,
            dropped_bytes=len(data) - len(kept),
            total_bytes=len(data),
            usage=step.usage,
            error=step.error,
            tool_calls=step.tool_calls,
            permission_denials=step.permission_denials,
            turns=step.turns,
            model=step.model,
            tools_reported=step.tools_reported,
            activations=step.activations,
        )


def script(items: Sequence[ScriptItem], *, name: str = "script") -> ReplayBackend:
    """A replay backend from outputs, ``(output, exit_code)`` pairs, ``ReplayStep``s, or
    callables that receive the prompt and return one of those."""
    steps: list[ReplayStep | Callable[[str], StepLike]] = []
    for index, item in enumerate(items):
        steps.append(item if callable(item) else _as_step(item, index))
    return ReplayBackend(steps, name=name)

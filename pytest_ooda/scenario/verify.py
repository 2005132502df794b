"""What a run did beyond its outputs: the ``expect.files`` check of the workspace, the
``expect.tools`` check of the agent's tool calls, and the ``expect.commands``
verification commands run in the workspace after the loop (SWE-bench style: the code
the agent left behind must actually work).

A file check reads on the host, for the agent: it never follows a symbolic link out of
the workspace (a link to a file the sandbox hid would let the agent learn, through a
passing or failing ``contains``, what it could not read itself), and a file that is
such a link fails its check whatever it expects.

A verification command runs through ``/bin/sh -c`` (pipes and ``&&`` work, as in a CI
script) in its own process group, in the workspace, with stdin closed and stdout and
stderr merged into a bounded buffer; at its timeout the whole group is killed — the
command backend's process handling, reused. With a ``sandbox`` (the run's started
:class:`~pytest_ooda.sandbox.SandboxRun`) the command runs inside it, exactly where the
agent ran: a scenario file is code, and its commands get no more than the agent did.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError
from pytest_ooda.facts import CommandOutcome

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.backends import ToolCall
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.sandbox import SandboxRun

#: Output kept per verification command (its tail), for the report.
COMMAND_OUTPUT_LIMIT = 64 * 1024
_SHOWN_LINES = 12
_SHELL = "/bin/sh"


def check_file(
    workspace: Path, path: str, *, exists: bool | None, contains: tuple[str, ...]
) -> str | None:
    """What is wrong with ``path`` (relative to ``workspace``) for an ``expect.files``
    entry, or ``None``; see the module docstring for links."""
    target = workspace / path
    root = os.path.realpath(workspace)
    real = os.path.realpath(target)
    if os.path.lexists(target) and real != root and not real.startswith(root + os.sep):
        return f"file {path}: links outside the workspace (not read)"
    if exists is False:
        return f"file {path}: expected to be absent, but it exists" if target.exists() else None
    if not target.exists():
        if exists or contains:
            return f"file {path}: expected to exist, but it is missing"
        return None
    for needle in contains:
        try:
            text = Path(real).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"file {path}: cannot read it: {exc.strerror or exc}"
        if needle not in text:
            return f"file {path}: expected to contain {needle!r}"
    return None


def _called(calls: tuple[ToolCall, ...]) -> list[ToolCall]:
    """The calls that ran: a denied call never did."""
    return [call for call in calls if call.error != "permission denied"]


@dataclass(frozen=True)
class ToolExpect:
    """``expect.tools``: ``called`` each ran at least once, ``not_called`` were never
    even attempted, every ``bash_matches`` pattern matches some command the agent ran,
    and at most ``max_calls`` tool calls in all."""

    called: tuple[str, ...] = ()
    not_called: tuple[str, ...] = ()
    bash_matches: tuple[str, ...] = ()
    max_calls: int | None = None
    line: int | None = field(default=None, compare=False)

    def check(self, result: LoopResult) -> list[str]:
        if not result.tools_reported:
            from pytest_ooda.agents import tool_formats

            listing = " or ".join(tool_formats())
            return [
                "expect.tools: the run did not report its tool calls (its AI output was "
                f"read in a format that lists none); use ai_output: {listing}, or "
                "re-record the scenario with one of them"
            ]
        calls = result.tool_calls
        ran = _called(calls)
        names = {call.name for call in ran}
        problems = [
            f"expect.tools: {name} was never called ({_census(calls)})"
            for name in self.called
            if name not in names
        ]
        for name in self.not_called:
            tried = [call for call in calls if call.name == name]
            if tried:
                shown = f": {tried[0].summary}" if tried[0].summary else ""
                problems.append(
                    f"expect.tools: {name} was called {len(tried)} time(s), expected never{shown}"
                )
        from pytest_ooda.agents import shell_tools

        shells = shell_tools()
        commands = [call.summary for call in ran if call.name in shells]
        for pattern in self.bash_matches:
            if not any(re.search(pattern, command) for command in commands):
                listing = "; ".join(commands[:8]) if commands else "none"
                problems.append(
                    f"expect.tools: no command matched {pattern!r} (commands run: {listing})"
                )
        if self.max_calls is not None and len(calls) > self.max_calls:
            problems.append(
                f"expect.tools: {len(calls)} tool calls, expected at most {self.max_calls} "
                f"({_census(calls)})"
            )
        return problems

    def to_yaml(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.called:
            out["called"] = list(self.called)
        if self.not_called:
            out["not_called"] = list(self.not_called)
        if self.bash_matches:
            out["bash_matches"] = (
                self.bash_matches[0] if len(self.bash_matches) == 1 else list(self.bash_matches)
            )
        if self.max_calls is not None:
            out["max_calls"] = self.max_calls
        return out


def _census(calls: tuple[ToolCall, ...]) -> str:
    """``tool calls: Write ×2, Bash`` — what the agent did call, for a failing check."""
    if not calls:
        return "no tool calls"
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
    return "tool calls: " + ", ".join(
        name if n == 1 else f"{name} ×{n}" for name, n in counts.items()
    )


def run_argv(
    argv: Sequence[str],
    workdir: Path,
    timeout: float,
    sandbox: SandboxRun | None,
    env: Mapping[str, str] | None = None,
) -> CommandRun:
    """``argv`` run in ``workdir`` (inside ``sandbox`` when given) with stdin closed and
    its output bounded; its process group dies at ``timeout``."""
    from pytest_ooda.backends import CommandBackend

    backend = CommandBackend(argv, env=env, kill_grace=2.0, drain_grace=0.5, sandbox=sandbox)
    started = time.monotonic()
    done = backend.run(
        "",
        iteration=1,
        workdir=workdir,
        timeout=timeout,
        max_output=COMMAND_OUTPUT_LIMIT,
        stream=None,
    )
    return CommandRun(done.exit_code, done.output, time.monotonic() - started, done.timed_out)


@dataclass(frozen=True)
class CommandRun:
    """One verification command's run."""

    exit_code: int
    output: str
    duration: float
    timed_out: bool = False


#: Lines of a verification command's output kept in its outcome (for reports).
OUTCOME_TAIL_LINES = 20


@dataclass(frozen=True)
class CommandCheck:
    """One ``expect.commands`` entry: ``run`` (a shell command line) must exit with
    ``exit_code`` within ``timeout`` seconds, its output holding each of
    ``output_contains``."""

    run: str
    exit_code: int = 0
    timeout: float = 300.0
    output_contains: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)

    def execute(self, workspace: Path, *, sandbox: SandboxRun | None = None) -> CommandRun:
        """Run the command in ``workspace`` (inside ``sandbox`` when given); its process
        group dies at the timeout."""
        return run_argv([_SHELL, "-c", self.run], workspace, self.timeout, sandbox)

    def check(self, workspace: Path, *, sandbox: SandboxRun | None = None) -> str | None:
        """What went wrong (with the output's tail), or ``None`` when it passed."""
        return self.verify(workspace, sandbox=sandbox).problem

    def verify(
        self,
        workspace: Path,
        *,
        sandbox: SandboxRun | None = None,
        redact: Callable[[str], str] | None = None,
        source: Path | None = None,
        protect: Sequence[str] = (),
    ) -> CommandOutcome:
        """Run the command in ``workspace`` (inside ``sandbox``) and judge it. With
        ``redact``, the whole output is redacted before its tail is taken, so a secret
        whose context sits above the tail (a Kubernetes Secret's ``kind:`` line) is
        still recognised. ``source`` and ``protect`` (the workspace's pristine source,
        the protected paths) matter to a pytest verifier only
        (:class:`~pytest_ooda.scenario.pytest_verifier.PytestCheck`)."""
        if not workspace.is_dir():
            problem = f"command {self.run!r}: the workspace {workspace} does not exist"
            return CommandOutcome(self.run, -1, self.exit_code, 0.0, problem=problem)
        try:
            done = self.execute(workspace, sandbox=sandbox)
        except OodaError as exc:
            # The sandbox could not start the shell: the command did not pass.
            problem = f"command {self.run!r}: could not be started: {exc.message}"
            return CommandOutcome(self.run, -1, self.exit_code, 0.0, problem=problem)
        if redact is not None:
            done = CommandRun(done.exit_code, redact(done.output), done.duration, done.timed_out)
        tail = "\n".join(done.output.rstrip("\n").splitlines()[-OUTCOME_TAIL_LINES:])
        return CommandOutcome(
            self.run,
            done.exit_code,
            self.exit_code,
            round(done.duration, 3),
            done.timed_out,
            self._problem(done),
            tail,
        )

    def _problem(self, done: CommandRun) -> str | None:
        """How ``done`` missed this check (with its output's tail), ``None`` if it did not."""
        wrong: list[str] = []
        if done.timed_out:
            wrong.append(f"timed out after {self.timeout:g}s (its process group was killed)")
        elif done.exit_code != self.exit_code:
            wrong.append(f"exited {done.exit_code}, expected {self.exit_code}")
        wrong.extend(
            f"its output does not contain {needle!r}"
            for needle in self.output_contains
            if needle not in done.output
        )
        if not wrong:
            return None
        tail = done.output.rstrip("\n").splitlines()[-_SHOWN_LINES:]
        shown = "\n".join(f"      | {line}" for line in tail) if tail else "      | <no output>"
        return f"command {self.run!r}: " + "; ".join(wrong) + f"\n{shown}"

    def to_yaml(self) -> dict[str, object]:
        out: dict[str, object] = {"run": self.run}
        if self.exit_code != 0:
            out["exit_code"] = self.exit_code
        if self.timeout != 300.0:
            out["timeout"] = self.timeout
        if self.output_contains:
            out["output_contains"] = (
                self.output_contains[0]
                if len(self.output_contains) == 1
                else list(self.output_contains)
            )
        return out

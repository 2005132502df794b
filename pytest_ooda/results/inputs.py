"""What the results layer reads of the layers that make a run, as protocols: a loop's
result and its iterations, a workspace's changes, a scenario's expected status.

``results/`` depends on nothing above ``config/``: a cluster worker that builds a record
and a reader of a results log load neither the loop, the backends, the scenario package
nor the workspace. The types those packages define (``loop.LoopResult``,
``loop.IterationRecord``, ``workspace.PathChanges``, ``scenario.Scenario``) have these
attributes, so they are passed as they are; nothing here imports them. A protocol lists
only what the rules and the builder read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import FileChange
    from pytest_ooda.facts import ToolCall, Usage

__all__ = [
    "ExpectFacts",
    "IterationFacts",
    "LoopFacts",
    "ScenarioFacts",
    "WorkspaceFacts",
]


class IterationFacts(Protocol):
    """One iteration as the loop recorded it (``loop.IterationRecord``)."""

    @property
    def number(self) -> int: ...
    @property
    def prompt_sha256(self) -> str: ...
    @property
    def output(self) -> str: ...
    @property
    def exit_code(self) -> int: ...
    @property
    def signal(self) -> str | None: ...
    @property
    def outcome(self) -> str: ...
    @property
    def duration(self) -> float: ...
    @property
    def reason(self) -> str: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def usage(self) -> Usage | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def tool_calls(self) -> tuple[ToolCall, ...]: ...
    @property
    def permission_denials(self) -> tuple[ToolCall, ...]: ...
    @property
    def turns(self) -> int | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def retries(self) -> int: ...
    @property
    def infra_error(self) -> str | None: ...
    @property
    def infra_evidence(self) -> str | None: ...


class LoopFacts(Protocol):
    """A finished loop (``loop.LoopResult``): how it ended and its iterations."""

    @property
    def status(self) -> str: ...
    @property
    def records(self) -> Sequence[IterationFacts]: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def usage(self) -> Usage | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def infra_error(self) -> str | None: ...
    @property
    def retries(self) -> int: ...


class WorkspaceFacts(Protocol):
    """What a run changed in its workspace (``workspace.PathChanges``): per iteration,
    and over the whole run."""

    @property
    def iterations(self) -> Mapping[int, Mapping[str, FileChange]]: ...
    def total(self) -> Mapping[str, FileChange]: ...


class ExpectFacts(Protocol):
    """A scenario's ``expect:`` as the outcome rule reads it: the status it expects."""

    @property
    def status(self) -> str | None: ...


class ScenarioFacts(Protocol):
    """A scenario (``scenario.Scenario``) as the outcome rule reads it."""

    @property
    def expect(self) -> ExpectFacts | None: ...

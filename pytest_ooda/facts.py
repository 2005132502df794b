"""The plain values a run's facts are made of: what an agent's work cost (:class:`Usage`),
the tools it called (:class:`ToolCall`), what a verification command did
(:class:`CommandOutcome`), and which agent did it, configured how
(:class:`Fingerprint`, with each piece of configuration it loaded a :class:`LoadedItem`).

A leaf: the layers that make these facts (``backends/``, ``scenario/``) and the record
that keeps them (``results/``) both import them from here, so reading or writing a
results log never loads the backends or the scenario package.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda._types import LoadedKind, LoadedScope

__all__ = ["WHOLE_ENVIRONMENT", "CommandOutcome", "Fingerprint", "LoadedItem", "ToolCall", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Token accounting an AI backend reported: an HTTP API's usage block, or an agent
    CLI's JSON report. ``cost`` (US dollars) only when the backend priced it (an agent
    CLI's own figure, or the prices configured for an HTTP API)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token counted: input, output and both kinds of cache tokens."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_creation_tokens
        )

    def as_dict(self) -> dict[str, Any]:
        """The counts and the cost (``None`` when not priced), as scenario files and
        results logs write them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cost": self.cost,
        }

    def __add__(self, other: Usage) -> Usage:
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
        )


@dataclass(frozen=True)
class ToolCall:
    """One tool an agent called, as its CLI reported it: ``summary`` is a short line of
    the input (the command, the file); ``ok`` is ``None`` until its result is known."""

    name: str
    summary: str = ""
    ok: bool | None = None
    error: str | None = None
    id: str | None = field(default=None, compare=False)
    #: The whole input (JSON text) and result text as the CLI reported them, capped at
    #: ``TOOL_TEXT_LIMIT`` characters; kept for transcripts, never in ``as_dict``.
    input: str | None = field(default=None, compare=False)
    result: str | None = field(default=None, compare=False)
    #: The decoded input the summary and ``input`` were made from (strings capped at
    #: ``TOOL_TEXT_LIMIT``), so a redactor sees each value's own lines before they are
    #: joined into one summary line or escaped into JSON (``redacted_call``); never
    #: written anywhere itself.
    arguments: Any = field(default=None, compare=False, repr=False)
    #: ``False``: the run's budget for tool-call text was spent before this call, so
    #: ``input`` and ``result`` are not kept and ``arguments`` holds only what the
    #: summary is made from (``tool_calls.ToolTextBudget``).
    texts_kept: bool = field(default=True, compare=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The call as scenario files and results logs write it (without the CLI's id)."""
        return {"name": self.name, "summary": self.summary, "ok": self.ok, "error": self.error}


@dataclass(frozen=True)
class CommandOutcome:
    """What one verification command did, for the results log and the reports:
    ``problem`` says how it missed its expectation (``None`` when it passed);
    ``output_tail`` is the end of its output."""

    run: str
    exit_code: int
    expected_exit_code: int
    duration_s: float
    timed_out: bool = False
    problem: str | None = None
    output_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.problem is None

    def as_dict(self) -> dict[str, object]:
        return {
            "run": self.run,
            "exit_code": self.exit_code,
            "expected_exit_code": self.expected_exit_code,
            "duration_s": self.duration_s,
            "timed_out": self.timed_out,
            "passed": self.passed,
            "problem": self.problem,
            "output_tail": self.output_tail,
        }


@dataclass(frozen=True)
class LoadedItem:
    """One piece of configuration an agent loaded: its name as the agent knows it (a
    skill ``greet``, a hook ``PreToolUse:Write``, an MCP server ``github``, the file
    ``CLAUDE.md``), where it came from, and the sha256 of its content — so two runs
    that loaded a skill of the same name but another text differ."""

    name: str
    sha256: str
    scope: LoadedScope = "user"

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "scope": self.scope, "sha256": self.sha256}


#: A fingerprint's ``env`` when the agent had no sandbox: the whole environment.
WHOLE_ENVIRONMENT = ("*",)


def _nothing_loaded() -> Mapping[LoadedKind, tuple[LoadedItem, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Fingerprint:
    """Which agent made a run, configured how: its name (the registry's), its version as
    the CLI reports it, the model its API reported, the sha256 of its effective settings
    (its command line and the settings files it reads), the environment it was given
    (the sandbox's allow-list; ``("*",)``: the whole environment, no sandbox), and what
    it loaded, by kind (``skills``, ``hooks`` …; only the kinds it loaded any of).

    Two runs whose fingerprints differ were made by two different agents, whatever
    their prompts: ``ooda compare`` refuses to compare them (docs/evaluating.md)."""

    agent: str
    version: str | None = None
    model: str | None = None
    settings: str | None = None
    env: tuple[str, ...] = ()
    loaded: Mapping[LoadedKind, tuple[LoadedItem, ...]] = field(default_factory=_nothing_loaded)

    def with_model(self, model: str | None) -> Fingerprint:
        """This fingerprint with the model the API reported (known once the run ran)."""
        return self if model is None or model == self.model else replace(self, model=model)

    def items(self, kind: LoadedKind) -> tuple[LoadedItem, ...]:
        return self.loaded.get(kind, ())

    def as_dict(self) -> dict[str, Any]:
        """As results logs write it (a kind with nothing loaded is left out)."""
        return {
            "agent": self.agent,
            "version": self.version,
            "model": self.model,
            "settings": self.settings,
            "env": list(self.env),
            "loaded": {
                kind: [item.as_dict() for item in items]
                for kind, items in self.loaded.items()
                if items
            },
        }

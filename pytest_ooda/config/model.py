"""The configuration's data model: locations, provenance and the merged settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.errors import ConfigError, OodaWarning

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from pytest_ooda._types import (
        AgentReportedCount,
        AiOutput,
        IterationMode,
        LogLevel,
        LogTimestampFormat,
        PromptFormat,
    )
    from pytest_ooda.errors import OodaError
    from pytest_ooda.replay_rules import ReplayRule
    from pytest_ooda.sandbox import SandboxSpec


@dataclass(frozen=True)
class Location:
    """A 1-based position in a config file (``file`` is ``None`` for non-file sources)."""

    file: Path | None
    line: int
    column: int

    def __str__(self) -> str:
        name = display_path(self.file) if self.file is not None else "<unknown>"
        return f"{name}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Provenance:
    """Where a resolved setting came from.

    ``tier`` is one of ``cli``, ``env``, ``workspace``, ``global``, ``builtin``, ``default``;
    ``file``/``line`` are set when the value was read from a file. For ``env``, ``file`` is
    ``None`` and :attr:`source` names the variable.
    """

    tier: str
    file: Path | None = None
    line: int | None = None
    source: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.file is not None:
            where = display_path(self.file) + (f":{self.line}" if self.line is not None else "")
            return f"{self.tier} ({where})"
        if self.source:
            return f"{self.tier} ({self.source})"
        return self.tier


@dataclass(frozen=True)
class RetrySettings:
    """``retry:`` (loop, procedure or scenario): how an iteration spoiled by the
    infrastructure (an API's 429/529/5xx, a dropped connection, an agent that died
    before any output) is tried again. ``attempts`` more tries at most; the wait before
    try k is ``delay·2^(k−1)`` seconds, capped at ``max_delay``, with jitter (a random
    half to all of it), and never shorter than a ``Retry-After`` the API sent."""

    attempts: int = 2
    delay: float = 1.0
    max_delay: float = 60.0
    #: An error that rests on the agent's own word (``count_agent_reported_errors``):
    #: ``as_failures`` — an ordinary failed iteration, not tried again, counted toward
    #: the failure threshold, the run a ``failure`` — or ``as_errors`` (tried again, and
    #: an ``error`` left out of rates when the tries run out).
    agent_reported: AgentReportedCount = "as_failures"


@dataclass(frozen=True)
class ApiSettings:
    """An ``ai_api:`` mapping: talk to a model over HTTP instead of running a CLI."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int = 4096
    timeout: float = 600.0
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None


@dataclass(frozen=True)
class FragmentAction:
    """One entry of a phase list: inline ``content`` or a ``path``, with template parameters.

    ``file`` is the resolved fragment file (``None`` for inline content); ``key_locations``
    and ``parameter_locations`` locate the ``content``/``path``/``parameters`` keys and
    each parameter name, for tools that point at them (lint).
    """

    content: str | None
    path: str | None
    # Excluded from the hash (a mapping is not hashable) but not from equality, so
    # actions can be dict keys and sets members, e.g. in fragment coverage.
    parameters: Mapping[str, Any] = field(hash=False)
    base_dir: Path
    location: Location
    file: Path | None = field(default=None, compare=False)
    key_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    parameter_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    #: Written in rooda's v0.1.0 form, the phase as one string (``observe: file.md``).
    string_form: bool = field(default=False, compare=False, repr=False)

    def source_label(self) -> str:
        """``builtin:fragments/…``, the relative path as written, or ``inline``."""
        return self.path if self.path is not None else "inline"

    @property
    def is_template(self) -> bool:
        """Whether the text is rendered as a Go template (non-empty parameters)."""
        return bool(self.parameters)


@dataclass(frozen=True)
class MaterialFile:
    """One file of agent material a run installs: its section (``claude``), its path as
    reports show it (the directory's name, then the file's path in it) and its sha256;
    its text when it is UTF-8 (the record's transcript shows it after the prompt, so a
    prompt diff shows a skill's edit), not part of its identity."""

    section: str
    source: str
    sha256: str
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Procedure:
    """A procedure after the field-by-field merge of every tier.

    ``location`` is the procedure's key in the highest-tier file that declared it;
    ``field_locations`` locates each field's key in the file it was taken from.
    """

    name: str
    display: str
    summary: str
    description: str
    observe: tuple[FragmentAction, ...]
    orient: tuple[FragmentAction, ...]
    decide: tuple[FragmentAction, ...]
    act: tuple[FragmentAction, ...]
    iteration_mode: IterationMode | None
    default_max_iterations: int | None
    iteration_timeout: int | None
    max_output_buffer: int | None
    ai_cmd: str | None
    ai_cmd_alias: str | None
    ai_api: ApiSettings | None
    location: Location
    field_locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    ai_output: AiOutput | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    #: The prompt layout, decided once by the config layer (``config.merge``): a
    #: command-line choice > the procedure's own ``prompt_format`` > ``loop.prompt_format``;
    #: composition only reads it.
    prompt_format: PromptFormat = "ooda"
    #: Where ``prompt_format`` came from.
    prompt_format_source: Provenance = field(
        default_factory=lambda: Provenance("default"), compare=False, repr=False
    )
    #: Where this procedure's live runs execute (``None``: as ``loop.sandbox`` says).
    sandbox: SandboxSpec | None = None
    retry: RetrySettings | None = None
    #: The agent material a run of it installs, file by file: part of its prompt's
    #: identity (``compose.prompt_sha256``), so an edited skill drifts a replay.
    material: tuple[MaterialFile, ...] = ()

    def phases(self) -> dict[str, tuple[FragmentAction, ...]]:
        """The four phase lists in ``PHASES`` order."""
        return {
            "observe": self.observe,
            "orient": self.orient,
            "decide": self.decide,
            "act": self.act,
        }

    @property
    def title(self) -> str:
        """``display``, or the name when ``display`` is empty."""
        return self.display or self.name


@dataclass(frozen=True)
class LoopSettings:
    """The merged ``loop:`` section."""

    iteration_mode: IterationMode
    default_max_iterations: int
    iteration_timeout: int | None
    max_output_buffer: int
    failure_threshold: int
    log_level: LogLevel
    show_ai_output: bool
    ai_cmd: str | None
    ai_cmd_alias: str | None
    ai_api: ApiSettings | None
    #: ``None``: read as the AI command's own flags say (else ``text``).
    ai_output: AiOutput | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    log_timestamp_format: LogTimestampFormat = "none"
    prompt_format: PromptFormat = "ooda"
    #: Where live runs execute (``None``: no sandbox); see docs/sandbox.md.
    sandbox: SandboxSpec | None = None
    retry: RetrySettings | None = None


@dataclass(frozen=True)
class BrokenProcedure:
    """A procedure whose definition does not load: only it fails, with ``error``.

    ``location`` is the procedure's key in the file that broke it.
    """

    name: str
    error: OodaError
    location: Location


@dataclass(frozen=True)
class RedactSettings:
    """A config's ``redact:`` section: more regular expressions to redact, and more
    environment variables whose values are secrets (beyond the built-in rules)."""

    patterns: tuple[str, ...] = ()
    env: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """The merged configuration of every tier."""

    loop: LoopSettings
    aliases: Mapping[str, str]
    procedures: Mapping[str, Procedure]
    provenance: Mapping[str, Provenance]
    files: tuple[Path, ...]
    warnings: tuple[OodaWarning, ...]
    lint: Mapping[str, str]
    #: Every file's ``redact:`` section, merged (lists concatenated).
    redact: RedactSettings = field(default_factory=RedactSettings)
    #: Every file's ``replay_normalise:`` rules, lowest tier first (agent replay).
    replay_normalise: tuple[ReplayRule, ...] = ()
    #: Where each setting read from a file was written (its key), keyed like
    #: ``provenance``: ``"loop.ai_cmd"``, ``"aliases.claude"``, ``"lint.OODA201"``,
    #: ``"procedures.build.observe"``. Tools that point at a setting (lint) use these
    #: instead of reading the YAML again.
    locations: Mapping[str, Location] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    #: Procedures whose definitions do not load, by name: each fails alone (its own
    #: ``ooda show``/``run``, its plugin items, lint) while the others work.
    broken: Mapping[str, BrokenProcedure] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    #: Each agent material section (``claude:``) and the directories it names: collected
    #: as test items, and installed for every scenario of the config that names no other.
    material: Mapping[str, tuple[Path, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def procedure(self, name: str) -> Procedure:
        """The procedure called ``name``; its own located error when its definition is
        broken; ``ConfigError`` with "did you mean" when there is none."""
        try:
            return self.procedures[name]
        except KeyError:
            pass
        if name in self.broken:
            # A fresh copy each time: one exception object raised again and again would
            # grow its traceback with every use.
            raise self.broken[name].error.relocated() from None
        raise ConfigError(
            f"unknown procedure {name!r}",
            hint=did_you_mean(name, [*self.procedures, *self.broken], label="available procedures"),
        )


@dataclass(frozen=True)
class RunSettings:
    """Everything the loop runner needs for one run, each with its provenance."""

    max_iterations: int | None
    #: Seconds (the config's are whole; a caller of ``run_procedure`` may pass a float).
    iteration_timeout: float | None
    max_output_buffer: int
    failure_threshold: int
    show_ai_output: bool
    ai_cmd: tuple[str, ...] | None
    ai_api: ApiSettings | None
    provenance: Mapping[str, Provenance]
    #: How the AI command's output is read (see ``docs/agents.md``).
    ai_output: AiOutput = "text"
    #: Budgets: the run stops after the iteration that reaches either (every budget that
    #: is set applies; these are the smallest).
    max_cost: float | None = None
    max_tokens: int | None = None
    prompt_format: PromptFormat = "ooda"
    #: Where the run's processes execute (``None``: no sandbox); see docs/sandbox.md.
    sandbox: SandboxSpec | None = None
    #: Retries after infrastructure errors (the procedure's ``retry:``, else the loop's).
    retry: RetrySettings = field(default_factory=RetrySettings)

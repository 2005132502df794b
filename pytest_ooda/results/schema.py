"""The results log's record, declared once: one JSON object per live run, one run per
line (``.jsonl``).

:class:`RunRecord` lists the record's fields, and each field's :class:`Column` says how
it is in the log: its JSON types, whether a line must have it, whether the summary
reader keeps it, the codec of a value that is not plain JSON (an iteration, the usage,
a mapping kept as written), and the label a run's page and the text report show it
under. Everything else comes from that list: the JSON form (:meth:`RunRecord.to_json`,
:func:`encode`), the check of a line when it is read and the fast summary reader
(:mod:`.decode`), and the facts a report shows (:func:`shown`, :func:`compared`).

The plan's identity — which run of which scenario, under which plan and session, made
with what — is one value, :class:`RecordHead`, made by the plan
(``live.RunPlan.head``) and embedded in the record as it is; its fields sit at the top
level of the JSON line, as they always have (``"procedure"``, ``"session"``,
``"ai_command"`` …), so the line's form did not change with it.

The schema is versioned (``"schema": "pytest-ooda/results", "version": 3``) and
documented in ``docs/evaluating.md``. Version 2 gave each run an ``outcome``
(``success``, ``failure`` or ``error``, the last for the infrastructure's faults, with
``error_reason``), the ``retries`` it needed, the ``sandbox`` it ran in, its
``variant`` and its ``judge`` gradings. Version 3 dropped the ``success`` field:
``outcome`` alone says how a run counts; and each record names the plan it ran
(``run_id``). Version 1 and 2 lines are still read: a version 1 line's outcome is
``success`` or ``failure`` as its ``success`` says, and a version 2 line's ``success``
must agree with its ``outcome``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import EVIDENCE, STATUSES

if TYPE_CHECKING:
    from pytest_ooda._types import FileChange, RunOutcome
    from pytest_ooda.facts import CommandOutcome, Fingerprint, ToolCall, Usage
    from pytest_ooda.results.session import SessionStamp

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "AssertionEntry",
    "Column",
    "FragmentHash",
    "IterationEntry",
    "RecordHead",
    "RunRecord",
    "column",
    "compared",
    "encode",
    "shown",
]

SCHEMA = "pytest-ooda/results"
#: Bumped when a field changes meaning or goes away; new optional fields keep it.
SCHEMA_VERSION = 3

#: JSON types as ``type(value)`` gives them (a bool is no integer here).
STR: tuple[type, ...] = (str,)
INT: tuple[type, ...] = (int,)
NUMBER: tuple[type, ...] = (int, float)
BOOL: tuple[type, ...] = (bool,)
DICT: tuple[type, ...] = (dict,)
LIST: tuple[type, ...] = (list,)


@dataclass(frozen=True)
class Column:
    """How one field of a record is in the log.

    ``kinds``: the JSON types a plain value may have (checked when read); ``required``:
    a line without the field (or with ``null``) is refused, else a missing one is the
    field's default; ``choices``: the strings a plain value may be; ``summary``: the
    summary reader keeps it (``False``: left out and not checked — what only a run's own
    page shows); ``key``: its name in the JSON line, when not the field's; ``codec``: a
    value that is not plain JSON (the name of its reader in :mod:`.decode` and of its
    writer in :data:`WRITERS`); ``label``: shown under this name with a run (its page,
    in the static report and in ``ooda view``) when it has a value; ``compare``: the
    text report notes a scenario whose runs differ in it (runs that should not be
    pooled silently, as two prompt versions should not); ``of``: the record dataclass
    an ``embedded`` or ``entries`` field holds.
    """

    kinds: tuple[type, ...] = ()
    required: bool = False
    choices: tuple[str, ...] = ()
    summary: bool = True
    key: str | None = None
    codec: str | None = None
    label: str | None = None
    compare: bool = False
    of: type | None = None


def column(
    *,
    kinds: tuple[type, ...] = (),
    required: bool = False,
    choices: tuple[str, ...] = (),
    summary: bool = True,
    key: str | None = None,
    codec: str | None = None,
    label: str | None = None,
    compare: bool = False,
    of: type | None = None,
) -> dict[str, Column]:
    """A field's metadata holding its :class:`Column`:
    ``field(default=…, metadata=column(kinds=STR, label="model"))``."""
    return {"json": Column(kinds, required, choices, summary, key, codec, label, compare, of)}


def _no_files() -> Mapping[str, FileChange]:
    return MappingProxyType({})


def spec_of(item: dataclasses.Field[Any]) -> Column:
    """A field's column (a field declared without one is plain: its JSON value as it is)."""
    found = item.metadata.get("json")
    return found if isinstance(found, Column) else Column()


@dataclass(frozen=True)
class FragmentHash:
    """The sha256 of one fragment as rendered into the prompt (``source`` is its path
    as written, ``builtin:…``, or ``inline``; ``index`` its place in the phase)."""

    phase: str = field(metadata=column(kinds=STR, required=True))
    index: int = field(metadata=column(kinds=INT, required=True))
    source: str = field(metadata=column(kinds=STR, required=True))
    sha256: str = field(metadata=column(kinds=STR, required=True))

    @property
    def key(self) -> str:
        return f"{self.phase}[{self.index}] {self.source}"

    def to_json(self) -> dict[str, Any]:
        return encode(self)


@dataclass(frozen=True)
class IterationEntry:
    """One iteration of a run: what the loop decided, and what it cost."""

    number: int = field(metadata=column(kinds=INT, required=True))
    outcome: str = field(metadata=column(kinds=STR, required=True))
    signal: str | None = field(metadata=column(kinds=STR))
    exit_code: int = field(metadata=column(kinds=INT, required=True))
    duration_s: float = field(metadata=column(kinds=NUMBER, required=True, codec="number"))
    reason: str = field(default="", metadata=column(kinds=STR))
    timed_out: bool = field(default=False, metadata=column(kinds=BOOL))
    usage: Usage | None = field(default=None, metadata=column(codec="usage", summary=False))
    model: str | None = field(default=None, metadata=column(kinds=STR, summary=False))
    turns: int | None = field(default=None, metadata=column(kinds=INT, summary=False))
    tool_calls: tuple[ToolCall, ...] = field(
        default=(), metadata=column(codec="tool_calls", summary=False)
    )
    permission_denials: tuple[ToolCall, ...] = field(
        default=(), metadata=column(codec="tool_calls", summary=False)
    )
    files: Mapping[str, FileChange] = field(
        default_factory=_no_files, metadata=column(codec="files", summary=False)
    )
    output_tail: str = field(default="", metadata=column(kinds=STR, summary=False))
    error: str | None = field(default=None, metadata=column(kinds=STR))
    #: Tries of the iteration the infrastructure spoiled before this one, and (when the
    #: last try was spoiled too) why.
    retries: int = field(default=0, metadata=column(kinds=INT))
    infra_error: str | None = field(default=None, metadata=column(kinds=STR))
    #: What ``infra_error`` rests on: ``agent`` (the agent's own words or its own
    #: silent exit) or ``harness`` (what pytest-ooda saw itself).
    infra_evidence: str | None = field(default=None, metadata=column(kinds=STR, choices=EVIDENCE))

    def to_json(self) -> dict[str, Any]:
        return encode(self)


@dataclass(frozen=True)
class AssertionEntry:
    """One named expectation of a run (``skill greet fired``) and whether it held."""

    name: str = field(metadata=column(kinds=STR, required=True))
    passed: bool = field(metadata=column(kinds=BOOL, required=True))
    detail: str | None = field(default=None, metadata=column(kinds=STR))

    def to_json(self) -> dict[str, Any]:
        return encode(self)


@dataclass(frozen=True)
class AiIdentity:
    """What did the work: an AI command line, or an HTTP API's provider and model."""

    command: str | None = field(
        default=None, metadata=column(kinds=STR, key="ai_command", label="agent")
    )
    api: str | None = field(default=None, metadata=column(kinds=STR, key="ai_api", label="API"))


@dataclass(frozen=True)
class RecordHead:
    """What a run's record says before the run ends: which run of which scenario, under
    which plan and session, made with what. A run's plan makes it
    (:meth:`pytest_ooda.live.RunPlan.head`), the record embeds it as it is; a crashed
    worker's marker keeps the plan, so the controller builds that run's record with the
    same builder. ``run_id`` is ``None`` only in a line written before version 3."""

    procedure: str = field(metadata=column(kinds=STR, required=True))
    scenario: str = field(metadata=column(kinds=STR, required=True))
    run: int = field(default=1, metadata=column(kinds=INT, required=True))
    runs: int = field(default=1, metadata=column(kinds=INT, required=True))
    #: The content hash of the run's plan, repeat index included (``RunPlan.run_id``).
    run_id: str | None = field(default=None, metadata=column(kinds=STR))
    nodeid: str = field(default="", metadata=column(kinds=STR, label="test"))
    scenario_file: str | None = field(default=None, metadata=column(kinds=STR))
    #: The named variant of the scenario's settings this run used (``None``: the default).
    variant: str | None = field(default=None, metadata=column(kinds=STR))
    shard: str | None = field(default=None, metadata=column(kinds=STR))
    worker: str | None = field(default=None, metadata=column(kinds=STR))
    fragments: tuple[FragmentHash, ...] = field(default=(), metadata=column(codec="fragments"))
    ai: AiIdentity = field(
        default_factory=AiIdentity, metadata=column(codec="embedded", of=AiIdentity)
    )
    #: The scenario's per-run ``expect:`` block as written, and its aggregate keys as
    #: the session applies them.
    expect: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="kept")
    )
    aggregate_expect: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="kept")
    )
    #: The session's name, the series of runs it measures (``--ooda-resume`` continues
    #: one) and the repository's commit; ``None`` in a line written before sessions were.
    stamp: SessionStamp | None = field(default=None, metadata=column(codec="stamp"))
    #: The id of the ``error`` run ``--ooda-resume`` ran this one again for: reports
    #: count the two once (this one).
    replaces: str | None = field(default=None, metadata=column(kinds=STR))
    #: Which prompt of a trigger set the run is (:func:`.fired.trigger_entry`).
    trigger: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="kept")
    )
    #: Why ``--ooda-changed=REF`` ran the scenario live: ``{"ref", "commit", "reasons",
    #: "untouched"}`` (the fragments whose rendered text differs, …; how many of the
    #: session's scenarios were untouched and replayed instead).
    changed: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="kept")
    )
    #: The keys the run's variant sets (``ai_cmd``, ``claude``): what it changes on
    #: purpose, which ``ooda compare --by variant`` lets differ between two variants.
    variant_keys: tuple[str, ...] = field(default=(), metadata=column(kinds=LIST, codec="strings"))
    #: ``control: true``: the scenario is a positive control (``stats.controls``).
    control: bool = field(default=False, metadata=column(kinds=BOOL))


@dataclass(frozen=True)
class RunRecord:
    """One live run of one scenario: the line the results log holds for it."""

    id: str = field(metadata=column(kinds=STR, required=True, label="run id"))
    #: Which run of what, under which plan and session (the plan's, as it is).
    head: RecordHead = field(metadata=column(codec="embedded", of=RecordHead))
    status: str = field(metadata=column(kinds=STR, required=True, choices=STATUSES))
    #: ``success``/``failure`` (the prompt's) or ``error`` (the infrastructure's).
    outcome: RunOutcome = field(metadata=column(codec="outcome"))
    elapsed_s: float = field(metadata=column(kinds=NUMBER, required=True, codec="number"))
    started_at: str = field(default="", metadata=column(kinds=STR))
    finished_at: str = field(default="", metadata=column(kinds=STR))
    pytest_ooda: str = field(default="", metadata=column(kinds=STR))
    prompt_sha256: str | None = field(default=None, metadata=column(kinds=STR))
    model: str | None = field(default=None, metadata=column(kinds=STR, label="model"))
    usage: Usage | None = field(default=None, metadata=column(codec="usage"))
    iterations: tuple[IterationEntry, ...] = field(
        default=(), metadata=column(kinds=LIST, required=True, codec="entries", of=IterationEntry)
    )
    files_changed: Mapping[str, FileChange] = field(
        default_factory=_no_files, metadata=column(codec="files")
    )
    problems: tuple[str, ...] = field(default=(), metadata=column(kinds=LIST, codec="strings"))
    commands: tuple[CommandOutcome, ...] = field(default=(), metadata=column(codec="commands"))
    error: str | None = field(default=None, metadata=column(kinds=STR))
    #: Why an ``error`` run is the infrastructure's fault (redacted).
    error_reason: str | None = field(default=None, metadata=column(kinds=STR))
    #: Attempts retried after infrastructure errors before the run's result stood.
    retries: int = field(default=0, metadata=column(kinds=INT, codec="count"))
    #: Where the agent ran: ``{"kind": …, "image": …, "image_id": …}`` (``None``: no
    #: sandbox, or a version 1 line).
    sandbox: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="sandbox")
    )
    #: The model-graded rubric's votes, reasons, usage and verdict.
    judge: Mapping[str, Any] | None = field(default=None, metadata=column(kinds=DICT, codec="kept"))
    #: Files under ``expect.protect`` the agent created, changed or deleted (relative
    #: to the workspace), put back before the run was checked.
    protected_changes: tuple[str, ...] = field(
        default=(), metadata=column(kinds=LIST, codec="strings")
    )
    #: Seconds the run waited for a slot under ``--ooda-max-concurrent``.
    queued_s: float | None = field(default=None, metadata=column(kinds=NUMBER))
    #: What the HTML transcript view shows (the composed prompt by fragment, each
    #: iteration's output, tool calls with input and result, diffs), redacted and
    #: capped per run (``live.transcript``); ``None`` when not kept.
    transcript: Mapping[str, Any] | None = field(
        default=None, metadata=column(kinds=DICT, codec="kept", summary=False)
    )
    #: What fired and held (:mod:`.fired`): each named assertion, the activations
    #: (``skill:greet``, ``hook:PreToolUse:Write``), the ``setup:`` commands.
    assertions: tuple[AssertionEntry, ...] = field(
        default=(), metadata=column(kinds=LIST, codec="entries", of=AssertionEntry)
    )
    activations: tuple[str, ...] = field(default=(), metadata=column(kinds=LIST, codec="strings"))
    setup: tuple[CommandOutcome, ...] = field(default=(), metadata=column(codec="commands"))
    #: Which agent made the run, configured how: its version, the model its API
    #: reported, its settings' hash, its environment, what it loaded (``None``: an HTTP
    #: API, a run that never started its agent, or a line written before fingerprints).
    fingerprint: Fingerprint | None = field(default=None, metadata=column(codec="fingerprint"))

    @property
    def valid(self) -> bool:
        """Whether the run measured the prompt (``success`` or ``failure``, not ``error``)."""
        return self.outcome != "error"

    @property
    def label(self) -> str:
        """``procedure/scenario`` (``@variant`` for a run under one): what reports group
        runs by."""
        return f"{self.head.procedure}/{self.scenario_key}"

    @property
    def scenario_key(self) -> str:
        """``scenario@variant`` for a run under a variant, else the scenario: the
        per-scenario tables, reports and gates count each variant on its own."""
        head = self.head
        return f"{head.scenario}@{head.variant}" if head.variant else head.scenario

    @property
    def session(self) -> str | None:
        """The name of the session that ran the record's run; ``None`` in a line written
        before sessions were."""
        stamp = self.head.stamp
        return stamp.session if stamp is not None else None

    @property
    def series(self) -> str | None:
        """The series of runs the record belongs to (its session's own name unless the
        session resumed another); ``None`` in a line written before sessions were."""
        stamp = self.head.stamp
        return stamp.series if stamp is not None else None

    @property
    def git_commit(self) -> str | None:
        """``HEAD`` of the repository the session ran in, as its stamp says."""
        stamp = self.head.stamp
        return stamp.git_commit if stamp is not None else None

    @property
    def cost(self) -> float | None:
        return self.usage.cost if self.usage is not None else None

    def to_json(self) -> dict[str, Any]:
        """The record as its JSON line holds it (every field, the head's at the top
        level, and ``iteration_count``)."""
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            **encode(self),
            "iteration_count": len(self.iterations),
        }

    def to_line(self) -> str:
        """The record as one line of the log (ends with a newline; no other newline).
        ASCII only: an output holding undecodable bytes (kept as lone surrogates) is
        escaped like any other character, so every line is valid UTF-8 and JSON."""
        return json.dumps(self.to_json(), ensure_ascii=True, separators=(",", ":")) + "\n"


# --------------------------------------------------------------------------- writing


def _usage_json(usage: Usage | None) -> dict[str, Any] | None:
    """A run's or an iteration's usage with its total, as the log writes it."""
    if usage is None:
        return None
    return {**usage.as_dict(), "total_tokens": usage.total_tokens}


def _stamp_json(stamp: SessionStamp | None) -> dict[str, Any]:
    if stamp is None:
        return {
            "session": None,
            "series": None,
            "git_commit": None,
            "git_dirty": None,
            "budget": None,
            "ablation": None,
        }
    return stamp.to_json()


#: A codec's writer: the field's value and its key into the JSON keys and values it
#: writes (one, or an embedded value's own).
Writer = Callable[[Any, str], dict[str, Any]]

WRITERS: dict[str, Writer] = {
    "embedded": lambda value, key: encode(value),
    "stamp": lambda value, key: _stamp_json(value),
    "usage": lambda value, key: {key: _usage_json(value)},
    "entries": lambda value, key: {key: [encode(item) for item in value]},
    "fragments": lambda value, key: {key: [encode(item) for item in value]},
    "tool_calls": lambda value, key: {key: [call.as_dict() for call in value]},
    "commands": lambda value, key: {key: [command.as_dict() for command in value]},
    "files": lambda value, key: {key: dict(value)},
    "kept": lambda value, key: {key: dict(value) if value is not None else None},
    "sandbox": lambda value, key: {key: dict(value) if value is not None else None},
    "strings": lambda value, key: {key: list(value)},
    "fingerprint": lambda value, key: {key: value.as_dict() if value is not None else None},
}


def encode(value: Any) -> dict[str, Any]:
    """A record's dataclass (the record, its head, an iteration …) as JSON keys and
    values, field by field as its columns say."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(value):
        spec = spec_of(item)
        key = spec.key or item.name
        found = getattr(value, item.name)
        writer = WRITERS.get(spec.codec) if spec.codec is not None else None
        if writer is None:
            out[key] = found
        else:
            out.update(writer(found, key))
    return out


# --------------------------------------------------------------------------- showing


def _labelled(value: Any, want: Callable[[Column], bool]) -> list[tuple[str, Column, Any]]:
    """The fields of ``value`` (and of the values embedded in it) whose column ``want``
    picks, with their values."""
    found: list[tuple[str, Column, Any]] = []
    for item in dataclasses.fields(value):
        spec = spec_of(item)
        inner = getattr(value, item.name)
        if spec.codec == "embedded":
            found.extend(_labelled(inner, want))
        elif spec.label is not None and want(spec):
            found.append((spec.label, spec, inner))
    return found


def shown(record: RunRecord) -> list[tuple[str, str]]:
    """What a run's page shows of the record's labelled fields: ``(label, value)`` for
    each that has a value."""
    return [
        (label, str(value))
        for label, _, value in _labelled(record, lambda spec: True)
        if value is not None and value != ""
    ]


def compared(record: RunRecord) -> list[tuple[str, Any]]:
    """The record's fields a scenario's runs should agree on (``compare``): ``(label,
    value)``, for the text report's notes."""
    return [(label, value) for label, _, value in _labelled(record, lambda spec: spec.compare)]

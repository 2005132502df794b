"""The results log: one JSON object per live run, one run per line (``.jsonl``).

The schema is versioned (``"schema": "pytest-ooda/results", "version": 3``) and
documented in ``docs/evaluating.md``. :class:`RunRecord` is a record in memory;
``to_json``/``from_json`` are its wire form, and ``from_json`` checks a parsed line
field by field (a ``ResultsError`` at its file and line names the first wrong field).
Reading files is :mod:`.reading`'s.

Version 2 gave each run an ``outcome`` (``success``, ``failure`` or ``error``, the last
for the infrastructure's faults, with ``error_reason``), the ``retries`` it needed, the
``sandbox`` it ran in, its ``variant`` and its ``judge`` gradings. Version 3 dropped the
``success`` field: ``outcome`` alone says how a run counts; and each record names the
plan it ran (``run_id``). Version 1 and 2 lines are still read: a version 1 line's
outcome is ``success`` or ``failure`` as its ``success`` says, and a version 2 line's
``success`` must agree with its ``outcome``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FILE_CHANGES, RUN_OUTCOMES, STATUSES
from pytest_ooda._util import json_kinds, type_name
from pytest_ooda.errors import ResultsError, ResultsNestingError, ResultsWarning
from pytest_ooda.facts import CommandOutcome, ToolCall, Usage
from pytest_ooda.reader import MAX_DEPTH, Reader, deeper_than
from pytest_ooda.results.fired import AssertionEntry, fired_json, read_fired

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda._types import FileChange, RunOutcome

__all__ = ["SCHEMA", "SCHEMA_VERSION", "FragmentHash", "IterationEntry", "RunRecord"]

SCHEMA = "pytest-ooda/results"
#: Bumped when a field changes meaning or goes away; new optional fields keep it.
SCHEMA_VERSION = 3


def _usage_json(usage: Usage | None) -> dict[str, Any] | None:
    """A run's or an iteration's usage with its total, as the log writes it."""
    if usage is None:
        return None
    return {**usage.as_dict(), "total_tokens": usage.total_tokens}


@dataclass(frozen=True)
class IterationEntry:
    """One iteration of a run: what the loop decided, and what it cost."""

    number: int
    outcome: str
    signal: str | None
    exit_code: int
    duration_s: float
    reason: str = ""
    timed_out: bool = False
    usage: Usage | None = None
    model: str | None = None
    turns: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    permission_denials: tuple[ToolCall, ...] = ()
    files: Mapping[str, FileChange] = field(default_factory=lambda: MappingProxyType({}))
    output_tail: str = ""
    error: str | None = None
    #: Tries of the iteration the infrastructure spoiled before this one, and (when the
    #: last try was spoiled too) why.
    retries: int = 0
    infra_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "outcome": self.outcome,
            "signal": self.signal,
            "exit_code": self.exit_code,
            "duration_s": self.duration_s,
            "reason": self.reason,
            "timed_out": self.timed_out,
            "usage": _usage_json(self.usage),
            "model": self.model,
            "turns": self.turns,
            "tool_calls": [call.as_dict() for call in self.tool_calls],
            "permission_denials": [call.as_dict() for call in self.permission_denials],
            "files": dict(self.files),
            "output_tail": self.output_tail,
            "error": self.error,
            "retries": self.retries,
            "infra_error": self.infra_error,
        }


@dataclass(frozen=True)
class FragmentHash:
    """The sha256 of one fragment as rendered into the prompt (``source`` is its path
    as written, ``builtin:…``, or ``inline``; ``index`` its place in the phase)."""

    phase: str
    index: int
    source: str
    sha256: str

    @property
    def key(self) -> str:
        return f"{self.phase}[{self.index}] {self.source}"

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "index": self.index,
            "source": self.source,
            "sha256": self.sha256,
        }


@dataclass(frozen=True)
class RunRecord:
    """One live run of one scenario: the line the results log holds for it."""

    id: str
    procedure: str
    scenario: str
    run: int
    runs: int
    status: str
    #: ``success``/``failure`` (the prompt's) or ``error`` (the infrastructure's).
    outcome: RunOutcome
    elapsed_s: float
    started_at: str = ""
    finished_at: str = ""
    session: str | None = None
    nodeid: str = ""
    scenario_file: str | None = None
    pytest_ooda: str = ""
    git_commit: str | None = None
    git_dirty: bool | None = None
    worker: str | None = None
    shard: str | None = None
    prompt_sha256: str | None = None
    fragments: tuple[FragmentHash, ...] = ()
    ai_command: str | None = None
    ai_api: str | None = None
    model: str | None = None
    usage: Usage | None = None
    iterations: tuple[IterationEntry, ...] = ()
    files_changed: Mapping[str, FileChange] = field(default_factory=lambda: MappingProxyType({}))
    expect: Mapping[str, Any] | None = None
    problems: tuple[str, ...] = ()
    commands: tuple[CommandOutcome, ...] = ()
    aggregate_expect: Mapping[str, Any] | None = None
    error: str | None = None
    #: Why an ``error`` run is the infrastructure's fault (redacted).
    error_reason: str | None = None
    #: Attempts retried after infrastructure errors before the run's result stood.
    retries: int = 0
    #: Where the agent ran: ``{"kind": …, "image": …, "image_id": …}`` (``None``: no
    #: sandbox, or a version 1 line).
    sandbox: Mapping[str, Any] | None = None
    #: The named variant of the scenario's settings this run used (``None``: the default).
    variant: str | None = None
    #: The model-graded rubric's votes, reasons, usage and verdict.
    judge: Mapping[str, Any] | None = None
    #: Runs of one measurement share a series: a session's own name, or, under
    #: ``--ooda-resume``, the series it resumed (``None``: the record's ``session``).
    series: str | None = None
    #: The id of the ``error`` run ``--ooda-resume`` ran this one again for: reports
    #: count the two once (this one).
    replaces: str | None = None
    #: Files under ``expect.protect`` the agent created, changed or deleted (relative
    #: to the workspace), put back before the run was checked.
    protected_changes: tuple[str, ...] = ()
    #: Seconds the run waited for a slot under ``--ooda-max-concurrent``.
    queued_s: float | None = None
    #: The content hash of the run's plan, repeat index included (``RunPlan.run_id``).
    run_id: str | None = None
    #: What the HTML transcript view shows (the composed prompt by fragment, each
    #: iteration's output, tool calls with input and result, diffs), redacted and
    #: capped per run (``live.transcript``); ``None`` when not kept.
    transcript: Mapping[str, Any] | None = None
    #: What fired and held (:mod:`.fired`): each named assertion, the activations, the
    #: ``setup:`` commands, the trigger case.
    assertions: tuple[AssertionEntry, ...] = ()
    activations: tuple[str, ...] = ()
    setup: tuple[CommandOutcome, ...] = ()
    trigger: Mapping[str, Any] | None = None

    @property
    def valid(self) -> bool:
        """Whether the run measured the prompt (``success`` or ``failure``, not ``error``)."""
        return self.outcome != "error"

    @property
    def label(self) -> str:
        """``procedure/scenario`` (``@variant`` for a run under one): what reports group
        runs by."""
        return f"{self.procedure}/{self.scenario_key}"

    @property
    def scenario_key(self) -> str:
        """``scenario@variant`` for a run under a variant, else the scenario: the
        per-scenario tables, reports and gates count each variant on its own."""
        return f"{self.scenario}@{self.variant}" if self.variant else self.scenario

    @property
    def cost(self) -> float | None:
        return self.usage.cost if self.usage is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "id": self.id,
            "session": self.session,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "pytest_ooda": self.pytest_ooda,
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
            "worker": self.worker,
            "shard": self.shard,
            "nodeid": self.nodeid,
            "procedure": self.procedure,
            "scenario": self.scenario,
            "scenario_file": self.scenario_file,
            "run": self.run,
            "runs": self.runs,
            "prompt_sha256": self.prompt_sha256,
            "fragments": [fragment.to_json() for fragment in self.fragments],
            "ai_command": self.ai_command,
            "ai_api": self.ai_api,
            "model": self.model,
            "status": self.status,
            "iteration_count": len(self.iterations),
            "elapsed_s": self.elapsed_s,
            "usage": _usage_json(self.usage),
            "iterations": [iteration.to_json() for iteration in self.iterations],
            "files_changed": dict(self.files_changed),
            "expect": dict(self.expect) if self.expect is not None else None,
            "problems": list(self.problems),
            "commands": [command.as_dict() for command in self.commands],
            "aggregate_expect": (
                dict(self.aggregate_expect) if self.aggregate_expect is not None else None
            ),
            "error": self.error,
            "outcome": self.outcome,
            "error_reason": self.error_reason,
            "retries": self.retries,
            "sandbox": dict(self.sandbox) if self.sandbox is not None else None,
            "variant": self.variant,
            "judge": dict(self.judge) if self.judge is not None else None,
            "series": self.series,
            "replaces": self.replaces,
            "protected_changes": list(self.protected_changes),
            "queued_s": self.queued_s,
            "run_id": self.run_id,
            "transcript": dict(self.transcript) if self.transcript is not None else None,
            **fired_json(self),
        }

    def to_line(self) -> str:
        """The record as one line of the log (ends with a newline; no other newline).
        ASCII only: an output holding undecodable bytes (kept as lone surrogates) is
        escaped like any other character, so every line is valid UTF-8 and JSON."""
        return json.dumps(self.to_json(), ensure_ascii=True, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(
        cls, data: Any, *, file: str | None = None, line: int | None = None, summary: bool = False
    ) -> RunRecord:
        """Validate ``data`` (a parsed line); a ``ResultsError`` at ``file:line`` names
        the first field that is missing or of the wrong type.

        ``summary``: the record as tables need it, without what only the run's own page
        shows — the ``transcript``; each iteration's ``usage``, ``model``, ``turns``,
        ``output_tail``, ``tool_calls``, ``permission_denials`` and ``files``; the
        commands' ``output_tail`` — which are then neither kept nor checked (the whole
        line is read again to show them)."""
        return RecordReader(file, line, summary=summary).record(data)


# --------------------------------------------------------------------------- validation

#: JSON types as ``type(value)`` gives them (a bool is no integer here).
_STR = (str,)
_INT = (int,)
_NUMBER = (int, float)
_BOOL = (bool,)
_DICT = (dict,)
_LIST = (list,)

#: The JSON types a field may have; plain fields as ``(name, its kinds, required)``.
_Kinds = tuple[type, ...]
_Fields = tuple[tuple[str, _Kinds, bool], ...]


def _fields(spec: dict[str, tuple[_Kinds, bool]]) -> _Fields:
    return tuple((name, kinds, required) for name, (kinds, required) in spec.items())


#: The record's plain fields: name -> (the JSON types it may have, required). Checked in
#: one loop (:meth:`RecordReader.plain`): a log of 10,000 runs is read in about the time
#: parsing its JSON takes.
_RECORD_FIELDS: _Fields = _fields(
    {
        "id": (_STR, True),
        "procedure": (_STR, True),
        "scenario": (_STR, True),
        "run": (_INT, True),
        "runs": (_INT, True),
        "status": (_STR, True),
        "elapsed_s": (_NUMBER, True),
        "iterations": (_LIST, True),
        "started_at": (_STR, False),
        "finished_at": (_STR, False),
        "session": (_STR, False),
        "nodeid": (_STR, False),
        "scenario_file": (_STR, False),
        "pytest_ooda": (_STR, False),
        "git_commit": (_STR, False),
        "git_dirty": (_BOOL, False),
        "worker": (_STR, False),
        "shard": (_STR, False),
        "prompt_sha256": (_STR, False),
        "ai_command": (_STR, False),
        "ai_api": (_STR, False),
        "model": (_STR, False),
        "problems": (_LIST, False),
        "expect": (_DICT, False),
        "aggregate_expect": (_DICT, False),
        "error": (_STR, False),
        "outcome": (_STR, False),
        "error_reason": (_STR, False),
        "retries": (_INT, False),
        "sandbox": (_DICT, False),
        "variant": (_STR, False),
        "judge": (_DICT, False),
        "series": (_STR, False),
        "replaces": (_STR, False),
        "protected_changes": (_LIST, False),
        "queued_s": (_NUMBER, False),
        "run_id": (_STR, False),
        "transcript": (_DICT, False),
    }
)
#: An iteration's plain fields as a summary keeps them (:meth:`RunRecord.from_json`),
#: and all of them.
_ITERATION_SUMMARY_FIELDS: _Fields = _fields(
    {
        "number": (_INT, True),
        "outcome": (_STR, True),
        "exit_code": (_INT, True),
        "duration_s": (_NUMBER, True),
        "signal": (_STR, False),
        "reason": (_STR, False),
        "timed_out": (_BOOL, False),
        "error": (_STR, False),
        "retries": (_INT, False),
        "infra_error": (_STR, False),
    }
)
_ITERATION_FIELDS: _Fields = (
    *_ITERATION_SUMMARY_FIELDS,
    ("model", _STR, False),
    ("turns", _INT, False),
)
_USAGE_FIELDS: _Fields = _fields(
    {
        "input_tokens": (_INT, True),
        "output_tokens": (_INT, True),
        "cache_read_tokens": (_INT, False),
        "cache_creation_tokens": (_INT, False),
        "cost": (_NUMBER, False),
    }
)


class RecordReader(Reader):
    """Typed access to parsed records, failing at their file and line.

    ``summary``: leave out what only a run's own page shows (the transcript; each
    iteration's usage, model, turns, output tail, tool calls, denials and files; the
    verification commands' output); those parts are neither kept nor checked.
    ``shared`` keeps one copy of a fragment list many records repeat (every run of a
    prompt version has the same).
    """

    MAPPING = "an object"

    def __init__(
        self,
        file: str | None,
        line: int | None,
        *,
        summary: bool = False,
        shared: dict[Any, tuple[FragmentHash, ...]] | None = None,
    ) -> None:
        super().__init__(file, ResultsError, ResultsWarning, line=line)
        self.summary = summary
        self.shared = shared if shared is not None else {}

    def field(self, data: dict[str, Any], key: str, kinds: _Kinds, where: str) -> Any:
        """``data[key]``, required, of one of ``kinds`` (``type(None)`` allows null)."""
        if key not in data or type(data[key]) not in kinds:
            raise self.fail(self._wrong(data, key, kinds, where))
        return data[key]

    def optional_field(self, data: dict[str, Any], key: str, kinds: _Kinds, where: str) -> Any:
        """Like ``field``, but a missing field is ``None`` (fields added within a version)."""
        if data.get(key) is None:
            return None
        return self.field(data, key, kinds, where)

    def kept(self, value: Any, key: str) -> Mapping[str, Any] | None:
        """An object field kept as it is (``expect``, ``sandbox``, ``judge`` …): what
        renders it later recurses on it, so it may not nest deeper than ``MAX_DEPTH``."""
        if value is None:
            return None
        if deeper_than(value):
            message = f"field {key!r} nests deeper than {MAX_DEPTH} levels"
            raise self.fail(message, error=ResultsNestingError)
        return MappingProxyType(value)

    def sandbox(self, value: dict[str, Any] | None) -> Mapping[str, Any] | None:
        """The ``sandbox`` object: a string ``kind``, and ``image``/``image_id`` strings
        or null (missing ones null), as the reports show them."""
        if not value:
            return self.kept(value, "sandbox")
        self.field(value, "kind", (str,), "sandbox")
        shown = {key: self.optional_field(value, key, (str,), "sandbox") for key in _IMAGE}
        return self.kept(value | shown, "sandbox")

    def plain(self, data: dict[str, Any], fields: _Fields, where: str) -> dict[str, Any]:
        """Every field of ``fields`` checked (a missing optional one is ``None``)."""
        out: dict[str, Any] = {}
        get = data.get
        for key, kinds, required in fields:
            value = get(key)
            if type(value) in kinds or (value is None and not required):
                out[key] = value
            else:
                raise self.fail(self._wrong(data, key, kinds, where))
        return out

    def _wrong(self, data: dict[str, Any], key: str, kinds: _Kinds, where: str) -> str:
        name = f"{where}.{key}" if where else key
        if key not in data:
            return f"missing field {name!r}"
        return f"field {name!r}: expected {json_kinds(kinds)}, got {type_name(data[key])}"

    def number_field(self, data: dict[str, Any], key: str, where: str) -> float:
        return float(self.field(data, key, _NUMBER, where))

    def usage(self, value: Any, where: str) -> Usage | None:
        if value is None:
            return None
        data = self.plain(self.mapping(value, None, where), _USAGE_FIELDS, where)
        cost = data["cost"]
        return Usage(
            input_tokens=data["input_tokens"],
            output_tokens=data["output_tokens"],
            cache_read_tokens=data["cache_read_tokens"] or 0,
            cache_creation_tokens=data["cache_creation_tokens"] or 0,
            cost=float(cost) if cost is not None else None,
        )

    def objects(self, value: Any, where: str) -> list[tuple[dict[str, Any], str]]:
        """A list field of objects (``[]`` when absent): each with where it sits."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"field {where!r}: expected a list, got {type_name(value)}")
        return [
            (self.mapping(item, None, f"{where}[{index}]"), f"{where}[{index}]")
            for index, item in enumerate(value)
        ]

    def tool_calls(self, value: Any, where: str) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                name=self.field(data, "name", _STR, at),
                summary=self.optional_field(data, "summary", _STR, at) or "",
                ok=self.optional_field(data, "ok", _BOOL, at),
                error=self.optional_field(data, "error", _STR, at),
            )
            for data, at in self.objects(value, where)
        )

    def files(self, value: Any, where: str) -> Mapping[str, FileChange]:
        if value is None:
            return MappingProxyType({})
        data = self.mapping(value, None, where)
        for name, change in data.items():
            if change not in FILE_CHANGES:
                raise self.fail(
                    f"field {where}[{name!r}]: expected one of {', '.join(FILE_CHANGES)}, "
                    f"got {change!r}"
                )
        return MappingProxyType(dict(data))

    def iteration(self, value: Any, where: str) -> IterationEntry:
        data = self.mapping(value, None, where)
        if self.summary:
            # How the loop decided the iteration, without what only its page shows.
            plain = self.plain(data, _ITERATION_SUMMARY_FIELDS, where)
            return IterationEntry(
                number=plain["number"],
                outcome=plain["outcome"],
                signal=plain["signal"],
                exit_code=plain["exit_code"],
                duration_s=float(plain["duration_s"]),
                reason=plain["reason"] or "",
                timed_out=bool(plain["timed_out"]),
                error=plain["error"],
                retries=plain["retries"] or 0,
                infra_error=plain["infra_error"],
            )
        plain = self.plain(data, _ITERATION_FIELDS, where)
        return IterationEntry(
            number=plain["number"],
            outcome=plain["outcome"],
            signal=plain["signal"],
            exit_code=plain["exit_code"],
            duration_s=float(plain["duration_s"]),
            reason=plain["reason"] or "",
            timed_out=bool(plain["timed_out"]),
            usage=self.usage(data.get("usage"), f"{where}.usage"),
            model=plain["model"],
            turns=plain["turns"],
            tool_calls=self.tool_calls(data.get("tool_calls"), f"{where}.tool_calls"),
            permission_denials=self.tool_calls(
                data.get("permission_denials"), f"{where}.permission_denials"
            ),
            files=self.files(data.get("files"), f"{where}.files"),
            output_tail=self.optional_field(data, "output_tail", _STR, where) or "",
            error=plain["error"],
            retries=plain["retries"] or 0,
            infra_error=plain["infra_error"],
        )

    def fragments(self, value: Any) -> tuple[FragmentHash, ...]:
        if value is None:
            return ()
        key: Any = None
        if isinstance(value, list) and all(type(item) is dict for item in value):
            key = tuple(tuple(item.items()) for item in value)
            try:
                found = self.shared.get(key)
            except TypeError:  # an unhashable value where a string belongs: checked below
                found = key = None
            if found is not None:
                return found
        fragments = tuple(
            FragmentHash(
                phase=self.field(data, "phase", _STR, at),
                index=self.field(data, "index", _INT, at),
                source=self.field(data, "source", _STR, at),
                sha256=self.field(data, "sha256", _STR, at),
            )
            for data, at in self.objects(value, "fragments")
        )
        if key is not None:
            self.shared[key] = fragments
        return fragments

    def commands(self, value: Any) -> tuple[CommandOutcome, ...]:
        entries = self.objects(value, "commands")
        if not entries:
            return ()
        return tuple(
            CommandOutcome(
                run=self.field(data, "run", _STR, at),
                exit_code=self.field(data, "exit_code", _INT, at),
                expected_exit_code=self.field(data, "expected_exit_code", _INT, at),
                duration_s=self.number_field(data, "duration_s", at),
                timed_out=self.optional_field(data, "timed_out", _BOOL, at) or False,
                problem=self.optional_field(data, "problem", _STR, at),
                output_tail=(
                    "" if self.summary else self.optional_field(data, "output_tail", _STR, at) or ""
                ),
            )
            for data, at in entries
        )

    def header(self, data: dict[str, Any]) -> int:
        """The schema and version (returned): a line of another file, or of a newer
        pytest-ooda, is refused."""
        if data.get("schema") != SCHEMA:
            raise self.fail(
                f"not a pytest-ooda results record (schema {data.get('schema')!r})",
                hint=f'results records start with {{"schema": "{SCHEMA}", …}}',
            )
        version: int = self.field(data, "version", _INT, "")
        if version > SCHEMA_VERSION:
            raise self.fail(
                f"results schema version {version} is newer than this pytest-ooda reads "
                f"(up to {SCHEMA_VERSION})",
                hint="upgrade pytest-ooda to read it",
            )
        return version

    def outcome(self, data: dict[str, Any], version: int) -> RunOutcome:
        """``outcome``; a version 1 line has only ``success``, a version 2 line may have
        both, which must agree."""
        success = self.field(data, "success", _BOOL, "") if version < 3 else None
        if success is not None and (version == 1 or data.get("outcome") is None):
            return "success" if success else "failure"
        outcome: RunOutcome = self.field(data, "outcome", _STR, "")
        if outcome not in RUN_OUTCOMES:
            raise self.fail(
                f"field 'outcome': expected one of {', '.join(RUN_OUTCOMES)}, got {outcome!r}"
            )
        if success is not None and (outcome == "success") != success:
            raise self.fail(
                f"field 'outcome' is {outcome!r} but 'success' is {str(success).lower()}",
                hint="a run's success is true exactly when its outcome is 'success'",
            )
        return outcome

    def checked(self, data: dict[str, Any]) -> dict[str, Any]:
        """The plain fields, with the rules between them checked."""
        plain = self.plain(data, _RECORD_FIELDS, "")
        status = plain["status"]
        if status not in STATUSES:
            raise self.fail(
                f"field 'status': expected one of {', '.join(STATUSES)}, got {status!r}"
            )
        for name in ("problems", "protected_changes"):
            if not all(type(item) is str for item in plain[name] or ()):
                raise self.fail(f"field {name!r}: expected a list of strings")
        if (plain["retries"] or 0) < 0:
            raise self.fail(f"field 'retries': expected a count >= 0, got {plain['retries']}")
        return plain

    def record(self, value: Any) -> RunRecord:
        data = self.mapping(value, None, "record")
        version = self.header(data)
        plain = self.checked(data)
        transcript = None if self.summary else plain["transcript"]
        return RunRecord(
            id=plain["id"],
            procedure=plain["procedure"],
            scenario=plain["scenario"],
            run=plain["run"],
            runs=plain["runs"],
            status=plain["status"],
            outcome=self.outcome(data, version),
            elapsed_s=float(plain["elapsed_s"]),
            started_at=plain["started_at"] or "",
            finished_at=plain["finished_at"] or "",
            session=plain["session"],
            nodeid=plain["nodeid"] or "",
            scenario_file=plain["scenario_file"],
            pytest_ooda=plain["pytest_ooda"] or "",
            git_commit=plain["git_commit"],
            git_dirty=plain["git_dirty"],
            worker=plain["worker"],
            shard=plain["shard"],
            prompt_sha256=plain["prompt_sha256"],
            fragments=self.fragments(data.get("fragments")),
            ai_command=plain["ai_command"],
            ai_api=plain["ai_api"],
            model=plain["model"],
            usage=self.usage(data.get("usage"), "usage"),
            iterations=tuple(
                self.iteration(item, f"iterations[{index}]")
                for index, item in enumerate(plain["iterations"])
            ),
            files_changed=self.files(data.get("files_changed"), "files_changed"),
            expect=self.kept(plain["expect"], "expect"),
            problems=tuple(plain["problems"] or ()),
            commands=self.commands(data.get("commands")),
            aggregate_expect=self.kept(plain["aggregate_expect"], "aggregate_expect"),
            error=plain["error"],
            error_reason=plain["error_reason"],
            retries=plain["retries"] or 0,
            sandbox=self.sandbox(plain["sandbox"]),
            variant=plain["variant"],
            judge=self.kept(plain["judge"], "judge"),
            series=plain["series"],
            replaces=plain["replaces"],
            protected_changes=tuple(plain["protected_changes"] or ()),
            queued_s=plain["queued_s"],
            run_id=plain["run_id"],
            transcript=self.kept(transcript, "transcript"),
            **read_fired(self, data),
        )


_IMAGE = ("image", "image_id")

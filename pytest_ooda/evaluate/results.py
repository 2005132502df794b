"""The results log: one JSON object per live run, one run per line (``.jsonl``).

The schema is versioned (``"schema": "pytest-ooda/results", "version": 3``) and
documented in ``docs/evaluating.md``. :class:`RunRecord` is a record in memory;
``to_json``/``from_json`` are its wire form. :func:`read_results` reads any number of
files and directories (every ``*.jsonl`` under them), merges them, drops a record seen
twice (the same ``id``: a file passed twice, or copied into two artifacts) and skips an
unfinished last line (a session killed mid-write); anything else that is not a record
is a ``ResultsError`` at its file, line and column.

Version 2 gave each run an ``outcome`` (``success``, ``failure`` or ``error``, the last
for the infrastructure's faults, with ``error_reason``), the ``retries`` it needed, the
``sandbox`` it ran in, its ``variant`` and its ``judge`` gradings. Version 3 dropped the
``success`` field: ``outcome`` alone says how a run counts. Version 1 and 2 lines are
still read: a version 1 line's outcome is ``success`` or ``failure`` as its ``success``
says, and a version 2 line's ``success`` must agree with its ``outcome``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FILE_CHANGES, RUN_OUTCOMES, STATUSES
from pytest_ooda._util import type_name
from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.errors import ResultsError, ResultsWarning

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda._types import FileChange, RunOutcome
    from pytest_ooda.scenario import CommandOutcome

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "FragmentHash",
    "IterationEntry",
    "Results",
    "RunRecord",
    "read_results",
]

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
    #: ``success``/``failure``: the prompt's; ``error``: the infrastructure's
    #: (:mod:`pytest_ooda.evaluate.outcome` decides).
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
    #: Runs of one measurement share a series: a session's own stamp, or, under
    #: ``--ooda-resume``, the series it resumed. ``ooda report`` counts a run of a series
    #: once (``None``: the record's ``session``).
    series: str | None = None
    #: Seconds the run waited for a slot under ``--ooda-max-concurrent``.
    queued_s: float | None = None
    #: What the HTML transcript view shows (the composed prompt by fragment, each
    #: iteration's output, tool calls with input and result, diffs), redacted and
    #: capped per run (``live.transcript``); ``None`` when not kept.
    transcript: Mapping[str, Any] | None = None

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
            "queued_s": self.queued_s,
            "transcript": dict(self.transcript) if self.transcript is not None else None,
        }

    def to_line(self) -> str:
        """The record as one line of the log (ends with a newline; no other newline).
        ASCII only: an output holding undecodable bytes (kept as lone surrogates) is
        escaped like any other character, so every line is valid UTF-8 and JSON."""
        return json.dumps(self.to_json(), ensure_ascii=True, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, data: Any, *, file: str | None = None, line: int | None = None) -> RunRecord:
        """Validate ``data`` (a parsed line); a ``ResultsError`` at ``file:line`` names
        the first field that is missing or of the wrong type."""
        return _Reader(file, line).record(data)


# --------------------------------------------------------------------------- validation


class _Reader:
    """Typed access to one parsed record, failing at its file and line."""

    def __init__(self, file: str | None, line: int | None) -> None:
        self.file = file
        self.line = line

    def fail(self, message: str, hint: str | None = None) -> ResultsError:
        return ResultsError(message, file=self.file, line=self.line, hint=hint)

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{where}: expected an object, got {type_name(value)}")
        return value

    def get(self, data: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
        """``data[key]``, required, of one of ``kinds`` (``type(None)`` allows null)."""
        name = f"{where}.{key}" if where else key
        if key not in data:
            raise self.fail(f"missing field {name!r}")
        value = data[key]
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(f"field {name!r}: expected {_kinds(kinds)}, got {type_name(value)}")
        if not isinstance(value, kinds):
            raise self.fail(f"field {name!r}: expected {_kinds(kinds)}, got {type_name(value)}")
        return value

    def optional(self, data: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
        """Like ``get``, but a missing field is ``None`` (fields added within a version)."""
        if data.get(key) is None:
            return None
        return self.get(data, key, kinds, where)

    def number(self, data: dict[str, Any], key: str, where: str) -> float:
        return float(self.get(data, key, (int, float), where))

    def usage(self, value: Any, where: str) -> Usage | None:
        if value is None:
            return None
        data = self.mapping(value, where)
        cost = self.optional(data, "cost", (int, float), where)
        return Usage(
            input_tokens=self.get(data, "input_tokens", (int,), where),
            output_tokens=self.get(data, "output_tokens", (int,), where),
            cache_read_tokens=self.optional(data, "cache_read_tokens", (int,), where) or 0,
            cache_creation_tokens=self.optional(data, "cache_creation_tokens", (int,), where) or 0,
            cost=float(cost) if cost is not None else None,
        )

    def objects(self, value: Any, where: str) -> list[tuple[dict[str, Any], str]]:
        """A list field of objects (``[]`` when absent): each with where it sits."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"field {where!r}: expected a list, got {type_name(value)}")
        return [
            (self.mapping(item, f"{where}[{index}]"), f"{where}[{index}]")
            for index, item in enumerate(value)
        ]

    def tool_calls(self, value: Any, where: str) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                name=self.get(data, "name", (str,), at),
                summary=self.optional(data, "summary", (str,), at) or "",
                ok=self.optional(data, "ok", (bool,), at),
                error=self.optional(data, "error", (str,), at),
            )
            for data, at in self.objects(value, where)
        )

    def files(self, value: Any, where: str) -> Mapping[str, FileChange]:
        if value is None:
            return MappingProxyType({})
        data = self.mapping(value, where)
        for name, change in data.items():
            if change not in FILE_CHANGES:
                raise self.fail(
                    f"field {where}[{name!r}]: expected one of {', '.join(FILE_CHANGES)}, "
                    f"got {change!r}"
                )
        return MappingProxyType(dict(data))

    def iteration(self, value: Any, where: str) -> IterationEntry:
        data = self.mapping(value, where)
        return IterationEntry(
            number=self.get(data, "number", (int,), where),
            outcome=self.get(data, "outcome", (str,), where),
            signal=self.optional(data, "signal", (str,), where),
            exit_code=self.get(data, "exit_code", (int,), where),
            duration_s=self.number(data, "duration_s", where),
            reason=self.optional(data, "reason", (str,), where) or "",
            timed_out=bool(self.optional(data, "timed_out", (bool,), where)),
            usage=self.usage(data.get("usage"), f"{where}.usage"),
            model=self.optional(data, "model", (str,), where),
            turns=self.optional(data, "turns", (int,), where),
            tool_calls=self.tool_calls(data.get("tool_calls"), f"{where}.tool_calls"),
            permission_denials=self.tool_calls(
                data.get("permission_denials"), f"{where}.permission_denials"
            ),
            files=self.files(data.get("files"), f"{where}.files"),
            output_tail=self.optional(data, "output_tail", (str,), where) or "",
            error=self.optional(data, "error", (str,), where),
            retries=self.optional(data, "retries", (int,), where) or 0,
            infra_error=self.optional(data, "infra_error", (str,), where),
        )

    def fragments(self, value: Any) -> tuple[FragmentHash, ...]:
        return tuple(
            FragmentHash(
                phase=self.get(data, "phase", (str,), at),
                index=self.get(data, "index", (int,), at),
                source=self.get(data, "source", (str,), at),
                sha256=self.get(data, "sha256", (str,), at),
            )
            for data, at in self.objects(value, "fragments")
        )

    def commands(self, value: Any) -> tuple[CommandOutcome, ...]:
        entries = self.objects(value, "commands")
        if not entries:
            return ()
        # Only records of runs with verification commands pay for the scenario package.
        from pytest_ooda.scenario import CommandOutcome

        return tuple(
            CommandOutcome(
                run=self.get(data, "run", (str,), at),
                exit_code=self.get(data, "exit_code", (int,), at),
                expected_exit_code=self.get(data, "expected_exit_code", (int,), at),
                duration_s=self.number(data, "duration_s", at),
                timed_out=self.optional(data, "timed_out", (bool,), at) or False,
                problem=self.optional(data, "problem", (str,), at),
                output_tail=self.optional(data, "output_tail", (str,), at) or "",
            )
            for data, at in entries
        )

    def outcome(self, data: dict[str, Any], version: int) -> RunOutcome:
        """``outcome``; a version 1 line has only ``success``, and a version 2 line
        carries both, which must agree."""
        if version < 2 or (version == 2 and data.get("outcome") is None):
            success = self.get(data, "success", (bool,), "")
            return "success" if success else "failure"
        outcome: RunOutcome = self.get(data, "outcome", (str,), "")
        if outcome not in RUN_OUTCOMES:
            raise self.fail(
                f"field 'outcome': expected one of {', '.join(RUN_OUTCOMES)}, got {outcome!r}"
            )
        if version == 2:
            success = self.get(data, "success", (bool,), "")
            if (outcome == "success") != success:
                raise self.fail(
                    f"field 'outcome' is {outcome!r} but 'success' is {str(success).lower()}",
                    hint="a run's success is true exactly when its outcome is 'success'",
                )
        return outcome

    def record(self, value: Any) -> RunRecord:
        data = self.mapping(value, "record")
        if data.get("schema") != SCHEMA:
            raise self.fail(
                f"not a pytest-ooda results record (schema {data.get('schema')!r})",
                hint=f'results records start with {{"schema": "{SCHEMA}", …}}',
            )
        version = self.get(data, "version", (int,), "")
        if version > SCHEMA_VERSION:
            raise self.fail(
                f"results schema version {version} is newer than this pytest-ooda reads "
                f"(up to {SCHEMA_VERSION})",
                hint="upgrade pytest-ooda to read it",
            )
        status = self.get(data, "status", (str,), "")
        if status not in STATUSES:
            raise self.fail(
                f"field 'status': expected one of {', '.join(STATUSES)}, got {status!r}"
            )
        iterations = self.get(data, "iterations", (list,), "")
        problems = self.optional(data, "problems", (list,), "") or []
        if not all(isinstance(problem, str) for problem in problems):
            raise self.fail("field 'problems': expected a list of strings")
        expect = self.optional(data, "expect", (dict,), "")
        aggregate = self.optional(data, "aggregate_expect", (dict,), "")
        outcome = self.outcome(data, version)
        sandbox = self.optional(data, "sandbox", (dict,), "")
        judge = self.optional(data, "judge", (dict,), "")
        transcript = self.optional(data, "transcript", (dict,), "")
        retries = self.optional(data, "retries", (int,), "") or 0
        if retries < 0:
            raise self.fail(f"field 'retries': expected a count >= 0, got {retries}")
        return RunRecord(
            id=self.get(data, "id", (str,), ""),
            procedure=self.get(data, "procedure", (str,), ""),
            scenario=self.get(data, "scenario", (str,), ""),
            run=self.get(data, "run", (int,), ""),
            runs=self.get(data, "runs", (int,), ""),
            status=status,
            outcome=outcome,
            elapsed_s=self.number(data, "elapsed_s", ""),
            started_at=self.optional(data, "started_at", (str,), "") or "",
            finished_at=self.optional(data, "finished_at", (str,), "") or "",
            session=self.optional(data, "session", (str,), ""),
            nodeid=self.optional(data, "nodeid", (str,), "") or "",
            scenario_file=self.optional(data, "scenario_file", (str,), ""),
            pytest_ooda=self.optional(data, "pytest_ooda", (str,), "") or "",
            git_commit=self.optional(data, "git_commit", (str,), ""),
            git_dirty=self.optional(data, "git_dirty", (bool,), ""),
            worker=self.optional(data, "worker", (str,), ""),
            shard=self.optional(data, "shard", (str,), ""),
            prompt_sha256=self.optional(data, "prompt_sha256", (str,), ""),
            fragments=self.fragments(data.get("fragments")),
            ai_command=self.optional(data, "ai_command", (str,), ""),
            ai_api=self.optional(data, "ai_api", (str,), ""),
            model=self.optional(data, "model", (str,), ""),
            usage=self.usage(data.get("usage"), "usage"),
            iterations=tuple(
                self.iteration(item, f"iterations[{index}]")
                for index, item in enumerate(iterations)
            ),
            files_changed=self.files(data.get("files_changed"), "files_changed"),
            expect=MappingProxyType(expect) if expect is not None else None,
            problems=tuple(problems),
            commands=self.commands(data.get("commands")),
            aggregate_expect=MappingProxyType(aggregate) if aggregate is not None else None,
            error=self.optional(data, "error", (str,), ""),
            error_reason=self.optional(data, "error_reason", (str,), ""),
            retries=retries,
            sandbox=MappingProxyType(sandbox) if sandbox is not None else None,
            variant=self.optional(data, "variant", (str,), ""),
            judge=MappingProxyType(judge) if judge is not None else None,
            series=self.optional(data, "series", (str,), ""),
            queued_s=self.optional(data, "queued_s", (int, float), ""),
            transcript=MappingProxyType(transcript) if transcript is not None else None,
        )


def _kinds(kinds: tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    shown = [names.get(kind, kind.__name__) for kind in kinds]
    if int in kinds and float in kinds:
        shown = [name for name in shown if name != "an integer"]
    return " or ".join(shown)


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Results:
    """Records merged from ``files`` (in file order), and what reading left out."""

    records: tuple[RunRecord, ...]
    files: tuple[Path, ...]
    warnings: tuple[ResultsWarning, ...] = ()


def results_files(paths: Iterable[str | Path]) -> list[Path]:
    """``paths`` with each directory replaced by the ``*.jsonl`` files under it (at any
    depth: CI downloads each shard's artifact into a folder of its own)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not inside:
                raise ResultsError(f"no results files (*.jsonl) under {path}")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise ResultsError(
                f"results file not found: {path}",
                hint="pytest -m live writes them to .ooda/results/ (see --ooda-results)",
            )
    return found


def read_results(paths: Sequence[str | Path]) -> Results:
    """Read and merge the results in ``paths`` (files, or directories of ``*.jsonl``)."""
    files = results_files(paths)
    if not files:
        raise ResultsError("no results files given")
    records: list[RunRecord] = []
    warnings: list[ResultsWarning] = []
    seen: dict[str, str] = {}
    duplicates = 0
    for path in files:
        for number, record in _read_file(path, warnings):
            if record.id in seen:
                duplicates += 1
                continue
            seen[record.id] = f"{path}:{number}"
            records.append(record)
    if duplicates:
        warnings.append(
            ResultsWarning(
                f"{duplicates} record(s) appear more than once (same id); each run is counted once",
                hint="was a file given twice, or copied into two folders?",
            )
        )
    return Results(tuple(records), tuple(files), tuple(warnings))


def _read_file(path: Path, warnings: list[ResultsWarning]) -> list[tuple[int, RunRecord]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(
            f"cannot read results file: {exc.strerror or exc}", file=str(path)
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ResultsError(
            "not a results file: not UTF-8 text", file=str(path), line=line
        ) from None
    lines = text.split("\n")
    out: list[tuple[int, RunRecord]] = []
    for index, content in enumerate(lines):
        number = index + 1
        if not content.strip():
            continue
        try:
            parsed = json.loads(content)
        except json.JSONDecodeError as exc:
            if index == len(lines) - 1:
                # No newline after it: the write of the last record was cut short.
                warnings.append(
                    ResultsWarning(
                        "the last record is incomplete (the session was interrupted while "
                        "writing it) and is left out",
                        file=str(path),
                        line=number,
                    )
                )
                continue
            raise ResultsError(
                f"not a results record: {exc.msg}",
                file=str(path),
                line=number,
                column=exc.colno,
            ) from None
        out.append((number, RunRecord.from_json(parsed, file=str(path), line=number)))
    return out

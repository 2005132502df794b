"""A parsed results line into a :class:`~.schema.RunRecord`, checked field by field as
the record's columns say: a ``ResultsError`` at its file and line names the first field
that is missing or of the wrong type.

Nothing here lists the record's fields: :class:`RecordReader` walks each record
dataclass's fields once (:func:`slots`) into what reading needs — the JSON key, the
types, whether a line must have it, its codec — and reads every line through that
list in one loop, leaving out (neither kept nor checked) what the summary reader does
not keep. A field's codec is a method here, ``read_<codec>`` (``read_usage``, ``read_files``
…), for what is not plain JSON. A log of 10,000 runs is read in about the time parsing
its JSON takes. Reading files is :mod:`.reading`'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FILE_CHANGES, LOADED_KINDS, LOADED_SCOPES, RUN_OUTCOMES
from pytest_ooda._util import json_kinds, type_name
from pytest_ooda.errors import ResultsError, ResultsNestingError, ResultsWarning
from pytest_ooda.facts import CommandOutcome, Fingerprint, LoadedItem, ToolCall, Usage
from pytest_ooda.reader import MAX_DEPTH, Reader, deeper_than
from pytest_ooda.results.schema import (
    BOOL,
    DICT,
    INT,
    NUMBER,
    SCHEMA,
    SCHEMA_VERSION,
    STR,
    AiIdentity,
    AssertionEntry,
    FragmentHash,
    IterationEntry,
    RecordHead,
    RunRecord,
    spec_of,
)
from pytest_ooda.results.session import SessionStamp

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda._types import FileChange, RunOutcome

__all__ = ["RecordReader", "Slot", "decode_record", "slots"]


@dataclass(frozen=True, slots=True)
class Slot:
    """One field as reading needs it: its name, its JSON key, the JSON types a plain
    value may have, whether a line must have it, the strings it may be, and its codec
    (a method of :class:`RecordReader`)."""

    name: str
    key: str
    kinds: tuple[type, ...]
    required: bool
    choices: tuple[str, ...]
    #: The codec's method (``read_<codec>``), and the record dataclass an ``embedded``
    #: or ``entries`` field holds.
    reader: str | None
    of: type | None
    #: What a missing (or ``null``) optional field is: the field's default, else ``None``.
    fallback: Any


def _slots(cls: type, summary: bool) -> tuple[Slot, ...]:
    found = []
    for item in dataclasses.fields(cls):
        spec = spec_of(item)
        if summary and not spec.summary:
            continue  # the field's default: neither kept nor checked
        key = spec.key or item.name
        if not spec.kinds and spec.codec is None:
            raise TypeError(f"{cls.__name__}.{item.name}: a column needs JSON kinds or a codec")
        reader = f"read_{spec.codec}" if spec.codec is not None else None
        if item.default is not dataclasses.MISSING:
            fallback = item.default
        elif item.default_factory is not dataclasses.MISSING:
            fallback = item.default_factory()  # an immutable empty value, shared
        else:
            fallback = None
        found.append(
            Slot(item.name, key, spec.kinds, spec.required, spec.choices, reader, spec.of, fallback)
        )
    return tuple(found)


#: Each record dataclass's slots, in full and as the summary reader keeps them: worked
#: out at import from the fields' columns.
_SLOTS: dict[tuple[type, bool], tuple[Slot, ...]] = {
    (cls, summary): _slots(cls, summary)
    for cls in (RunRecord, RecordHead, AiIdentity, IterationEntry, FragmentHash, AssertionEntry)
    for summary in (False, True)
}


def slots(cls: type, *, summary: bool = False) -> tuple[Slot, ...]:
    """The fields of ``cls`` (a record dataclass) as reading needs them."""
    return _SLOTS[(cls, summary)]


#: A usage block's fields (the backends' ``Usage``, a leaf type of its own).
_USAGE = (
    ("input_tokens", INT, True),
    ("output_tokens", INT, True),
    ("cache_read_tokens", INT, False),
    ("cache_creation_tokens", INT, False),
    ("cost", NUMBER, False),
)
_IMAGE = ("image", "image_id")


class RecordReader(Reader):
    """Typed access to parsed records, failing at their file and line.

    ``summary``: leave out what only a run's own page shows (the fields whose column
    says ``summary=False``: the transcript; each iteration's usage, model, turns, output
    tail, tool calls, denials and files; the verification commands' output); those parts
    are neither kept nor checked. ``shared`` keeps one copy of a fragment list many
    records repeat (every run of a prompt version has the same).
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
        self.version = SCHEMA_VERSION

    # ------------------------------------------------------------------ the one loop

    def make(self, cls: type, data: dict[str, Any], where: str) -> Any:
        """An instance of ``cls`` from ``data``, every field checked as its slot says
        (a missing optional field keeps its default)."""
        values: dict[str, Any] = {}
        get = data.get
        for slot in slots(cls, summary=self.summary):
            if slot.kinds:
                value = get(slot.key)
                if type(value) not in slot.kinds:
                    if value is None and not slot.required:
                        values[slot.name] = slot.fallback
                        continue
                    raise self.fail(self._wrong(data, slot.key, slot.kinds, where))
                if slot.choices and value not in slot.choices:
                    name = f"{where}.{slot.key}" if where else slot.key
                    raise self.fail(
                        f"field {name!r}: expected one of {', '.join(slot.choices)}, got {value!r}"
                    )
            if slot.reader is None:
                values[slot.name] = value
            else:
                values[slot.name] = getattr(self, slot.reader)(data, slot, where)
        return cls(**values)

    def record(self, value: Any) -> RunRecord:
        data = self.mapping(value, None, "record")
        self.version = self.header(data)
        record: RunRecord = self.make(RunRecord, data, "")
        return record

    # ------------------------------------------------------------------ checks

    def field(self, data: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
        """``data[key]``, required, of one of ``kinds``."""
        if key not in data or type(data[key]) not in kinds:
            raise self.fail(self._wrong(data, key, kinds, where))
        return data[key]

    def optional_field(
        self, data: dict[str, Any], key: str, kinds: tuple[type, ...], where: str
    ) -> Any:
        """Like ``field``, but a missing field is ``None`` (fields added within a version)."""
        if data.get(key) is None:
            return None
        return self.field(data, key, kinds, where)

    def _wrong(self, data: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> str:
        name = f"{where}.{key}" if where else key
        if key not in data:
            return f"missing field {name!r}"
        return f"field {name!r}: expected {json_kinds(kinds)}, got {type_name(data[key])}"

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

    def header(self, data: dict[str, Any]) -> int:
        """The schema and version (returned): a line of another file, or of a newer
        pytest-ooda, is refused."""
        if data.get("schema") != SCHEMA:
            raise self.fail(
                f"not a pytest-ooda results record (schema {data.get('schema')!r})",
                hint=f'results records start with {{"schema": "{SCHEMA}", …}}',
            )
        version: int = self.field(data, "version", INT, "")
        if version > SCHEMA_VERSION:
            raise self.fail(
                f"results schema version {version} is newer than this pytest-ooda reads "
                f"(up to {SCHEMA_VERSION})",
                hint="upgrade pytest-ooda to read it",
            )
        return version

    # ------------------------------------------------------------------ codecs
    # ``read_<codec>`` reads ``slot``'s field of ``data`` (its plain type checked already
    # when its column names JSON types).

    def read_embedded(self, data: dict[str, Any], slot: Slot, where: str) -> Any:
        """A value whose fields sit beside the record's own (the head, the AI)."""
        assert slot.of is not None
        return self.make(slot.of, data, where)

    def read_number(self, data: dict[str, Any], slot: Slot, where: str) -> float:
        return float(data[slot.key])

    def read_count(self, data: dict[str, Any], slot: Slot, where: str) -> int:
        value: int = data[slot.key]
        if value < 0:
            raise self.fail(f"field {slot.key!r}: expected a count >= 0, got {value}")
        return value

    def read_strings(self, data: dict[str, Any], slot: Slot, where: str) -> tuple[str, ...]:
        value = data[slot.key]
        if not all(type(item) is str for item in value):
            raise self.fail(f"field {slot.key!r}: expected a list of strings")
        return tuple(value)

    def read_entries(self, data: dict[str, Any], slot: Slot, where: str) -> tuple[Any, ...]:
        """A list of a record dataclass's objects (the iterations)."""
        assert slot.of is not None
        return tuple(
            self.make(slot.of, item, at) for item, at in self.objects(data[slot.key], slot.key)
        )

    def kept(self, value: Any, key: str) -> Mapping[str, Any] | None:
        """An object kept as it is (``expect``, ``judge`` …): what renders it later
        recurses on it, so it may not nest deeper than ``MAX_DEPTH``."""
        if value is None:
            return None
        if deeper_than(value):
            message = f"field {key!r} nests deeper than {MAX_DEPTH} levels"
            raise self.fail(message, error=ResultsNestingError)
        return MappingProxyType(value)

    def read_kept(self, data: dict[str, Any], slot: Slot, where: str) -> Mapping[str, Any] | None:
        return self.kept(data.get(slot.key), slot.key)

    def read_sandbox(
        self, data: dict[str, Any], slot: Slot, where: str
    ) -> Mapping[str, Any] | None:
        """The ``sandbox`` object: a string ``kind``, and ``image``/``image_id`` strings
        or null (missing ones null), as the reports show them."""
        value = data.get(slot.key)
        if not value:
            return self.kept(value, slot.key)
        self.field(value, "kind", STR, slot.key)
        shown = {name: self.optional_field(value, name, STR, slot.key) for name in _IMAGE}
        return self.kept(value | shown, slot.key)

    def read_outcome(self, data: dict[str, Any], slot: Slot, where: str) -> RunOutcome:
        """``outcome``; a version 1 line has only ``success``, a version 2 line may have
        both, which must agree."""
        version = self.version
        success = self.field(data, "success", BOOL, "") if version < 3 else None
        if success is not None and (version == 1 or data.get("outcome") is None):
            return "success" if success else "failure"
        outcome: RunOutcome = self.field(data, "outcome", STR, "")
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

    def read_stamp(self, data: dict[str, Any], slot: Slot, where: str) -> SessionStamp | None:
        """The session's stamp, from its fields beside the record's (``None`` without a
        ``session``: a line written before sessions were; a missing ``series`` is the
        session's own)."""
        session = self.optional_field(data, "session", STR, where)
        series = self.optional_field(data, "series", STR, where)
        commit = self.optional_field(data, "git_commit", STR, where)
        dirty = self.optional_field(data, "git_dirty", BOOL, where)
        budget = self.kept(self.optional_field(data, "budget", DICT, where), "budget")
        ablation = self.kept(self.optional_field(data, "ablation", DICT, where), "ablation")
        if session is None:
            return None
        return SessionStamp(session, series or session, commit, dirty, budget, ablation)

    def read_usage(self, data: dict[str, Any], slot: Slot, where: str) -> Usage | None:
        value = data.get(slot.key)
        if value is None:
            return None
        at = f"{where}.{slot.key}" if where else slot.key
        block = self.mapping(value, None, at)
        found: dict[str, Any] = {}
        for name, kinds, required in _USAGE:
            item = block.get(name)
            if type(item) not in kinds and (item is not None or required):
                raise self.fail(self._wrong(block, name, kinds, at))
            found[name] = item
        cost = found["cost"]
        return Usage(
            input_tokens=found["input_tokens"],
            output_tokens=found["output_tokens"],
            cache_read_tokens=found["cache_read_tokens"] or 0,
            cache_creation_tokens=found["cache_creation_tokens"] or 0,
            cost=float(cost) if cost is not None else None,
        )

    def read_tool_calls(self, data: dict[str, Any], slot: Slot, where: str) -> tuple[ToolCall, ...]:
        at = f"{where}.{slot.key}" if where else slot.key
        return tuple(
            ToolCall(
                name=self.field(item, "name", STR, here),
                summary=self.optional_field(item, "summary", STR, here) or "",
                ok=self.optional_field(item, "ok", BOOL, here),
                error=self.optional_field(item, "error", STR, here),
            )
            for item, here in self.objects(data.get(slot.key), at)
        )

    def read_files(self, data: dict[str, Any], slot: Slot, where: str) -> Mapping[str, FileChange]:
        value = data.get(slot.key)
        if value is None:
            return MappingProxyType({})
        at = f"{where}.{slot.key}" if where else slot.key
        found = self.mapping(value, None, at)
        for name, change in found.items():
            if change not in FILE_CHANGES:
                raise self.fail(
                    f"field {at}[{name!r}]: expected one of {', '.join(FILE_CHANGES)}, "
                    f"got {change!r}"
                )
        return MappingProxyType(dict(found))

    def read_fragments(
        self, data: dict[str, Any], slot: Slot, where: str
    ) -> tuple[FragmentHash, ...]:
        value = data.get(slot.key)
        if value is None:
            return ()
        shared: Any = None
        if isinstance(value, list) and all(type(item) is dict for item in value):
            shared = tuple(tuple(item.items()) for item in value)
            try:
                found = self.shared.get(shared)
            except TypeError:  # an unhashable value where a string belongs: checked below
                found = shared = None
            if found is not None:
                return found
        fragments = tuple(
            self.make(FragmentHash, item, at) for item, at in self.objects(value, slot.key)
        )
        if shared is not None:
            self.shared[shared] = fragments
        return fragments

    def read_fingerprint(self, data: dict[str, Any], slot: Slot, where: str) -> Fingerprint | None:
        """The agent's fingerprint: its name, version, model, settings hash and
        environment, and what it loaded by kind (each ``{name, scope, sha256}``)."""
        value = data.get(slot.key)
        if value is None:
            return None
        at = slot.key
        block = self.mapping(value, None, at)
        env = block.get("env") or []
        if not isinstance(env, list) or not all(type(name) is str for name in env):
            raise self.fail(f"field '{at}.env': expected a list of strings")
        loaded = self.mapping(block.get("loaded") or {}, None, f"{at}.loaded")
        kinds: dict[Any, tuple[LoadedItem, ...]] = {}
        for kind, items in loaded.items():
            if kind not in LOADED_KINDS:
                raise self.fail(
                    f"field '{at}.loaded': expected kinds among {', '.join(LOADED_KINDS)}, "
                    f"got {kind!r}"
                )
            kinds[kind] = tuple(
                LoadedItem(
                    self.field(item, "name", STR, here),
                    self.field(item, "sha256", STR, here),
                    self._scope(item, here),
                )
                for item, here in self.objects(items, f"{at}.loaded.{kind}")
            )
        return Fingerprint(
            agent=self.field(block, "agent", STR, at),
            version=self.optional_field(block, "version", STR, at),
            model=self.optional_field(block, "model", STR, at),
            settings=self.optional_field(block, "settings", STR, at),
            env=tuple(env),
            loaded=MappingProxyType(kinds),
        )

    def _scope(self, item: dict[str, Any], where: str) -> Any:
        scope = self.field(item, "scope", STR, where)
        if scope not in LOADED_SCOPES:
            raise self.fail(
                f"field '{where}.scope': expected one of {', '.join(LOADED_SCOPES)}, got {scope!r}"
            )
        return scope

    def read_commands(
        self, data: dict[str, Any], slot: Slot, where: str
    ) -> tuple[CommandOutcome, ...]:
        return tuple(
            CommandOutcome(
                run=self.field(item, "run", STR, at),
                exit_code=self.field(item, "exit_code", INT, at),
                expected_exit_code=self.field(item, "expected_exit_code", INT, at),
                duration_s=float(self.field(item, "duration_s", NUMBER, at)),
                timed_out=self.optional_field(item, "timed_out", BOOL, at) or False,
                problem=self.optional_field(item, "problem", STR, at),
                output_tail=(
                    "" if self.summary else self.optional_field(item, "output_tail", STR, at) or ""
                ),
            )
            for item, at in self.objects(data.get(slot.key), slot.key)
        )


def decode_record(
    data: Any, *, file: str | None = None, line: int | None = None, summary: bool = False
) -> RunRecord:
    """Validate ``data`` (a parsed line) into its record; a ``ResultsError`` at
    ``file:line`` names the first field that is missing or of the wrong type.

    ``summary``: the record as tables need it, without what only the run's own page
    shows (the fields whose column says ``summary=False``), which is then neither kept
    nor checked (the whole line is read again to show it)."""
    return RecordReader(file, line, summary=summary).record(data)

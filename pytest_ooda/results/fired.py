"""What a run's record says fired and held, beyond its outcome: each named assertion of
``expect.activation`` and ``expect.trajectory`` and whether the run met it (so each gets
its own pass rate), what fired (``skill:greet``, ``hook:PreToolUse:Write``), the
scenario's ``setup:`` commands, and — for a run of a trigger set — which prompt it was
and whether the target should fire. Kept apart from :mod:`.schema`, which writes and
reads them through :func:`fired_json` and :func:`read_fired`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ooda.facts import CommandOutcome

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["AssertionEntry", "assertion_entries", "fired_json", "read_fired", "trigger_entry"]


@dataclass(frozen=True)
class AssertionEntry:
    """One named expectation of a run (``skill greet fired``) and whether it held."""

    name: str
    passed: bool
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def trigger_entry(target: str, case: str, should_fire: bool, prompt: str) -> dict[str, Any]:
    """The record's ``trigger``: the set's target (``skill greet``), the case
    (``should-2``), whether it should fire, and the prompt."""
    return {"target": target, "case": case, "should_fire": should_fire, "prompt": prompt}


class _Record(Protocol):
    @property
    def assertions(self) -> tuple[AssertionEntry, ...]: ...
    @property
    def activations(self) -> tuple[str, ...]: ...
    @property
    def setup(self) -> tuple[CommandOutcome, ...]: ...
    @property
    def trigger(self) -> Mapping[str, Any] | None: ...


def fired_json(record: _Record) -> dict[str, Any]:
    return {
        "assertions": [entry.to_json() for entry in record.assertions],
        "activations": list(record.activations),
        "setup": [command.as_dict() for command in record.setup],
        "trigger": dict(record.trigger) if record.trigger is not None else None,
    }


class _Reader(Protocol):
    summary: bool

    def objects(self, value: Any, where: str) -> list[tuple[dict[str, Any], str]]: ...
    def field(self, data: dict[str, Any], key: str, kinds: Any, where: str) -> Any: ...
    def optional_field(self, data: dict[str, Any], key: str, kinds: Any, where: str) -> Any: ...
    def kept(self, value: Any, key: str) -> Mapping[str, Any] | None: ...
    def fail(self, message: str, *args: Any, **kwargs: Any) -> Exception: ...


def read_fired(reader: _Reader, data: dict[str, Any]) -> dict[str, Any]:
    """The four fields of a parsed record line (absent in older lines: empty)."""
    assertions = tuple(
        AssertionEntry(
            reader.field(item, "name", (str,), at),
            reader.field(item, "passed", (bool,), at),
            reader.optional_field(item, "detail", (str,), at),
        )
        for item, at in reader.objects(data.get("assertions"), "assertions")
    )
    activations = data.get("activations") or []
    if not isinstance(activations, list) or not all(type(a) is str for a in activations):
        raise reader.fail("field 'activations': expected a list of strings")
    trigger = data.get("trigger")
    if trigger is not None and not isinstance(trigger, dict):
        raise reader.fail("field 'trigger': expected an object")
    return {
        "assertions": assertions,
        "activations": tuple(activations),
        "setup": _setup(reader, data.get("setup")),
        "trigger": reader.kept(trigger, "trigger"),
    }


def _setup(reader: _Reader, value: Any) -> tuple[CommandOutcome, ...]:
    return tuple(
        CommandOutcome(
            run=reader.field(item, "run", (str,), at),
            exit_code=reader.field(item, "exit_code", (int,), at),
            expected_exit_code=reader.field(item, "expected_exit_code", (int,), at),
            duration_s=float(reader.field(item, "duration_s", (int, float), at)),
            timed_out=reader.optional_field(item, "timed_out", (bool,), at) or False,
            problem=reader.optional_field(item, "problem", (str,), at),
            output_tail=""
            if reader.summary
            else reader.optional_field(item, "output_tail", (str,), at) or "",
        )
        for item, at in reader.objects(value, "setup")
    )


def assertion_entries(found: Sequence[Any]) -> tuple[AssertionEntry, ...]:
    """``found`` (a scenario's assertions: ``name``, ``passed``, ``detail``) as entries."""
    return tuple(AssertionEntry(item.name, item.passed, item.detail) for item in found)

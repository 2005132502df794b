"""Whether two sets of runs were made by the same agent, configured the same way: their
fingerprints compared field by field (docs/evaluating.md).

A comparison measures one variable: the prompt between ``ooda compare BASE NEW``, the
variant's own keys between two variants of ``--by variant``. Every other field of the
runs' fingerprints — the agent, its version, the model its API reported, its settings,
the environment it was given, each kind of configuration it loaded — must agree over all
the runs compared, or the comparison measures something else as well; :func:`drift`
names each field that does not, with what differs. A variant's keys say which fields it
changes on purpose (:func:`varied_fields`): a variant that sets ``ai_cmd`` runs another
agent, one that sets its material key (``claude: without``) loads other skills. Runs
recorded before fingerprints were cannot be checked: :func:`fingerprint_drift` says so
instead of passing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FINGERPRINT_FIELDS, LOADED_KINDS
from pytest_ooda.stats.variant_comparison import NO_VARIANT

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

    from pytest_ooda._types import FingerprintField
    from pytest_ooda.facts import Fingerprint
    from pytest_ooda.results import RunRecord

__all__ = [
    "Drift",
    "ScenarioDrift",
    "drift",
    "fingerprint_drift",
    "variant_drift",
    "varied_fields",
]

#: What each variant key changes of a fingerprint on purpose. A key not listed is an
#: agent's material key (``claude:``): the configuration it loads. Parameters, fragment
#: swaps, ``without`` and the prompt layout change the prompt alone.
_VARIED_BY: dict[str, tuple[FingerprintField, ...]] = {
    "ai_cmd": ("agent", "version", "model", "settings", *LOADED_KINDS),
    "ai_cmd_alias": ("agent", "version", "model", "settings", *LOADED_KINDS),
    "ai_output": ("settings",),
    "model": ("model", "settings"),
    # Another sandbox gives the agent another HOME and another environment.
    "sandbox": ("settings", "env", *LOADED_KINDS),
    "parameters": (),
    "fragments": (),
    "prompt_format": (),
    "without": (),
}
_MATERIAL: tuple[FingerprintField, ...] = ("settings", *LOADED_KINDS)


def varied_fields(keys: Iterable[str]) -> frozenset[FingerprintField]:
    """The fingerprint fields a variant with ``keys`` changes on purpose."""
    return frozenset(field for key in keys for field in _VARIED_BY.get(key, _MATERIAL))


@dataclass(frozen=True)
class Drift:
    """One field in which the runs compared differ: its values on each side, and for a
    kind of loaded configuration which items differ and how."""

    field: FingerprintField
    base: tuple[str, ...]
    new: tuple[str, ...]
    #: ``greet (project): only in new``, ``review (user): other content``.
    items: tuple[str, ...] = ()

    def describe(self, names: tuple[str, str] = ("base", "new")) -> str:
        if self.items:
            return f"{self.field}: " + "; ".join(self.items)
        first, second = (", ".join(values) or "none" for values in (self.base, self.new))
        return f"{self.field}: {first} ({names[0]}) vs {second} ({names[1]})"


def _value(fingerprint: Fingerprint, field: FingerprintField) -> Any:
    if field in LOADED_KINDS:
        return frozenset((item.name, item.scope, item.sha256) for item in fingerprint.items(field))
    if field == "env":
        return " ".join(fingerprint.env)
    value = getattr(fingerprint, field)
    return "unknown" if value is None else str(value)


def _short(value: str, field: str) -> str:
    """A settings hash by its first 12 characters; anything else as it is."""
    return value[:12] if field == "settings" else value


def _items(base: set[Any], new: set[Any], names: tuple[str, str]) -> tuple[str, ...]:
    """How the loaded items of two sides differ, by name and scope."""
    before = {(name, scope): sha for name, scope, sha in base}
    after = {(name, scope): sha for name, scope, sha in new}
    out = []
    for key in sorted(before.keys() | after.keys()):
        label = f"{key[0]} ({key[1]})"
        if key not in after:
            out.append(f"{label} only in {names[0]}")
        elif key not in before:
            out.append(f"{label} only in {names[1]}")
        elif before[key] != after[key]:
            out.append(f"{label} with other content")
    return tuple(out)


def drift(
    base: Sequence[Fingerprint],
    new: Sequence[Fingerprint],
    *,
    allowed: Collection[str] = (),
    names: tuple[str, str] = ("base", "new"),
) -> tuple[Drift, ...]:
    """Each fingerprint field not in ``allowed`` whose value is not the same for every
    run of ``base`` and ``new`` (runs that mix values on one side count too); ``names``
    call the two sides."""
    found = []
    for field in FINGERPRINT_FIELDS:
        if field in allowed:
            continue
        before = {_value(print_, field) for print_ in base}
        after = {_value(print_, field) for print_ in new}
        if len(before | after) <= 1:
            continue
        if field in LOADED_KINDS:
            items = _items(set().union(*before), set().union(*after), names)
            if not items:  # the same items, spread otherwise over the runs
                items = ("the runs of one side loaded different sets",)
            found.append(Drift(field, (), (), items))
            continue
        found.append(
            Drift(
                field,
                tuple(sorted(_short(value, field) for value in before)),
                tuple(sorted(_short(value, field) for value in after)),
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class ScenarioDrift:
    """A scenario whose compared runs differ in more than the variable under test (or
    cannot be checked): its label, the two sides' names, and what differs."""

    label: str
    names: tuple[str, str]
    drifts: tuple[Drift, ...] = ()
    #: Why the runs cannot be checked (one side recorded no fingerprint).
    unchecked: str | None = None

    def lines(self) -> list[str]:
        head = f"{self.label} ({self.names[0]} vs {self.names[1]})"
        if self.unchecked is not None:
            return [f"{head}: {self.unchecked}"]
        return [f"{head}:", *(f"  {item.describe(self.names)}" for item in self.drifts)]


def _prints(records: Iterable[RunRecord]) -> list[Fingerprint]:
    return [record.fingerprint for record in records if record.fingerprint is not None]


def _pair(
    label: str,
    names: tuple[str, str],
    sides: tuple[Sequence[RunRecord], Sequence[RunRecord]],
    allowed: Collection[str],
) -> ScenarioDrift | None:
    first, second = _prints(sides[0]), _prints(sides[1])
    if not first and not second:
        return None
    if not first or not second:
        lacking = names[0] if not first else names[1]
        why = f"the {lacking} runs recorded no fingerprint (made before pytest-ooda recorded one)"
        return ScenarioDrift(label, names, unchecked=why)
    found = drift(first, second, allowed=allowed, names=names)
    return ScenarioDrift(label, names, found) if found else None


def fingerprint_drift(
    base: Iterable[RunRecord], new: Iterable[RunRecord], *, allowed: Collection[str] = ()
) -> list[ScenarioDrift]:
    """``ooda compare BASE NEW``: each scenario (and variant) on both sides whose runs'
    fingerprints differ in a field not ``allowed`` (the prompt is the variable under
    test; no fingerprint field is), or cannot be checked."""
    groups: dict[str, tuple[list[RunRecord], list[RunRecord]]] = {}
    for side, records in enumerate((base, new)):
        for record in records:
            groups.setdefault(record.label, ([], []))[side].append(record)
    found = []
    for label, sides in sorted(groups.items()):
        if sides[0] and sides[1]:
            drifted = _pair(label, ("base", "new"), sides, allowed)
            if drifted is not None:
                found.append(drifted)
    return found


def variant_drift(
    records: Iterable[RunRecord], *, allowed: Collection[str] = ()
) -> list[ScenarioDrift]:
    """``ooda compare --by variant``: per scenario, each pair of variants whose runs'
    fingerprints differ in a field neither variant changes on purpose (its keys,
    :func:`varied_fields`) nor ``allowed`` names."""
    groups: dict[tuple[str, str], dict[str, list[RunRecord]]] = {}
    keys: dict[str, set[str]] = {}
    for record in records:
        head = record.head
        name = head.variant or NO_VARIANT
        groups.setdefault((head.procedure, head.scenario), {}).setdefault(name, []).append(record)
        keys.setdefault(name, set()).update(head.variant_keys)
    found = []
    for (procedure, scenario), variants in sorted(groups.items()):
        for a, b in combinations(sorted(variants), 2):
            varied = varied_fields(keys[a] | keys[b]) | frozenset(allowed)
            label = f"{procedure}/{scenario}"
            drifted = _pair(label, (a, b), (variants[a], variants[b]), varied)
            if drifted is not None:
                found.append(drifted)
    return found

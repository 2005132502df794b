"""``stats.fingerprints``: the runs compared must agree on every fingerprint field but
the variable under test — each difference named, loaded items by name, scope and
content; a variant's keys say what it changes on purpose; runs without a fingerprint
are said, not passed."""

from __future__ import annotations

from types import MappingProxyType

from sample_records import changed, sample

from pytest_ooda.facts import Fingerprint, LoadedItem
from pytest_ooda.stats import drift, fingerprint_drift, variant_drift, varied_fields

SKILL = LoadedItem("greet", "a" * 64, "project")


def _print(**changes: object) -> Fingerprint:
    base: dict[str, object] = {
        "agent": "claude",
        "version": "2.1.197 (Claude Code)",
        "model": "claude-opus-4-8",
        "settings": "5" * 64,
        "env": ("LANG", "PATH"),
        "loaded": MappingProxyType({"skills": (SKILL,)}),
    }
    return Fingerprint(**{**base, **changes})  # type: ignore[arg-type]


def test_the_same_fingerprints_do_not_drift() -> None:
    assert drift([_print(), _print()], [_print()]) == ()


def test_each_field_that_differs_is_named_with_its_values() -> None:
    found = drift(
        [_print()],
        [_print(version="2.1.332 (Claude Code)", settings="6" * 64, env=("*",))],
    )
    assert [each.describe() for each in found] == [
        "version: 2.1.197 (Claude Code) (base) vs 2.1.332 (Claude Code) (new)",
        "settings: 555555555555 (base) vs 666666666666 (new)",
        "env: LANG PATH (base) vs * (new)",
    ]
    assert [each.field for each in drift([_print()], [_print(model=None)])] == ["model"]


def test_loaded_items_are_told_apart_by_name_scope_and_content() -> None:
    other = LoadedItem("greet", "b" * 64, "project")
    user = LoadedItem("planted", "c" * 64, "user")
    hook = LoadedItem("SessionStart", "d" * 64, "user")
    found = drift(
        [_print()],
        [_print(loaded=MappingProxyType({"skills": (other, user), "hooks": (hook,)}))],
        names=("a", "b"),
    )
    assert [each.describe(("a", "b")) for each in found] == [
        "skills: greet (project) with other content; planted (user) only in b",
        "hooks: SessionStart (user) only in b",
    ]


def test_allowed_fields_and_mixed_sides() -> None:
    newer = _print(version="2.1.332 (Claude Code)")
    assert drift([_print()], [newer], allowed=("version",)) == ()
    # One side that mixes two versions drifts too, even against the same mix.
    [mixed] = drift([_print(), newer], [_print(), newer])
    assert mixed.base == mixed.new == ("2.1.197 (Claude Code)", "2.1.332 (Claude Code)")


def test_what_each_variant_key_changes_on_purpose() -> None:
    assert varied_fields(["parameters", "fragments", "without", "prompt_format"]) == set()
    assert varied_fields(["model"]) == {"model", "settings"}
    assert "version" in varied_fields(["ai_cmd"])
    assert "env" not in varied_fields(["ai_cmd"])
    # An agent's material key: what it loads, never who it is.
    material = varied_fields(["claude"])
    assert {"skills", "hooks", "plugins", "settings"} <= material
    assert not material & {"agent", "version", "model", "env"}
    assert "env" in varied_fields(["sandbox"])


def test_compare_drift_is_per_scenario_and_says_when_a_side_cannot_be_checked() -> None:
    base = [changed(item, fingerprint=_print()) for item in sample(3, 3)]
    new = [changed(item, fingerprint=_print(model="claude-haiku")) for item in sample(3, 3)]
    other = [changed(item, fingerprint=_print()) for item in sample(2, 2, scenario="sad")]
    [found] = fingerprint_drift([*base, *other], [*new, *other])
    assert found.lines() == [
        "build/happy (base vs new):",
        "  model: claude-opus-4-8 (base) vs claude-haiku (new)",
    ]
    [unchecked] = fingerprint_drift(sample(1, 1), new)
    assert unchecked.unchecked is not None
    assert "the base runs recorded no fingerprint" in unchecked.lines()[0]
    assert fingerprint_drift(sample(1, 1), sample(1, 1)) == []


def test_variant_drift_lets_each_pair_differ_in_its_keys_only() -> None:
    lift = [
        changed(item, variant="bare", variant_keys=("claude",),
                fingerprint=_print(loaded=MappingProxyType({})))
        for item in sample(2, 2)
    ]  # fmt: skip
    plain = [changed(item, variant="baseline", fingerprint=_print()) for item in sample(2, 2)]
    assert variant_drift([*lift, *plain]) == []
    layout = [
        changed(item, variant="rooda", variant_keys=("prompt_format",),
                fingerprint=_print(version="9"))
        for item in sample(2, 2)
    ]  # fmt: skip
    [found] = variant_drift([*plain, *layout])
    assert found.names == ("baseline", "rooda")
    assert found.lines()[1] == "  version: 2.1.197 (Claude Code) (baseline) vs 9 (rooda)"
    assert variant_drift([*plain, *layout], allowed=("version",)) == []

"""What drives an agent's own material in a scenario: ``prompt:`` (the exact text the
agent receives, passed through — a slash command with its arguments, or the words that
should make a skill fire), the agent material installed for the run (the agent's own
key: ``claude:`` names plugins or ``.claude/`` directories), ``setup:`` (commands run in
the workspace before the agent starts) and ``triggers:`` (prompts that should fire a
skill or subagent, and near misses that should not). docs/claude-code.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ooda._types import ActivationKind
    from pytest_ooda.reader import Reader
    from pytest_ooda.yamlnodes import Mark

__all__ = [
    "NO_MATERIAL",
    "TriggerCase",
    "Triggers",
    "material_keys",
    "read_material",
    "read_prompt",
    "read_triggers",
]

#: What a scenario writes to install none of the agent's material (``claude: none``).
NO_MATERIAL = "none"
#: The kinds a trigger set may target: what the model chooses by its description.
_TRIGGER_KINDS = ("skill", "subagent")


def material_keys() -> tuple[str, ...]:
    """The scenario keys that name an agent's material, as the agents declare them."""
    from pytest_ooda.agents import MATERIAL_SECTIONS

    return tuple(MATERIAL_SECTIONS)


def read_prompt(check: Reader, value: Any, mark: Mark) -> str:
    text = check.text(value, mark, "prompt")
    if not text.strip():
        raise check.fail("prompt: the text is empty", mark, "write what the agent receives")
    return text


def read_material(check: Reader, key: str, value: Any, mark: Mark) -> tuple[str, ...]:
    """``claude: DIR``, a list of directories (relative to the scenario file), or
    ``none``: the empty tuple."""
    if value == NO_MATERIAL:
        return ()
    paths = check.texts(value, mark, key)
    for index, path in enumerate(paths):
        if not path.strip():
            raise check.fail(f"{key}[{index}]: the directory is empty", mark)
    return tuple(path.strip() for path in paths)


@dataclass(frozen=True)
class TriggerCase:
    """One prompt of a trigger set: its id (``should-2``), the text, and whether the
    target should fire."""

    id: str
    prompt: str
    should_fire: bool


@dataclass(frozen=True)
class Triggers:
    """``triggers:``: prompts that should fire the target skill or subagent
    (``should``) and near misses that should not (``should_not``)."""

    kind: ActivationKind
    name: str
    should: tuple[str, ...] = ()
    should_not: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)

    @property
    def target(self) -> str:
        """``skill greet``."""
        return f"{self.kind} {self.name}"

    def cases(self) -> tuple[TriggerCase, ...]:
        return tuple(
            TriggerCase(f"should-{index}", text, True) for index, text in enumerate(self.should, 1)
        ) + tuple(
            TriggerCase(f"should-not-{index}", text, False)
            for index, text in enumerate(self.should_not, 1)
        )

    def case(self, id: str) -> TriggerCase | None:
        return next((case for case in self.cases() if case.id == id), None)

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.kind: self.name}
        if self.should:
            out["should"] = list(self.should)
        if self.should_not:
            out["should_not"] = list(self.should_not)
        return out


def read_triggers(check: Reader, value: Any, mark: Mark) -> Triggers:
    block = check.mapping(value, mark, "triggers")
    check.keys(block, (*_TRIGGER_KINDS, "should", "should_not"), "triggers")
    targets = [kind for kind in _TRIGGER_KINDS if block.get(kind) is not None]
    if len(targets) != 1:
        raise check.fail(
            "triggers: name the one skill or subagent the prompts are about",
            block.mark,
            "triggers: {skill: greet, should: [...], should_not: [...]}",
        )
    kind = targets[0]
    name = check.text(*check.get(block, kind), f"triggers.{kind}").strip()
    if not name:
        raise check.fail(f"triggers.{kind}: the name is empty", check.get(block, kind)[1])
    should = check.optional(block, "should", "triggers", check.texts, ())
    should_not = check.optional(block, "should_not", "triggers", check.texts, ())
    if not should and not should_not:
        raise check.fail(
            "triggers: give prompts that should fire it (should) or should not (should_not)",
            block.mark,
        )
    chosen: ActivationKind = "skill" if kind == "skill" else "subagent"
    return Triggers(chosen, name, should, should_not, line=block.mark.line)

from __future__ import annotations

import pytest

from pytest_ooda.agents import Activation
from pytest_ooda.backends import ToolCall
from pytest_ooda.errors import ScenarioError
from pytest_ooda.reader import Reader
from pytest_ooda.scenario.fired import (
    ActivationExpect,
    CallPattern,
    TrajectoryExpect,
    read_activation,
    read_trajectory,
)
from pytest_ooda.yamlload import load_yaml_text
from pytest_ooda.yamlnodes import Mark

FIRED = [
    Activation("command", "hello"),
    Activation("skill", "myplug:greet"),
    Activation("subagent", "reviewer"),
    Activation("hook", "PreToolUse:Write"),
]


def _read(text: str, reader: str = "activation") -> tuple[object, ...]:
    document = load_yaml_text(text, file="s.yml", error=ScenarioError)
    check = Reader("s.yml", ScenarioError)
    read = read_activation if reader == "activation" else read_trajectory
    return read(check, document["x"], Mark(1, 1))


def test_activation_assertions_are_named_and_say_what_fired() -> None:
    results = [
        ActivationExpect("skill", "greet").check(FIRED),
        ActivationExpect("hook", "PreToolUse").check(FIRED),
        ActivationExpect("subagent", "fp-analyst").check(FIRED),
        ActivationExpect("command", "hello", fired=False).check(FIRED),
        ActivationExpect("mcp_tool", "github", fired=False).check(FIRED),
    ]
    assert [(r.name, r.passed) for r in results] == [
        ("skill greet fired", True),
        ("hook PreToolUse fired", True),
        ("subagent fp-analyst fired", False),
        ("command hello not_fired", False),
        ("mcp_tool github not_fired", True),
    ]
    assert results[2].detail == (
        "subagent fp-analyst did not fire (what fired: command:hello, skill:myplug:greet, "
        "subagent:reviewer, hook:PreToolUse:Write)"
    )
    assert results[3].detail == "command hello fired 1 time(s), expected never"


def test_reading_expect_activation() -> None:
    found = _read(
        "x:\n  skill: greet\n  subagent: [a, b]\n  command: {commit: fired, push: not_fired}\n"
    )
    assert [(e.kind, e.name, e.fired, e.line) for e in found] == [  # type: ignore[attr-defined]
        ("skill", "greet", True, 2),
        ("subagent", "a", True, 3),
        ("subagent", "b", True, 3),
        ("command", "commit", True, 4),
        ("command", "push", False, 4),
    ]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("x:\n  skil: greet\n", "expect.activation: unknown key 'skil'", 2),
        (
            "x:\n  skill: {greet: yes}\n",
            "expect.activation.skill.greet: expected one of fired, not_fired",
            2,
        ),
        ("x:\n  skill: ''\n", "expect.activation.skill[0]: a name cannot be empty", 2),
        ("x: {}\n", "expect.activation: name at least one", 1),
        ("x: [skill]\n", "expect.activation: expected a mapping", 1),
    ],
)
def test_expect_activation_mistakes_are_located(text: str, message: str, line: int) -> None:
    with pytest.raises(
        ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")
    ) as caught:
        _read(text)
    assert caught.value.line == line


def _calls() -> list[ToolCall]:
    return [
        ToolCall("Skill", "greet", arguments={"skill": "greet", "args": "Bob"}),
        ToolCall("Bash", "pytest -q", arguments={"command": "pytest -q"}),
        ToolCall("Write", "/w/GREETING.md", arguments={"file_path": "/w/GREETING.md"}),
        ToolCall("Bash", "git add -A", arguments={"command": "git add -A"}),
    ]


def test_ordered_allows_calls_between_but_not_out_of_order() -> None:
    skill = CallPattern("Skill", (("skill", "^greet$"),))
    write = CallPattern("Write", (("file_path", r"GREETING\.md$"),))
    assert TrajectoryExpect((skill, write)).check(_calls()).passed
    result = TrajectoryExpect((write, skill)).check(_calls())
    assert not result.passed
    assert result.detail == (
        "no Skill(skill~^greet$) in order (calls made: Skill, Bash, Write, Bash)"
    )
    assert result.name == (
        r"trajectory ordered: Write(file_path~GREETING\.md$) → Skill(skill~^greet$)"
    )


def test_any_order_gives_each_pattern_a_call_of_its_own() -> None:
    bash = CallPattern("Bash")
    git = CallPattern("Bash", (("command", "^git"),))
    assert TrajectoryExpect((git, bash), "any_order").check(_calls()).passed
    three = TrajectoryExpect((bash, bash, bash), "any_order").check(_calls())
    assert not three.passed
    assert three.detail is not None
    assert three.detail.startswith("1 of the listed calls not made")


def test_subset_refuses_calls_not_listed() -> None:
    allowed = (CallPattern("Skill"), CallPattern("Bash"), CallPattern("Write"))
    assert TrajectoryExpect(allowed, "subset").check(_calls()).passed
    result = TrajectoryExpect(allowed[:2], "subset").check(_calls())
    assert result.detail == "calls not listed: Write: /w/GREETING.md"


def test_a_recorded_call_without_arguments_matches_its_summary() -> None:
    recorded = ToolCall("Bash", "pytest -q")
    assert CallPattern("Bash", (("command", "pytest"),)).matches(recorded)
    assert not CallPattern("Bash", (("command", "npm"),)).matches(recorded)
    assert not CallPattern("Write", (("file_path", "x"),)).matches(
        ToolCall("Write", "x", arguments={"content": "x"})
    )
    assert CallPattern("*", (("n", "^3$"),)).matches(ToolCall("T", "", arguments={"n": 3}))


def test_reading_expect_trajectory() -> None:
    (one,) = _read(
        "x:\n  match: any_order\n  calls:\n    - Write\n    - Bash: {command: pytest}\n"
        "    - Skill:\n",
        "trajectory",
    )
    assert one == TrajectoryExpect(
        (CallPattern("Write"), CallPattern("Bash", (("command", "pytest"),)), CallPattern("Skill")),
        "any_order",
    )
    assert one.to_yaml() == {  # type: ignore[attr-defined]
        "match": "any_order",
        "calls": ["Write", {"Bash": {"command": "pytest"}}, "Skill"],
    }
    two = _read("x:\n  - calls: [Write]\n  - {match: subset, calls: [Write, Bash]}\n", "trajectory")
    assert [t.match for t in two] == ["ordered", "subset"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (
            "x:\n  match: sorted\n  calls: [Write]\n",
            "expected one of ordered, any_order, subset",
            2,
        ),
        ("x:\n  match: ordered\n", "missing 'calls'", 2),
        ("x:\n  calls: []\n", "list at least one call", 2),
        ("x:\n  calls:\n    - {Bash: {command: '('}}\n", "is not a regular expression", 3),
        ("x:\n  calls:\n    - {Bash: x, Write: y}\n", "expected one tool", 3),
    ],
)
def test_expect_trajectory_mistakes_are_located(text: str, message: str, line: int) -> None:
    with pytest.raises(ScenarioError, match=message) as caught:
        _read(text, "trajectory")
    assert caught.value.line == line

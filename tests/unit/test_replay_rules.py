"""``replay_rules``: the built-in and the project's ``replay_normalise`` rules, each in
its scope; reading them with located mistakes; what a divergence report says of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import load_config_file
from pytest_ooda.errors import ConfigError, ScenarioError
from pytest_ooda.replay_rules import BUILTIN_RULES, ReplayRule, apply_rules, near_misses
from pytest_ooda.scenario import load_scenario_text

if TYPE_CHECKING:
    from pathlib import Path

LS = (
    "total 16\n"
    "drwxr-xr-x 3 root root 4096 Dec  7 03:22 .\n"
    "-rw-r--r-- 1 root root   12 Nov 27  2025 notes.md\n"
)


def _body(tool_text: str, prompt: str) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": prompt}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": tool_text}],
            },
        ],
        "input": [{"type": "function_call_output", "output": "ran in 0.42s"}],
    }


def test_builtin_rules_absorb_ls_dates_durations_and_temporary_names_in_tool_results() -> None:
    body = apply_rules(
        _body(LS + "1 passed in 0.03s\n/tmp/tmpk3j_x9ab\n", "Run it in 5s"), BUILTIN_RULES
    )
    result = body["messages"][1]["content"][0]["content"]  # type: ignore[index]
    assert result == (
        "total 16\n"
        "drwxr-xr-x 3 root root 4096 <ooda:ls-date> .\n"
        "-rw-r--r-- 1 root root   12 <ooda:ls-date> notes.md\n"
        "1 passed in <ooda:duration>\n/tmp/<ooda:tmp-name>\n"
    )
    # Durations are a tool result's only: the prompt keeps its "5s".
    assert body["messages"][0]["content"][0]["text"] == "Run it in 5s"  # type: ignore[index]
    assert body["input"][0]["output"] == "ran in <ooda:duration>"  # type: ignore[index]


def test_a_tool_schema_whose_type_is_a_list_is_walked_too() -> None:
    # Qwen Code declares its tools' parameters with "type": ["string", "null"].
    schema = {"type": "object", "properties": {"path": {"type": ["string", "null"]}}}
    tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    body = apply_rules({"tools": [tool], "messages": []}, BUILTIN_RULES)
    assert body == {"tools": [tool], "messages": []}


def test_a_chat_completions_tool_message_is_a_tool_result() -> None:
    rule = ReplayRule(r"PGID: \d+", "PGID: <n>", "tool_results")
    messages = [
        {"role": "user", "content": "PGID: 7"},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "PGID: 7"}]},
    ]
    body = apply_rules({"messages": messages}, [rule])
    assert body["messages"][0]["content"] == "PGID: 7"  # type: ignore[index]
    assert body["messages"][1]["content"][0]["text"] == "PGID: <n>"  # type: ignore[index]


@pytest.mark.parametrize(
    ("scope", "in_result", "in_prompt"),
    [("tool_results", "v<n>", "v7"), ("requests", "v7", "v<n>"), ("both", "v<n>", "v<n>")],
)
def test_a_rule_rewrites_only_its_scope(scope: str, in_result: str, in_prompt: str) -> None:
    rule = ReplayRule(r"v\d", "v<n>", scope)  # type: ignore[arg-type]
    body = apply_rules(_body("v7", "v7"), [rule])
    assert body["messages"][1]["content"][0]["content"] == in_result  # type: ignore[index]
    assert body["messages"][0]["content"][0]["text"] == in_prompt  # type: ignore[index]


def test_near_misses_name_the_rule_that_would_absorb_a_change() -> None:
    scoped = ReplayRule(r"build \d+", "build <n>", "requests", "ooda-config.yml:3")
    assert near_misses("build 12", "build 13", [scoped], tool_result=True) == [
        "rule ooda-config.yml:3 (in: requests) would absorb it, but the change is in a tool "
        "result: give it `in: both`"
    ]
    strict = ReplayRule(r"\d+ files", "<n> files", "both", "s.yml:4")
    assert near_misses("3 files", "1 file", [strict], tool_result=True) == [
        "rule s.yml:4 nearly does: its pattern '\\\\d+ files' matches the recorded text only"
    ]
    assert near_misses("at 09:14:03", "at 09:15:47", [], tool_result=True)[0].startswith(
        "the change is a clock time: a rule would absorb it"
    )
    assert near_misses("hello", "goodbye", [], tool_result=True) == []


def test_rules_are_read_from_the_config_and_the_scenario(tmp_path: Path) -> None:
    config_file = tmp_path / "ooda-config.yml"
    config_file.write_text(
        "replay_normalise:\n"
        "  - {pattern: 'build \\d+', replacement: 'build <n>', in: tool_results}\n"
    )
    [rule] = load_config_file(config_file).replay_normalise
    assert (rule.pattern, rule.replacement, rule.scope) == (
        r"build \d+",
        "build <n>",
        "tool_results",
    )
    assert rule.origin == f"{config_file}:2"
    scenario = load_scenario_text("procedure: b\nreplay_normalise: [{pattern: x+}]\n")
    assert [(r.pattern, r.replacement, r.scope) for r in scenario.replay_normalise] == [
        ("x+", "", "both")
    ]
    assert scenario.to_yaml()["replay_normalise"] == [
        {"pattern": "x+", "replacement": "", "in": "both"}
    ]


@pytest.mark.parametrize(
    ("rules", "where", "message"),
    [
        ("[{replacement: x}]", "2:20", "replay_normalise[0]: missing 'pattern'"),
        ("[{pattern: '('}]", "2:30", "replay_normalise[0].pattern: '(' is not a regular"),
        ("[{pattern: a, in: tool_result}]", "2:37", "replay_normalise[0].in: expected one of"),
        ("[{pattern: a, replacement: '\\1'}]", "2:46", "does not fit the pattern"),
        ("[{pattern: a, with: b}]", "2:33", "replay_normalise[0]: unknown key 'with'"),
    ],
)
def test_a_bad_rule_is_a_located_error(rules: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(f"procedure: b\nreplay_normalise: {rules}\n", path="s.yml")
    found = [str(each).splitlines()[0] for each in info.value.every]
    assert any(line.startswith(f"s.yml:{where}") and message in line for line in found), found


def test_a_bad_rule_in_the_config_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "ooda-config.yml"
    path.write_text("replay_normalise: {pattern: a}\n")
    with pytest.raises(ConfigError, match="replay_normalise: expected a list"):
        load_config_file(path)

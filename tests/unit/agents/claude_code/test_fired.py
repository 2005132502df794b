"""Activations read as Claude Code 2.1.197 reports them; tests/agents holds them to the
real CLI's stream."""

from __future__ import annotations

from pytest_ooda.agents import Activation
from pytest_ooda.agents.claude_code.fired import (
    call_activations,
    hook_activation,
    prompt_activations,
)
from pytest_ooda.backends import ToolCall


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, "", arguments=arguments or None)


def test_tool_calls_fire_skills_subagents_and_mcp_tools() -> None:
    calls = [
        _call("Skill", skill="greet", args="Bob"),
        _call("Bash", command="ls"),
        _call("Agent", description="d", prompt="p", subagent_type="reviewer"),
        _call("Task", description="d", prompt="p"),
        _call("mcp__github__list_prs", repo="x"),
        _call("Skill"),  # no skill named: nothing fired
    ]
    assert [a.label for a in call_activations(calls)] == [
        "skill:greet",
        "subagent:reviewer",
        "subagent:general-purpose",
        "mcp_tool:mcp__github__list_prs",
    ]


def test_hook_events() -> None:
    event = {
        "type": "system",
        "subtype": "hook_response",
        "hook_name": "PreToolUse:Write",
        "hook_event": "PreToolUse",
        "exit_code": 2,
    }
    assert hook_activation(event) == Activation("hook", "PreToolUse:Write")
    assert hook_activation({**event, "subtype": "hook_started"}) is None
    assert hook_activation({"type": "system", "subtype": "hook_response"}) is None


def test_the_prompt_s_slash_command() -> None:
    assert prompt_activations("/hello Alice", "Done") == [Activation("command", "hello")]
    assert prompt_activations("  /kiro:spec-init a todo app\nmore", "") == [
        Activation("command", "kiro:spec-init")
    ]
    assert prompt_activations("/greet Bob", "ok", skills={"greet"}) == [
        Activation("command", "greet"),
        Activation("skill", "greet"),
    ]
    assert prompt_activations("/nope x", "Unknown command: /nope") == []
    assert prompt_activations("please greet Bob", "") == []
    assert prompt_activations("/usr/bin/env python", "") == []
    assert prompt_activations("/", "") == []


def test_activation_names_as_scenarios_write_them() -> None:
    assert Activation("skill", "myplug:greet").is_named("greet")
    assert Activation("skill", "myplug:greet").is_named("myplug:greet")
    assert not Activation("skill", "greeting").is_named("greet")
    assert Activation("hook", "PreToolUse:Write").is_named("PreToolUse")
    assert not Activation("hook", "PreToolUse:Write").is_named("Write")
    tool = Activation("mcp_tool", "mcp__github__list_prs")
    assert tool.is_named("github__list_prs")
    assert tool.is_named("github")
    assert not tool.is_named("gitlab")
    assert Activation.parse("skill:a:b") == Activation("skill", "a:b")
    assert Activation.parse("thing:x") is None
    assert Activation.parse("skill:") is None

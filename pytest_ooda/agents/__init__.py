"""Agent CLIs, each one module or subpackage: what pytest-ooda knows about an agent lives
there, and code outside this package asks it rather than comparing an agent's name.

The :class:`Agent` interface and the registry of the built-in agents and the
``pytest_ooda.agents`` entry-point group; what an agent reports (:class:`AgentReport`,
:class:`ToolCall`, :class:`Usage`), what its failures mean (:class:`Fault`), its output
formats (:class:`OutputFormat`, read by an :class:`AgentStream`) and model APIs
(:class:`ModelApi`); what an agent loads and its version, for a run's fingerprint
(:class:`Configuration`, :func:`agent_version`); and Claude Code's material
(``claude_code/``) — its commands, skills, subagents, hooks and plugins, read,
checked, linted and rendered as Claude Code 2.1.197 reads them, and what fired in a
run (docs/claude-code.md). ``MATERIAL_SECTIONS`` names the config and scenario key of
each agent's material and its reader. See docs/agents.md.
"""

from __future__ import annotations

from pytest_ooda.agents.activation import Activation
from pytest_ooda.agents.base import Agent, ConfigSource, ModelApi, OutputFormat
from pytest_ooda.agents.claude_code import (
    FiredWatch,
    Hook,
    Item,
    Material,
    Problem,
    call_activations,
    check_material,
    expand_arguments,
    hook_activation,
    invocation_text,
    lint_material,
    listing_line,
    load_material,
    prompt_activations,
    read_hooks,
    render_snapshot,
    split_arguments,
)
from pytest_ooda.agents.faults import Evidence, Fault, infra_reason, kind_of_status, message_fault
from pytest_ooda.agents.fingerprint import Configuration, from_sources
from pytest_ooda.agents.material import (
    INI_MATERIAL_SECTION,
    MATERIAL_HELP,
    MATERIAL_SECTIONS,
    WORKSPACE_MATERIAL,
    agent_argv,
    install,
    install_argv,
    snapshot_name,
)
from pytest_ooda.agents.registry import (
    AGENT_ENTRY_POINT_GROUP,
    DEFAULT_AGENT,
    agent_for,
    agent_names,
    all_agents,
    builtin_aliases,
    infer_format,
    load_agent,
    model_apis,
    output_format,
    output_formats,
    shell_tools,
    tool_formats,
)
from pytest_ooda.agents.report import (
    TOOL_TEXT_LIMIT,
    AgentReport,
    ToolCall,
    Usage,
    tool_arguments,
    tool_text,
)
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, AgentStream, as_int, as_mapping
from pytest_ooda.agents.text import (
    ERROR_WIDTH,
    RUN_TOOL_TEXT,
    SUMMARY_WIDTH,
    ToolTextBudget,
    head_lines,
    input_text,
    one_line,
    shown_call,
    shown_lines,
    summarize,
)
from pytest_ooda.agents.version import agent_version

__all__ = [
    "AGENT_ENTRY_POINT_GROUP",
    "DEFAULT_AGENT",
    "DEFAULT_MAX_LINE",
    "ERROR_WIDTH",
    "INI_MATERIAL_SECTION",
    "MATERIAL_HELP",
    "MATERIAL_SECTIONS",
    "RUN_TOOL_TEXT",
    "SUMMARY_WIDTH",
    "TOOL_TEXT_LIMIT",
    "WORKSPACE_MATERIAL",
    "Activation",
    "Agent",
    "AgentReport",
    "AgentStream",
    "ConfigSource",
    "Configuration",
    "Evidence",
    "Fault",
    "FiredWatch",
    "Hook",
    "Item",
    "Material",
    "ModelApi",
    "OutputFormat",
    "Problem",
    "ToolCall",
    "ToolTextBudget",
    "Usage",
    "agent_argv",
    "agent_for",
    "agent_names",
    "agent_version",
    "all_agents",
    "as_int",
    "as_mapping",
    "builtin_aliases",
    "call_activations",
    "check_material",
    "expand_arguments",
    "from_sources",
    "head_lines",
    "hook_activation",
    "infer_format",
    "infra_reason",
    "input_text",
    "install",
    "install_argv",
    "invocation_text",
    "kind_of_status",
    "lint_material",
    "listing_line",
    "load_agent",
    "load_material",
    "message_fault",
    "model_apis",
    "one_line",
    "output_format",
    "output_formats",
    "prompt_activations",
    "read_hooks",
    "render_snapshot",
    "shell_tools",
    "shown_call",
    "shown_lines",
    "snapshot_name",
    "split_arguments",
    "summarize",
    "tool_arguments",
    "tool_formats",
    "tool_text",
]

"""Agent CLIs, each one subpackage: what pytest-ooda knows about an agent lives there,
and code outside this package asks it rather than comparing an agent's name.

So far: Claude Code's material (``claude_code/``) — its commands, skills, subagents,
hooks and plugins, read, checked, linted and rendered as Claude Code 2.1.197 reads
them (docs/claude-code.md). ``MATERIAL_SECTIONS`` names the config and scenario key of
each agent's material and its reader.
"""

from __future__ import annotations

from pytest_ooda.agents.activation import Activation
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
from pytest_ooda.agents.material import MATERIAL_SECTIONS, agent_argv, install, install_argv

__all__ = [
    "MATERIAL_SECTIONS",
    "Activation",
    "FiredWatch",
    "Hook",
    "Item",
    "Material",
    "Problem",
    "agent_argv",
    "call_activations",
    "check_material",
    "expand_arguments",
    "hook_activation",
    "install",
    "install_argv",
    "invocation_text",
    "lint_material",
    "listing_line",
    "load_material",
    "prompt_activations",
    "read_hooks",
    "render_snapshot",
    "split_arguments",
]

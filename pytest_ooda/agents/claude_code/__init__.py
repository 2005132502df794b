"""Claude Code: what pytest-ooda knows about its commands, skills, subagents, hooks and
plugins — where it finds them, how it names, lists and renders them, what it silently
misreads, and what in its stream-json output says one of them fired; and the agent
itself (``agent``: :class:`ClaudeAgent`, its json and stream-json readers, what its
messages mean, its root refusal, its credentials and API). Measured against
Claude Code 2.1.197 (docs/claude-code.md)."""

from __future__ import annotations

from pytest_ooda.agents.claude_code.agent import (
    ClaudeAgent,
    ClaudeStream,
    api_error_fault,
    parse_claude_json,
)
from pytest_ooda.agents.claude_code.checks import check_item, check_material
from pytest_ooda.agents.claude_code.fired import (
    FiredWatch,
    call_activations,
    hook_activation,
    prompt_activations,
)
from pytest_ooda.agents.claude_code.frontmatter import Problem
from pytest_ooda.agents.claude_code.hooks import Hook, read_hooks
from pytest_ooda.agents.claude_code.install import (
    install_material,
    material_argv,
    with_material_argv,
)
from pytest_ooda.agents.claude_code.lint import lint_material
from pytest_ooda.agents.claude_code.material import Item, Material, load_material
from pytest_ooda.agents.claude_code.render import (
    expand_arguments,
    invocation_text,
    listing_line,
    render_snapshot,
    split_arguments,
)

__all__ = [
    "ClaudeAgent",
    "ClaudeStream",
    "FiredWatch",
    "Hook",
    "Item",
    "Material",
    "Problem",
    "api_error_fault",
    "call_activations",
    "check_item",
    "check_material",
    "expand_arguments",
    "hook_activation",
    "install_material",
    "invocation_text",
    "lint_material",
    "listing_line",
    "load_material",
    "material_argv",
    "parse_claude_json",
    "prompt_activations",
    "read_hooks",
    "render_snapshot",
    "split_arguments",
    "with_material_argv",
]

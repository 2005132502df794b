"""Claude Code: what pytest-ooda knows about its commands, skills, subagents, hooks and
plugins — where it finds them, how it names, lists and renders them, what it silently
misreads, and what in its stream-json output says one of them fired. Measured against
Claude Code 2.1.197 (docs/claude-code.md)."""

from __future__ import annotations

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
    "FiredWatch",
    "Hook",
    "Item",
    "Material",
    "Problem",
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
    "prompt_activations",
    "read_hooks",
    "render_snapshot",
    "split_arguments",
    "with_material_argv",
]

"""Which agent's material a config or scenario names, by key: the ``claude:`` section
holds Claude Code plugins and ``.claude/`` directories. The rest of the code reads the
key and its reader from here, never an agent's name."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code import (
    install_material,
    load_material,
    material_argv,
    with_material_argv,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from pytest_ooda.agents.claude_code import Material

__all__ = [
    "INI_MATERIAL_SECTION",
    "MATERIAL_HELP",
    "MATERIAL_SECTIONS",
    "WORKSPACE_MATERIAL",
    "agent_argv",
    "install",
    "install_argv",
    "snapshot_name",
]

#: The key of each agent's material (in a config's top level, a scenario, a variant)
#: and the function that reads one directory of it.
MATERIAL_SECTIONS: Mapping[str, Callable[[Path], Material]] = MappingProxyType(
    {"claude": load_material}
)
#: The ``ooda help`` topic that explains each section's material.
MATERIAL_HELP: Mapping[str, str] = MappingProxyType({"claude": "claude-code"})
#: Where a workspace holds each section's material of its own: the agent loads the
#: working directory's ``.claude/`` as the project's, so a scenario's ``workspace:``
#: holding one is material the run uses (part of the prompt's identity) though nothing
#: installs it.
WORKSPACE_MATERIAL: Mapping[str, str] = MappingProxyType({"claude": ".claude"})
#: The section whose directories the ini file names (``ooda_claude_dirs``).
INI_MATERIAL_SECTION = "claude"


def install(section: str, path: Path, workspace: Path) -> None:
    """Install the material of ``section`` at ``path`` into a run's ``workspace``."""
    install_material(MATERIAL_SECTIONS[section](path), workspace)


def install_argv(section: str, path: Path) -> tuple[str, ...]:
    """The words the agent's command line needs once that material is installed."""
    return material_argv(MATERIAL_SECTIONS[section](path))


def agent_argv(argv: Sequence[str], extra: Sequence[str]) -> tuple[str, ...]:
    """``argv`` with what installed material needs, when ``argv`` runs the agent whose
    material it is (any other command is left as it is)."""
    return with_material_argv(argv, extra)


def snapshot_name(key: str) -> str:
    """The file name (without ``.md``) of the snapshot of a material item's key:
    ``command/greeter:hello`` is ``command.greeter~hello`` (no ``/`` or ``:`` in a file
    name, and the key can be read back from it)."""
    return key.replace("/", ".", 1).replace(":", "~")

"""Which agent's material a config or scenario names, by key: the ``claude:`` section
holds Claude Code plugins and ``.claude/`` directories. The rest of the code reads the
key and its reader from here, never an agent's name."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code import load_material

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pytest_ooda.agents.claude_code import Material

__all__ = ["MATERIAL_SECTIONS"]

#: The key of each agent's material (in a config's top level, a scenario, a variant)
#: and the function that reads one directory of it.
MATERIAL_SECTIONS: Mapping[str, Callable[[Path], Material]] = MappingProxyType(
    {"claude": load_material}
)

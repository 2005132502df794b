"""Fixtures of the config tests: a fake built-in tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda import fragments

from .helpers import write

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def builtin_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake built-in tree with two procedures, so tests do not depend on shipped content."""
    root = tmp_path / "builtin"
    for phase, names in {
        "observe": ["read_agents_md.md", "read_specs.md"],
        "orient": ["search_codebase.md"],
        "decide": ["pick_task.md"],
        "act": ["emit_success.md", "commit_changes.md"],
    }.items():
        for name in names:
            write(root / "fragments" / phase / name, f"Built-in {phase}/{name}.\n")
    write(
        root / "procedures" / "builtin.yml",
        """
        procedures:
          build:
            display: "Build"
            summary: "Implement a task"
            description: "Picks a task and implements it"
            observe:
              - path: "builtin:fragments/observe/read_agents_md.md"
              - path: "builtin:fragments/observe/read_specs.md"
            orient:
              - path: "builtin:fragments/orient/search_codebase.md"
            decide:
              - path: "builtin:fragments/decide/pick_task.md"
            act:
              - path: "builtin:fragments/act/commit_changes.md"
              - path: "builtin:fragments/act/emit_success.md"
          audit-spec:
            display: "Audit Specifications"
            observe:
              - path: "builtin:fragments/observe/read_specs.md"
            act:
              - path: "builtin:fragments/act/emit_success.md"
        """,
    )
    monkeypatch.setattr(fragments, "builtin_root", lambda: root)
    return root

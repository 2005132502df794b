"""Fixtures of the scenario tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import Config, load_config

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def config(tmp_path: Path) -> Config:
    fragment = tmp_path / "act.md"
    fragment.write_text("Do the work.\nCarefully.")
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        "procedures:\n  build:\n    observe:\n      - path: observe.md\n"
        "    act:\n      - path: act.md\n"
    )
    (tmp_path / "observe.md").write_text("Look around.")
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)

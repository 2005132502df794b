"""Fixtures shared by the ``ooda list``/``ooda show``/main-command tests (test_app.py,
test_list.py, test_show.py). test_run.py and others define their own ``workspace``."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "look.md").write_text("Look at the repository.\n")
    (tmp_path / "ooda-config.yml").write_text(
        textwrap.dedent(
            """
            loop:
              default_max_iterations: 3
            procedures:
              zeta:
                display: "Zeta Proc"
                summary: "Does zeta things"
                observe:
                  - path: prompts/look.md
                act:
                  - content: "Emit the signal."
              alpha:
                summary: "First"
                act:
                  - content: "Alpha act."
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    for var in ("OODA_CONFIG_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path

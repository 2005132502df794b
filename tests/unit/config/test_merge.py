"""The field-by-field merge of the tiers (config/merge.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.config import (
    Provenance,
    load_builtin_config,
    load_config,
)

from .helpers import write

if TYPE_CHECKING:
    from pathlib import Path


def test_field_by_field_merge_keeps_builtin_phases(builtin_root: Path, tmp_path: Path) -> None:
    write(tmp_path / "ooda-config.yml", "procedures:\n  build:\n    default_max_iterations: 9\n")
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    merged = cfg.procedure("build")
    builtin = load_builtin_config().procedure("build")
    assert merged.default_max_iterations == 9
    assert merged.observe == builtin.observe
    assert merged.display == "Build"
    assert set(cfg.procedures) == {"build", "audit-spec"}
    assert cfg.provenance["procedures.build.default_max_iterations"] == Provenance(
        "workspace", tmp_path / "ooda-config.yml", 3
    )
    assert cfg.provenance["procedures.build.observe"].tier == "builtin"
    assert merged.location.file == tmp_path / "ooda-config.yml"


def test_workspace_phase_replaces_builtin_phase(builtin_root: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "ooda-config.yml",
        "procedures:\n  build:\n    observe:\n      - content: mine\n",
    )
    cfg = load_config(cwd=tmp_path, env={}, global_config=False)
    assert [a.content for a in cfg.procedure("build").observe] == ["mine"]
    assert len(cfg.procedure("build").act) == 2

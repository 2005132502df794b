"""Shared helpers of the config tests: write a file, load a config with no other tier."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import (
    Config,
    load_config,
)
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(path: Path, **kwargs: object) -> Config:
    options: dict[str, object] = {"env": {}, "builtin": False, "global_config": False}
    options.update(kwargs)
    return load_config(path, **options)  # type: ignore[arg-type]


def load_or_use(path: Path, **kwargs: object) -> Config:
    """Load, then ask for every broken procedure: its error is raised only when used."""
    config = load(path, **kwargs)
    for name in config.broken:
        config.procedure(name)
    return config


def raises_config(path: Path, **kwargs: object) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_or_use(path, **kwargs)
    return info.value


def _config(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_config(path, env=env or {}, builtin=False, global_config=False)


def _with(tmp_path: Path, loop: str = "", proc: str = "", **env: str) -> Config:
    text = "loop:\n" + (loop or "  log_level: info\n")
    text += "procedures:\n  p:\n    act:\n      - content: x\n" + proc
    return _config(tmp_path, text, env)

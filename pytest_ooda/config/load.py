"""Loading the configuration: every tier, one file, or the packaged built-ins."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.config.merge import merge_layers
from pytest_ooda.config.parse import Layer, builtin_layer, parse_file
from pytest_ooda.config.schema import CONFIG_FILENAME, ROODA_CONFIG_FILENAME
from pytest_ooda.config.tiers import (
    env_layer,
    existing_config_file,
    global_config_path,
    override_layer,
)
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda.config.model import Config


def load_config(
    config_file: str | Path | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    builtin: bool = True,
    global_config: bool = True,
) -> Config:
    """Load and merge every tier.

    ``config_file`` replaces the workspace ``./ooda-config.yml`` (and must exist);
    without it ``./rooda-config.yml`` is used when there is no ``./ooda-config.yml``.
    ``cwd`` is where the workspace file is looked for (default: the working directory);
    ``env`` replaces ``os.environ``; ``overrides`` is the CLI tier for ``loop`` keys.
    """
    return _load_config(config_file, cwd, env, overrides, builtin, global_config)


def _load_config(
    config_file: str | Path | None,
    cwd: Path | None,
    env: Mapping[str, str] | None,
    overrides: Mapping[str, Any] | None,
    builtin: bool,
    global_config: bool,
) -> Config:
    environ = os.environ if env is None else env
    base = Path.cwd() if cwd is None else Path(cwd)
    layers: list[Layer] = []
    if builtin:
        builtins = builtin_layer()
        if builtins is not None:
            layers.append(builtins)
    if global_config:
        global_path = global_config_path(environ)
        if global_path is not None and existing_config_file(global_path, "global config"):
            layers.append(parse_file(global_path.absolute(), "global"))
    if config_file is not None:
        explicit = check_config_file(config_file, cwd=base)
        layers.append(parse_file(explicit.absolute(), "workspace"))
    else:
        workspace = workspace_config_file(base)
        if workspace is not None:
            layers.append(parse_file(workspace.absolute(), "workspace"))
    return merge_layers(layers, env_layer(environ), override_layer(overrides or {}))


def workspace_config_file(base: Path) -> Path | None:
    """``base/ooda-config.yml``, else rooda's ``base/rooda-config.yml``, else ``None``."""
    for name in (CONFIG_FILENAME, ROODA_CONFIG_FILENAME):
        found = existing_config_file(base / name, "workspace config")
        if found is not None:
            return found
    return None


def check_config_file(config_file: str | Path, *, cwd: Path | None = None) -> Path:
    """The path of an explicitly named config file (``--config``), which must be a file.

    ``ConfigError`` when it is missing, a directory, or cannot be examined.
    """
    explicit = Path(config_file)
    if not explicit.is_absolute():
        explicit = (Path.cwd() if cwd is None else cwd) / explicit
    if existing_config_file(explicit, "config file") is None:
        raise ConfigError(
            f"config file not found: {config_file}"
            + (f" (resolved to {explicit})" if str(explicit) != str(config_file) else "")
        )
    return explicit


def load_config_file(path: str | Path) -> Config:
    """One file only: no built-in procedures, global config or environment (for lint/plugin).

    Built-in defaults and aliases still apply, so alias references resolve.
    """
    file = Path(path).absolute()
    if existing_config_file(file, "config file") is None:
        raise ConfigError(f"config file not found: {path}")
    return merge_layers([parse_file(file, "workspace")], {}, {})


def load_builtin_config() -> Config:
    """Only the built-in procedures and defaults (no global, workspace or environment)."""
    layer = builtin_layer()
    return merge_layers([layer] if layer is not None else [], {}, {})

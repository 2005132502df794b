"""Where settings come from besides the workspace file: the global config file, the
environment and explicit overrides."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean, display_path, type_name
from pytest_ooda.config.model import ApiSettings, Provenance
from pytest_ooda.config.parse import Setting
from pytest_ooda.config.schema import (
    _LOOP_CHECKS,
    CONFIG_FILENAME,
    EMPTY_MEANS_UNSET,
    ENV_VARS,
    LOOP_KEYS,
    ROODA_CONFIG_FILENAME,
    _Invalid,
    _parse_env_value,
    rooda_variable,
)
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping


def global_config_path(env: Mapping[str, str]) -> Path | None:
    """``$OODA_CONFIG_HOME/ooda-config.yml``, else the XDG location, else ``~/.config``.

    ``ROODA_CONFIG_HOME`` stands in for ``OODA_CONFIG_HOME`` when that is not set, and in
    the directory chosen a ``rooda-config.yml`` is used when there is no
    ``ooda-config.yml``. ``None`` when there is no home directory to look in. A relative
    ``XDG_CONFIG_HOME`` is ignored, as the XDG base directory specification asks.
    """
    directory = _global_config_dir(env)
    if directory is None:
        return None
    ours = directory / CONFIG_FILENAME
    if _file_kind(ours, "global config") != "missing":
        return ours
    theirs = directory / ROODA_CONFIG_FILENAME
    return theirs if _file_kind(theirs, "global config") != "missing" else ours


def _global_config_dir(env: Mapping[str, str]) -> Path | None:
    """``$OODA_CONFIG_HOME`` (else rooda's ``$ROODA_CONFIG_HOME``), else XDG, else home."""
    for var in ("OODA_CONFIG_HOME", rooda_variable("OODA_CONFIG_HOME")):
        if not env.get(var):
            continue
        home_dir = Path(env[var])
        if _file_kind(home_dir, f"environment variable {var}") not in ("dir", "missing"):
            raise ConfigError(
                f"environment variable {var}: expected a directory, "
                f"got {str(home_dir)!r} (not a directory)"
            )
        return home_dir
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "ooda"
    if env.get("HOME"):
        home = Path(env["HOME"])
    else:
        try:
            home = Path.home()
        except (RuntimeError, KeyError, OSError):
            # No $HOME and no password-database entry (some containers): no global config.
            return None
    return home / ".config" / "ooda"


def _file_kind(path: Path, what: str) -> str:
    """``"missing"``, ``"file"``, ``"dir"`` or ``"other"``; unreadable paths are errors.

    ``Path.is_file()`` lets ``PermissionError`` through (an unreadable XDG directory),
    and would silently skip a config that is a directory.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
            raise ConfigError(f"{what}: {path} is a symbolic link loop") from None
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            raise ConfigError(f"{what}: path too long: {path}") from None
        if isinstance(exc, ValueError):
            raise ConfigError(f"{what}: invalid path {str(path)!r}") from None
        raise ConfigError(f"{what}: cannot access {path}: {exc.strerror or exc}") from None
    if S_ISREG(mode):
        return "file"
    if S_ISDIR(mode):
        return "dir"
    return "other"


def existing_config_file(path: Path, what: str) -> Path | None:
    """``path`` when it is a regular file, ``None`` when missing; anything else is an error."""
    kind = _file_kind(path, what)
    if kind == "file":
        return path
    if kind == "missing":
        return None
    noun = "a directory" if kind == "dir" else "not a regular file"
    raise ConfigError(f"{what} {display_path(path)} is {noun}", hint="give the path of a YAML file")


def env_layer(env: Mapping[str, str]) -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for name, key in ENV_VARS.items():
        var, text = name, env.get(name)
        if text is None or not text.strip():
            # rooda's variable for the same setting, when ours is not set.
            var = rooda_variable(name)
            text = env.get(var)
        if text is None or not text.strip():
            continue
        try:
            value = _parse_env_value(key, text)
        except _Invalid as exc:
            raise ConfigError(
                f"environment variable {var}: {exc.stated(repr(text))}", hint=exc.hint
            ) from None
        out[key] = Setting(value, None, Provenance("env", source=var))
    return out


def command_line_overrides(**values: Any) -> dict[str, Any] | None:
    """The command-line tier of ``loop:`` keys as ``load_config(overrides=…)`` takes it,
    from whichever command line set them (``ooda``'s flags, pytest's ``--ooda-*``
    options): the keys given a value, ``None`` (not given) left out; ``None`` when none
    was given. Checked like any override when the config loads."""
    given = {key: value for key, value in values.items() if value is not None}
    return given or None


def override_layer(overrides: Mapping[str, Any]) -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for key, value in overrides.items():
        if key not in LOOP_KEYS:
            raise ConfigError(
                f"unknown setting override {key!r}",
                hint=did_you_mean(key, LOOP_KEYS, label="known settings"),
            )
        if value is None or (key in EMPTY_MEANS_UNSET and value == ""):
            continue
        if key == "ai_api":
            if not isinstance(value, ApiSettings):
                raise ConfigError("override ai_api: expected an ApiSettings instance")
            checked: Any = value
        else:
            try:
                checked = _LOOP_CHECKS[key](value)
            except _Invalid as exc:
                raise ConfigError(
                    f"option {key}: {exc.stated(type_name(value))}", hint=exc.hint
                ) from None
        out[key] = Setting(checked, None, Provenance("cli", source=key))
    return out

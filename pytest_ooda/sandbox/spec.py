"""A ``sandbox:`` setting as written: the kind and its options, checked against the
kind's option table (no program is started, nothing is imported beyond the table)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import CONTAINER_ENGINES, SANDBOX_NETWORKS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

__all__ = [
    "COMMON_OPTIONS",
    "DEFAULT_MEMORY",
    "DEFAULT_PIDS_LIMIT",
    "OptionError",
    "SandboxSpec",
    "check_env_list",
    "check_options",
]

#: Processes a run may have at once unless ``pids_limit`` says otherwise (bwrap, docker).
DEFAULT_PIDS_LIMIT = 512
#: A container's memory unless ``memory`` says otherwise.
DEFAULT_MEMORY = "4g"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MEMORY = re.compile(r"[0-9]+(?:\.[0-9]+)?[bkmgBKMG]?\Z")


class OptionError(Exception):
    """An option failed its check; ``key`` is the option (``None``: the whole value);
    ``hint`` a "did you mean" line, shown under the message."""

    def __init__(self, message: str, key: str | None = None, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.hint = hint

    def one_line(self) -> str:
        """The message and its hint on one line, for an option parser's error."""
        if not self.hint:
            return self.message
        return f"{self.message}; " + "; ".join(line.strip() for line in self.hint.splitlines())


@dataclass(frozen=True)
class SandboxSpec:
    """``kind`` and its checked ``options``. ``bare`` means it was written as a kind name
    alone (``--ooda-sandbox bwrap``, ``OODA_SANDBOX=docker``): it then takes the options
    of a lower setting of the same kind. ``base_dir`` is where relative paths in the
    options (``build:``) resolve: the declaring file's directory."""

    kind: str = "none"
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    base_dir: Path | None = field(default=None, compare=False)
    bare: bool = True

    def under(self, lower: SandboxSpec | None) -> SandboxSpec:
        """This spec given above ``lower``: a bare kind naming ``lower``'s kind keeps
        ``lower``'s options."""
        if self.bare and lower is not None and lower.kind == self.kind and not lower.bare:
            return lower
        return self

    def describe(self) -> str:
        """``docker (image=x, network=none)`` — for ``--provenance`` and the dry run."""
        if not self.options:
            return self.kind
        shown = ", ".join(f"{key}={_show(value)}" for key, value in self.options.items())
        return f"{self.kind} ({shown})"


def _show(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)


# ---------------------------------------------------------------- option checks


def check_env_list(value: Any) -> tuple[str, ...]:
    """``env:`` — names passed from the caller's environment (``ANTHROPIC_API_KEY``) or
    ``NAME=value`` set inside (``IS_SANDBOX=1``)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        raise OptionError("expected a list of variable names (NAME or NAME=value)")
    out: list[str] = []
    for item in value:
        name = item.partition("=")[0] if isinstance(item, str) else None
        if name is None or not _ENV_NAME.match(name):
            raise OptionError(f"expected a variable name (NAME or NAME=value), got {item!r}")
        out.append(item)
    return tuple(out)


def _check_paths(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(
        isinstance(item, str) and item for item in value
    ):
        raise OptionError("expected a list of paths")
    return tuple(value)


def _choice(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str) or value not in choices:
            raise OptionError("expected one of " + ", ".join(choices))
        return value

    return check


def _text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise OptionError("expected a non-empty string")
    return value


def _cpus(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise OptionError("expected a number of CPUs > 0 (e.g. 1.5)")
    return value


def _memory(value: Any) -> Any:
    if isinstance(value, bool):
        raise OptionError("expected a size such as 512m or 2g")
    if isinstance(value, int) and value > 0:
        return str(value)
    if isinstance(value, str) and _MEMORY.match(value.strip()):
        return value.strip()
    raise OptionError("expected a size such as 512m or 2g")


def _positive_int(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError("expected an integer >= 1")
    return value


def _user(value: Any) -> Any:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]+(?::[0-9]+)?", text.strip()):
        raise OptionError("expected a numeric uid or uid:gid, e.g. 1000:1000")
    uid, _, gid = text.strip().partition(":")
    if int(uid) == 0:
        raise OptionError("expected a uid other than 0: the agent never runs as root")
    return f"{int(uid)}:{int(gid or uid)}"


def _argv(value: Any) -> Any:
    if isinstance(value, str):
        value = value.split()
    if (
        not isinstance(value, list | tuple)
        or not value
        or not all(isinstance(item, str) and item for item in value)
    ):
        raise OptionError("expected a command as a list of words")
    return tuple(value)


#: Options every isolating kind accepts.
COMMON_OPTIONS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "env": check_env_list,
        "home_files": _check_paths,
        "network": _choice(SANDBOX_NETWORKS),
    }
)
BWRAP_OPTIONS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        **COMMON_OPTIONS,
        "network": _choice(("host", "none")),
        "expose": _check_paths,
        "pids_limit": _positive_int,
    }
)
DOCKER_OPTIONS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        **COMMON_OPTIONS,
        "engine": _choice(CONTAINER_ENGINES),
        "image": _text,
        "build": _text,
        "cpus": _cpus,
        "memory": _memory,
        "pids_limit": _positive_int,
        "keepalive": _argv,
        "user": _user,
    }
)


def check_options(
    table: Mapping[str, Callable[[Any], Any]], options: Mapping[str, Any], kind: str
) -> dict[str, Any]:
    """``options`` checked against ``table`` (unknown keys refused, with the known ones)."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        check = table.get(key)
        if check is None:
            known = ", ".join(sorted(table)) if table else "none"
            raise OptionError(
                f"the {kind} sandbox has no option {key!r} (its options: {known})", key
            )
        try:
            out[key] = check(value)
        except OptionError as exc:
            raise OptionError(exc.message, key) from None
    return out

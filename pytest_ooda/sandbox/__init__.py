"""Isolation for live runs: the :class:`Sandbox` interface, the built-in kinds (``none``,
``bwrap``, ``docker``/Podman) one module each, and the registry that also loads kinds
from the ``pytest_ooda.sandboxes`` entry-point group; ``ooda sandbox image``'s offline
image of an agent (:func:`build_agent_image`). See docs/sandbox.md."""

from __future__ import annotations

from pytest_ooda.sandbox.base import (
    BASE_ENV,
    Launch,
    Sandbox,
    SandboxRun,
    allowed_env,
    fresh_home,
)
from pytest_ooda.sandbox.image import AgentImage, build_agent_image
from pytest_ooda.sandbox.registry import (
    ENTRY_POINT_GROUP,
    kinds,
    load_kind,
    open_sandbox,
    parse_spec,
    sandboxed,
    unattended_warning,
)
from pytest_ooda.sandbox.spec import OptionError, SandboxSpec

__all__ = [
    "BASE_ENV",
    "ENTRY_POINT_GROUP",
    "AgentImage",
    "Launch",
    "OptionError",
    "Sandbox",
    "SandboxRun",
    "SandboxSpec",
    "allowed_env",
    "build_agent_image",
    "fresh_home",
    "kinds",
    "load_kind",
    "open_sandbox",
    "parse_spec",
    "sandboxed",
    "unattended_warning",
]

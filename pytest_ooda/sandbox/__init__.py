"""Isolation for live runs: the :class:`Sandbox` interface, the built-in kinds (``none``,
``bwrap``, ``docker``/Podman) one module each, and the registry that also loads kinds
from the ``pytest_ooda.sandboxes`` entry-point group. See docs/sandbox.md."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.sandbox.base import (
        BASE_ENV as BASE_ENV,
        Launch as Launch,
        Sandbox as Sandbox,
        SandboxRun as SandboxRun,
        allowed_env as allowed_env,
        fresh_home as fresh_home,
    )
    from pytest_ooda.sandbox.registry import (
        ENTRY_POINT_GROUP as ENTRY_POINT_GROUP,
        kinds as kinds,
        load_kind as load_kind,
        open_sandbox as open_sandbox,
        parse_spec as parse_spec,
        sandboxed as sandboxed,
        unattended_warning as unattended_warning,
    )
    from pytest_ooda.sandbox.spec import OptionError as OptionError, SandboxSpec as SandboxSpec
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

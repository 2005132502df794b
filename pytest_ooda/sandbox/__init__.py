"""Isolation for live runs: the :class:`Sandbox` interface, the built-in kinds (``none``,
``bwrap``, ``docker``/Podman) one module each, and the registry that also loads kinds
from the ``pytest_ooda.sandboxes`` entry-point group. See docs/sandbox.md."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.sandbox.base import BASE_ENV as BASE_ENV
    from pytest_ooda.sandbox.base import Launch as Launch
    from pytest_ooda.sandbox.base import Sandbox as Sandbox
    from pytest_ooda.sandbox.base import SandboxRun as SandboxRun
    from pytest_ooda.sandbox.base import allowed_env as allowed_env
    from pytest_ooda.sandbox.base import fresh_home as fresh_home
    from pytest_ooda.sandbox.registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from pytest_ooda.sandbox.registry import kinds as kinds
    from pytest_ooda.sandbox.registry import load_kind as load_kind
    from pytest_ooda.sandbox.registry import open_sandbox as open_sandbox
    from pytest_ooda.sandbox.registry import parse_spec as parse_spec
    from pytest_ooda.sandbox.registry import sandboxed as sandboxed
    from pytest_ooda.sandbox.registry import unattended_warning as unattended_warning
    from pytest_ooda.sandbox.spec import OptionError as OptionError
    from pytest_ooda.sandbox.spec import SandboxSpec as SandboxSpec
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

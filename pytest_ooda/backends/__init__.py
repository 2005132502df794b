"""The AI backend interface: one ``run`` call per iteration, returning a ``BackendResult``.

Three implementations live next to this module: ``command`` (a real subprocess),
``http`` (a chat-completion API over ``requests``) and ``replay`` (scripted or recorded
iterations). The loop runner only ever talks to the ``Backend`` protocol.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.backends.base import TOOL_TEXT_LIMIT as TOOL_TEXT_LIMIT
    from pytest_ooda.backends.base import Backend as Backend
    from pytest_ooda.backends.base import BackendResult as BackendResult
    from pytest_ooda.backends.base import StreamCallback as StreamCallback
    from pytest_ooda.backends.base import ToolCall as ToolCall
    from pytest_ooda.backends.base import Usage as Usage
    from pytest_ooda.backends.base import tool_text as tool_text
    from pytest_ooda.backends.command import CommandBackend as CommandBackend
    from pytest_ooda.backends.command import resolve_executable as resolve_executable
    from pytest_ooda.backends.http import PROVIDERS as PROVIDERS
    from pytest_ooda.backends.http import HttpBackend as HttpBackend
    from pytest_ooda.backends.infra import RETRYABLE as RETRYABLE
    from pytest_ooda.backends.infra import infra_reason as infra_reason
    from pytest_ooda.backends.infra import kind_of as kind_of
    from pytest_ooda.backends.replay import ReplayBackend as ReplayBackend
    from pytest_ooda.backends.replay import ReplayStep as ReplayStep
    from pytest_ooda.backends.replay import ScriptItem as ScriptItem
    from pytest_ooda.backends.replay import script as script
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

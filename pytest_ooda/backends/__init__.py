"""The AI backend interface: one ``run`` call per iteration, returning a ``BackendResult``.

Three implementations live next to this module: ``command`` (a real subprocess),
``http`` (a chat-completion API over ``requests``) and ``replay`` (scripted or recorded
iterations). The loop runner only ever talks to the ``Backend`` protocol.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.backends.base import (
        TOOL_TEXT_LIMIT as TOOL_TEXT_LIMIT,
        Backend as Backend,
        BackendResult as BackendResult,
        StreamCallback as StreamCallback,
        ToolCall as ToolCall,
        Usage as Usage,
        tool_text as tool_text,
    )
    from pytest_ooda.backends.command import (
        CommandBackend as CommandBackend,
        resolve_executable as resolve_executable,
    )
    from pytest_ooda.backends.http import PROVIDERS as PROVIDERS, HttpBackend as HttpBackend
    from pytest_ooda.backends.infra import (
        RETRYABLE as RETRYABLE,
        infra_reason as infra_reason,
        kind_of as kind_of,
    )
    from pytest_ooda.backends.replay import (
        ReplayBackend as ReplayBackend,
        ReplayStep as ReplayStep,
        ScriptItem as ScriptItem,
        script as script,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

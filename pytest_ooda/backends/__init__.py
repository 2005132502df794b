"""The AI backend interface: one ``run`` call per iteration, returning a ``BackendResult``.

Three implementations live next to this module: ``command`` (a real subprocess),
``http`` (a chat-completion API over ``requests``) and ``replay`` (scripted or recorded
iterations). The loop runner only ever talks to the ``Backend`` protocol.
"""

from __future__ import annotations

from pytest_ooda.backends.base import (
    TOOL_TEXT_LIMIT,
    Backend,
    BackendResult,
    StreamCallback,
    ToolCall,
    Usage,
    tool_arguments,
    tool_text,
)
from pytest_ooda.backends.command import (
    CommandBackend,
    resolve_executable,
)
from pytest_ooda.backends.http import PROVIDERS, HttpBackend
from pytest_ooda.backends.infra import (
    RETRYABLE,
    infra_reason,
    kind_of,
)
from pytest_ooda.backends.replay import (
    ReplayBackend,
    ReplayStep,
    ScriptItem,
    script,
)
from pytest_ooda.backends.tool_calls import redacted_call

__all__ = [
    "PROVIDERS",
    "RETRYABLE",
    "TOOL_TEXT_LIMIT",
    "Backend",
    "BackendResult",
    "CommandBackend",
    "HttpBackend",
    "ReplayBackend",
    "ReplayStep",
    "ScriptItem",
    "StreamCallback",
    "ToolCall",
    "Usage",
    "infra_reason",
    "kind_of",
    "redacted_call",
    "resolve_executable",
    "script",
    "tool_arguments",
    "tool_text",
]

"""An upgrade canary's proxy: a replay that keeps going where a new agent version asks
something the cassette does not hold, and remembers everything the agent sent.

:class:`CanaryProxy` answers like a replay; a request the cassette has no answer for
is answered with the nearest exchange not served yet (the one a strict replay's
divergence report would name), so a new CLI that words its system prompt otherwise
still gets the recorded model answers, and the run shows whether it still does the
job with them. Every request is kept as :class:`Sent` — its canonical form (the run's
paths, dates and ids normalised) and its headers (credentials never) — and
:func:`what_changed` compares what two agents sent, request by request: the system
prompt, the tool list, the headers, the message roles and the other fields, by diff.
The upgrade canary (``ooda canary``, docs/agent-replay.md) runs a cassette through the
pinned agent and the new one and reports the difference.
"""

from __future__ import annotations

import difflib
import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents import model_apis
from pytest_ooda.apireplay.canonical import PART_FIELDS, PART_LISTS, RUN_ID_FIELDS
from pytest_ooda.apireplay.divergence import nearest
from pytest_ooda.apireplay.proxy import ApiProxy

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.apireplay.canonical import Canonical, Normaliser
    from pytest_ooda.apireplay.cassette import Cassette, Exchange

__all__ = ["CanaryProxy", "Change", "Sent", "what_changed"]

#: Request headers that say nothing of the agent (the connection's, the body's).
_PLUMBING = frozenset(
    {"host", "content-length", "connection", "accept-encoding", "transfer-encoding", "te"}
)
#: Diff lines shown per change at most (the rest is counted).
MAX_LINES = 60


@dataclass(frozen=True)
class Sent:
    """One request an agent sent: its endpoint, canonical body, headers (credentials
    left out, values normalised), and whether the cassette held it as sent."""

    endpoint: str
    body: Any
    headers: tuple[tuple[str, str], ...]
    as_recorded: bool


class CanaryProxy(ApiProxy):
    """A replaying proxy that answers a miss with the nearest unserved exchange and
    keeps every request (:attr:`sent`, in arrival order); see the module docstring."""

    def __init__(
        self,
        *,
        cassette: Cassette | None = None,
        normaliser: Normaliser | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        # A replay: the upstream is never contacted.
        super().__init__(
            "replay", cassette=cassette, normaliser=normaliser, redact=redact, upstreams={}
        )
        self.sent: list[Sent] = []
        self._sent_lock = threading.Lock()
        credentials = {header for api in model_apis().values() for header in api.credential_headers}
        self._hidden = _PLUMBING | {name.lower() for name in credentials}

    def _served(
        self, handler: Any, request: Canonical, exchange: Exchange | None
    ) -> Exchange | None:
        exact = exchange is not None
        if exchange is None:
            exchange = nearest(request, self.matcher.unserved())
            if exchange is not None and not self.matcher.take_exchange(exchange):
                exchange = None
        redact = self.redact or (lambda text: text)
        headers = tuple(
            sorted(
                (name.lower(), redact(self.normaliser.request(value)))
                for name, value in handler.headers.items()
                if name.lower() not in self._hidden
            )
        )
        with self._sent_lock:
            self.sent.append(Sent(request.endpoint, request.expanded(), headers, exact))
        return exchange


@dataclass(frozen=True)
class Change:
    """One thing the new agent sends otherwise: what (``system prompt``, ``tools``,
    ``headers``, ``message roles``, ``fields``, ``requests``), in one line, and the diff
    behind it (may be empty)."""

    what: str
    summary: str
    diff: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        return [f"{self.what}: {self.summary}", *(f"  {line}" for line in self.diff)]


def _texts(value: Any) -> str:
    """A system prompt (a string, or a list of text blocks) as one text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            block.get("text", "") if isinstance(block, dict) else str(block) for block in value
        )
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _system(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    return _texts(body.get("system", body.get("instructions")))


def _tools(body: Any) -> dict[str, Any]:
    """Each tool's definition by its name (an OpenAI function's name inside it)."""
    tools = body.get("tools") if isinstance(body, dict) else None
    found: dict[str, Any] = {}
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name") or "?"
            found[str(name)] = tool
    return found


def _roles(body: Any) -> list[str]:
    """The roles of the conversation's messages (an OpenAI input item's type where it
    has no role)."""
    if not isinstance(body, dict):
        return []
    items: list[Any] = next(
        (body[name] for name in PART_LISTS if isinstance(body.get(name), list)), []
    )
    return [
        str(item.get("role") or item.get("type") or "?") if isinstance(item, dict) else "?"
        for item in items
    ]


def _fields(body: Any) -> dict[str, Any]:
    """The request's other top-level fields (model, limits, flags)."""
    if not isinstance(body, dict):
        return {}
    skipped = {*PART_FIELDS, *PART_LISTS, *RUN_ID_FIELDS, "metadata"}
    return {key: value for key, value in body.items() if key not in skipped}


def _cut(lines: list[str]) -> tuple[str, ...]:
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… ({len(lines) - MAX_LINES} more lines)"]
    return tuple(lines)


def _pairs(pinned: Sequence[Sent], new: Sequence[Sent]) -> list[tuple[Sent, Sent]]:
    """The requests of both, paired in the order each agent sent them per endpoint."""
    later: dict[str, list[Sent]] = {}
    for sent in new:
        later.setdefault(sent.endpoint, []).append(sent)
    pairs = []
    for sent in pinned:
        queue = later.get(sent.endpoint)
        if queue:
            pairs.append((sent, queue.pop(0)))
    return pairs


def _named(label: str, before: dict[str, Any], after: dict[str, Any]) -> Change | None:
    added = [name for name in after if name not in before]
    removed = [name for name in before if name not in after]
    changed = [name for name in before if name in after and before[name] != after[name]]
    if not (added or removed or changed):
        return None
    parts = []
    for word, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            shown = ", ".join(names[:12]) + (
                f", … {len(names) - 12} more" if len(names) > 12 else ""
            )
            parts.append(f"{len(names)} {word} ({shown})")
    diff: list[str] = []
    if label == "headers":
        diff = [f"{name}: {before[name]} -> {after[name]}" for name in changed]
        diff += [f"+ {name}: {after[name]}" for name in added]
        diff += [f"- {name}: {before[name]}" for name in removed]
    elif label == "fields":
        diff = [
            f"{name}: {json.dumps(before.get(name))} -> {json.dumps(after.get(name))}"
            for name in (*changed, *added, *removed)
        ]
    return Change(label, "; ".join(parts), _cut(diff))


def _first(pairs: list[tuple[Sent, Sent]], change: Any) -> Change | None:
    """The first pair's change ``change`` finds (each kind is reported once: every
    request of a conversation repeats the same system prompt and tools)."""
    for pinned, new in pairs:
        found: Change | None = change(pinned, new)
        if found is not None:
            return found
    return None


def _system_change(pinned: Sent, new: Sent) -> Change | None:
    before, after = _system(pinned.body), _system(new.body)
    if before == after:
        return None
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "pinned", "new", lineterm="", n=1
        )
    )
    body = [line for line in lines if line[:3] not in ("+++", "---")]
    removed = sum(line.startswith("-") for line in body)
    added = sum(line.startswith("+") for line in body)
    return Change("system prompt", f"{removed} line(s) removed, {added} added", _cut(lines))


def _roles_change(pinned: Sent, new: Sent) -> Change | None:
    before, after = _roles(pinned.body), _roles(new.body)
    if before == after:
        return None
    return Change("message roles", f"[{', '.join(before)}] -> [{', '.join(after)}]")


def what_changed(pinned: Sequence[Sent], new: Sequence[Sent]) -> tuple[Change, ...]:
    """What ``new`` sent otherwise than ``pinned``, request by request (paired in the
    order each sent them, per endpoint): the number of requests, the system prompt,
    the tool list, the message roles, the headers and the other fields; empty when
    they sent the same."""
    changes: list[Change] = []
    counts = [
        f"{endpoint}: {sum(s.endpoint == endpoint for s in pinned)} -> "
        f"{sum(s.endpoint == endpoint for s in new)}"
        for endpoint in dict.fromkeys(s.endpoint for s in (*pinned, *new))
        if sum(s.endpoint == endpoint for s in pinned) != sum(s.endpoint == endpoint for s in new)
    ]
    if counts:
        changes.append(Change("requests", "; ".join(counts)))
    pairs = _pairs(pinned, new)
    for found in (
        _first(pairs, _system_change),
        _first(pairs, lambda a, b: _named("tools", _tools(a.body), _tools(b.body))),
        _first(pairs, _roles_change),
        _first(pairs, lambda a, b: _named("headers", dict(a.headers), dict(b.headers))),
        _first(pairs, lambda a, b: _named("fields", _fields(a.body), _fields(b.body))),
    ):
        if found is not None:
            changes.append(found)
    return tuple(changes)

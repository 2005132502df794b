"""The cassette: a run's model-API traffic in a JSON-lines file beside its scenario
(``<scenario>.cassette.jsonl``), read for replay and written, atomically, after a
recording.

The file is one JSON object per line, in this order::

    {"ooda_cassette": 1, "note": "..."}                            the header
    {"part": "<digest>", "value": ...}                             a request part, stored once
    {"exchange": 1, "endpoint": "anthropic POST /v1/messages?beta=true",
     "request": {...skeleton, parts by digest...},
     "status": 200, "headers": {...}, "events": [[name, data], ...], "message": {...}}

A part comes before the first exchange that uses it. ``events`` is what a streamed
response is replayed from; ``message`` is the final message (for a streamed response it
is derived from ``events``, for the reader). ``"replay": false`` marks an exchange kept
for the record but never served (a 429/529 the agent retried). ``"redacted": true``
marks a part or request the redaction changed. A part's digest is the digest of its
stored value, so an edited part that no longer matches its digest is refused.

:class:`Matcher` serves exchanges in recorded order per request key, so concurrent
conversations (sub-agents, side calls) each find their own answers.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ooda.apireplay.canonical import PART_FIELDS, PART_LISTS, digest, part_names
from pytest_ooda.errors import ScenarioError
from pytest_ooda.reader import MAX_DEPTH, deeper_than

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from pytest_ooda.apireplay.sse import Event

__all__ = [
    "CASSETTE_SUFFIX",
    "TRANSIENT",
    "Cassette",
    "Exchange",
    "Matcher",
    "cassette_path",
    "read_cassette",
    "write_cassette",
]

VERSION = 1
CASSETTE_SUFFIX = ".cassette.jsonl"
#: Statuses that say "try again" (rate limits, overload, a gateway's hiccup): recorded,
#: never replayed; the successful retry that follows is.
TRANSIENT = frozenset({408, 429, 500, 502, 503, 504, 529})
#: A cassette is read whole; none is this large (a ten-step Claude Code run stores
#: about 1 MB: each request part once).
MAX_BYTES = 64 * 1024 * 1024
#: A header name as HTTP allows it (a token); a value may hold no line break or NUL, so
#: a stored header can never become extra header lines of a replayed response.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}\Z")
_HEADER_VALUE = re.compile(r"[^\r\n\x00]{0,8192}\Z")
#: A surrogate escaped in JSON text (``\ud83d``): a pair is a character, one alone is
#: no text at all (it cannot be hashed, matched or sent), so a line with one is looked at.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
NOTE = (
    "model API traffic recorded by pytest-ooda (`ooda help agent-replay`); "
    "one part or exchange per line"
)


def cassette_path(scenario: Path) -> Path:
    """The cassette beside the scenario file ``scenario`` (``x.yml`` ->
    ``x.cassette.jsonl``)."""
    return scenario.with_name(scenario.stem + CASSETTE_SUFFIX)


@dataclass
class Exchange:
    """One request and its response, as stored."""

    number: int
    endpoint: str
    request: Any
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    events: Sequence[Event] | None = None
    message: Any = None
    body: str | None = None
    replay: bool = True
    redacted: bool = False
    #: Where it was read from (line of the cassette), for reports.
    line: int | None = None

    @property
    def key(self) -> str:
        return digest([self.endpoint, self.request])

    def as_line(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "exchange": self.number,
            "endpoint": self.endpoint,
            "request": self.request,
            "status": self.status,
            "headers": dict(self.headers),
        }
        if self.events is not None:
            out["events"] = [list(event) for event in self.events]
        if self.message is not None:
            out["message"] = self.message
        if self.body is not None:
            out["body"] = self.body
        if not self.replay:
            out["replay"] = False
        if self.redacted:
            out["redacted"] = True
        return out


@dataclass
class Cassette:
    """Parts by digest and exchanges in order."""

    parts: dict[str, Any] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    redacted_parts: set[str] = field(default_factory=set)
    path: Path | None = None

    @property
    def has_redactions(self) -> bool:
        return bool(self.redacted_parts) or any(e.redacted for e in self.exchanges)

    def add(self, exchange: Exchange) -> None:
        """Append ``exchange``, numbered next (its parts must be in :attr:`parts`)."""
        exchange.number = len(self.exchanges) + 1
        self.exchanges.append(exchange)


def _fail(path: Path, line: int, message: str, *, column: int | None = None) -> ScenarioError:
    return ScenarioError(
        f"cassette: {message}",
        file=str(path),
        line=line,
        column=column,
        hint="re-record it (pytest -m live --ooda-record-api) or fix the line; "
        "the format: `ooda help agent-replay`",
    )


def _no_number(constant: str) -> Any:
    raise ValueError(f"{constant} is no JSON number")


def _parse(path: Path, line: int, raw: str) -> dict[str, Any]:
    """The JSON object on one line; a located error for one that is not JSON (``NaN``,
    an integer of thousands of digits), nests deeper than :data:`MAX_DEPTH`, or holds a
    string that is no text (a lone surrogate)."""
    deep = _fail(path, line, f"nesting deeper than {MAX_DEPTH} levels")
    try:
        item = json.loads(raw, parse_constant=_no_number)
    except json.JSONDecodeError as exc:
        raise _fail(path, line, f"not JSON: {exc.msg}", column=exc.colno) from None
    except RecursionError:
        raise deep from None
    except ValueError as exc:
        # NaN or Infinity, or an integer longer than Python reads (4,300 digits).
        message = str(exc).split(";")[0]
        raise _fail(path, line, f"not JSON: {message}") from None
    if deeper_than(item, MAX_DEPTH):
        # No request or answer nests this deep: a damaged or planted line.
        raise deep
    if not isinstance(item, dict):
        raise _fail(path, line, "each line must be a JSON object")
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(item, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise _fail(path, line, "a string holds a lone surrogate (\\ud800-\\udfff)") from None
    return item


def _exchange(path: Path, line: int, item: dict[str, Any]) -> Exchange:
    for name, kind in (("endpoint", str), ("status", int)):
        if not isinstance(item.get(name), kind) or isinstance(item.get(name), bool):
            raise _fail(path, line, f"exchange has no {name} ({kind.__name__})")
    number = item.get("exchange")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
        raise _fail(path, line, "exchange must be a number (the exchange's place in the run)")
    if "request" not in item:
        raise _fail(path, line, "exchange has no request")
    request = item["request"]
    if isinstance(request, dict) and any(
        (name in PART_FIELDS and not isinstance(request[name], str))
        or (
            name in PART_LISTS
            and isinstance(request[name], list)
            and not all(isinstance(n, str) for n in request[name])
        )
        for name in request
    ):
        fields = ", ".join(PART_FIELDS + PART_LISTS)
        raise _fail(path, line, f"a request's {fields} must name parts (strings)")
    events = item.get("events")
    if events is not None and not (
        isinstance(events, list)
        and all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[0], str | None) for e in events
        )
    ):
        raise _fail(path, line, "events must be a list of [name, data] pairs")
    if not 100 <= item["status"] <= 599:
        raise _fail(path, line, f"status {item['status']} is no HTTP status (100-599)")
    headers = item.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise _fail(path, line, "headers must map names to strings")
    for name, value in headers.items():
        if not _HEADER_NAME.match(name):
            raise _fail(path, line, f"header name {name[:60]!r} is no HTTP header name")
        if not _HEADER_VALUE.match(value):
            raise _fail(
                path,
                line,
                f"header {name} holds a line break or a NUL (or is over 8 KiB): "
                "served, it would add header lines of its own",
            )
    body = item.get("body")
    if body is not None and not isinstance(body, str):
        raise _fail(path, line, "body must be a string")
    return Exchange(
        number=number or 0,
        endpoint=item["endpoint"],
        request=item["request"],
        status=item["status"],
        headers=headers,
        events=[(name, data) for name, data in events] if events is not None else None,
        message=item.get("message"),
        body=body,
        replay=item.get("replay", True) is not False,
        redacted=item.get("redacted") is True,
        line=line,
    )


def read_cassette(path: Path) -> Cassette:
    """The cassette at ``path``; a located ``ScenarioError`` for a file that is not one."""
    from pytest_ooda.textfile import read_text_file

    text = read_text_file(path, error=ScenarioError, max_bytes=MAX_BYTES, what="cassette")
    cassette = Cassette(path=path)
    seen_header = False
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        item = _parse(path, number, raw)
        if not seen_header:
            if item.get("ooda_cassette") != VERSION:
                raise _fail(
                    path, number, f'the first line must be {{"ooda_cassette": {VERSION}, ...}}'
                )
            seen_header = True
        elif "part" in item:
            name, value = item.get("part"), item.get("value")
            if not isinstance(name, str) or digest(value) != name:
                raise _fail(path, number, f"part {name!r} does not match its value's digest")
            cassette.parts[name] = value
            if item.get("redacted") is True:
                cassette.redacted_parts.add(name)
        elif "exchange" in item:
            exchange = _exchange(path, number, item)
            missing = [n for n in part_names(exchange.request) if n not in cassette.parts]
            if missing:
                raise _fail(
                    path, number, f"exchange uses part {missing[0]} before any line gives it"
                )
            cassette.exchanges.append(exchange)
        else:
            raise _fail(path, number, 'expected a "part" or an "exchange" line')
    if not seen_header:
        raise _fail(path, 1, "empty cassette")
    return cassette


def dump_cassette(cassette: Cassette) -> str:
    """The file text of ``cassette``: each part just before its first use."""
    lines = [json.dumps({"ooda_cassette": VERSION, "note": NOTE})]
    written: set[str] = set()
    for exchange in cassette.exchanges:
        for name in part_names(exchange.request):
            if name in written or name not in cassette.parts:
                continue
            written.add(name)
            item: dict[str, Any] = {"part": name, "value": cassette.parts[name]}
            if name in cassette.redacted_parts:
                item["redacted"] = True
            lines.append(json.dumps(item, ensure_ascii=False))
        lines.append(json.dumps(exchange.as_line(), ensure_ascii=False))
    return "\n".join(lines) + "\n"


def write_cassette(cassette: Cassette, path: Path) -> None:
    """Write ``cassette`` to ``path`` atomically."""
    from pytest_ooda._util import atomic_write_text

    atomic_write_text(path, dump_cassette(cassette))


class Matcher:
    """Serves a cassette's exchanges: per key, in recorded order, each once."""

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Exchange]] = {}
        self._served: dict[str, int] = {}
        for exchange in cassette.exchanges:
            if exchange.replay:
                self._queues.setdefault(exchange.key, deque()).append(exchange)

    def take(self, keys: Sequence[str]) -> Exchange | None:
        """The next unserved exchange under the first of ``keys`` that has one."""
        with self._lock:
            for key in keys:
                queue = self._queues.get(key)
                if queue:
                    self._served[key] = self._served.get(key, 0) + 1
                    return queue.popleft()
            return None

    def unserved(self) -> list[Exchange]:
        """Every exchange not served yet, in recorded order per key."""
        with self._lock:
            return [exchange for queue in self._queues.values() for exchange in queue]

    def take_exchange(self, exchange: Exchange) -> bool:
        """Serve ``exchange`` itself, whatever was asked (an upgrade canary answers a
        request the cassette does not hold with the nearest one it does)."""
        with self._lock:
            queue = self._queues.get(exchange.key)
            if not queue or exchange not in queue:
                return False
            queue.remove(exchange)
            self._served[exchange.key] = self._served.get(exchange.key, 0) + 1
            return True

    def served(self, key: str) -> int:
        """How many exchanges of ``key`` were served."""
        with self._lock:
            return self._served.get(key, 0)

    def recorded(self, key: str) -> int:
        """How many replayable exchanges the cassette holds under ``key``."""
        return sum(1 for e in self.cassette.exchanges if e.replay and e.key == key)

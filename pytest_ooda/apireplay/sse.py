"""Server-sent events: read as they pass through the proxy, written again on replay, and
folded into the final message a reviewer reads.

An event is ``(name, data)``: ``name`` from its ``event:`` line (``None`` when it has
none, as OpenAI's Chat Completions stream), ``data`` the JSON of its ``data:`` lines,
or their text when it is not JSON (``[DONE]``). :func:`frame` writes events back in the
framing the APIs use (``event: NAME`` then ``data: JSON`` and a blank line), so a stream
replays the same way every time.

:func:`coalesce` joins the runs of small deltas an API streams a text in into one delta
each (a cassette keeps one event per content block, and a secret split over two deltas
is whole again for the redaction). :func:`final_message` folds a stream into what a
non-streaming call would have returned:
Anthropic's Messages (``message_start`` + content blocks + ``message_delta``), OpenAI's
Responses (the ``response.completed`` event's response) and Chat Completions (the chunks'
deltas, tool calls by index).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

__all__ = ["Event", "EventReader", "coalesce", "final_message", "frame"]

Event = tuple[str | None, Any]


def _event(lines: Sequence[str]) -> Event | None:
    name: str | None = None
    data: list[str] = []
    for line in lines:
        if line.startswith(":"):
            continue  # a comment (keep-alive)
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if name is None and not data:
        return None
    text = "\n".join(data)
    try:
        return name, json.loads(text)
    except ValueError:
        return name, text


class EventReader:
    """Events out of a byte stream fed in chunks of any size."""

    def __init__(self) -> None:
        self._buffer = b""
        self._lines: list[str] = []

    def feed(self, chunk: bytes) -> Iterator[Event]:
        """The events ``chunk`` completes."""
        self._buffer += chunk
        while True:
            cut = self._buffer.find(b"\n")
            if cut < 0:
                return
            raw, self._buffer = self._buffer[:cut], self._buffer[cut + 1 :]
            line = raw.decode("utf-8", errors="replace").removesuffix("\r")
            if line:
                self._lines.append(line)
                continue
            event = _event(self._lines)
            self._lines = []
            if event is not None:
                yield event

    def close(self) -> Iterator[Event]:
        """An event left without its closing blank line."""
        if self._buffer:
            self._lines.append(self._buffer.decode("utf-8", errors="replace"))
            self._buffer = b""
        event = _event(self._lines)
        self._lines = []
        if event is not None:
            yield event


def frame(events: Iterable[Event]) -> str:
    """The stream text of ``events``."""
    out: list[str] = []
    for name, data in events:
        if name is not None:
            out.append(f"event: {name}\n")
        text = (
            data
            if isinstance(data, str)
            else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        )
        out.append(f"data: {text}\n\n")
    return "".join(out)


def _anthropic_delta(data: Any) -> tuple[Any, ...] | None:
    if not isinstance(data, dict) or data.get("type") != "content_block_delta":
        return None
    delta = data.get("delta")
    if not isinstance(delta, dict) or set(delta) != {
        "type",
        _DELTA_FIELDS.get(str(delta.get("type"))),
    }:
        return None
    return ("anthropic", data.get("index"), delta["type"])


_DELTA_FIELDS = {
    "text_delta": "text",
    "input_json_delta": "partial_json",
    "thinking_delta": "thinking",
}


def _responses_delta(data: Any) -> tuple[Any, ...] | None:
    if not isinstance(data, dict) or not isinstance(data.get("delta"), str):
        return None
    kind = data.get("type")
    if not isinstance(kind, str) or not kind.endswith(".delta"):
        return None
    where = tuple(
        data.get(k) for k in ("item_id", "output_index", "content_index", "summary_index")
    )
    return ("responses", kind, *where)


def _chat_delta(data: Any) -> tuple[Any, ...] | None:
    if not isinstance(data, dict) or data.get("object") != "chat.completion.chunk":
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    if choice.get("finish_reason") is not None or set(choice) - {
        "index",
        "delta",
        "finish_reason",
        "logprobs",
    }:
        return None
    delta = choice.get("delta")
    if isinstance(delta, dict) and set(delta) == {"content"} and isinstance(delta["content"], str):
        return ("chat", choice.get("index"), "content")
    calls = (
        delta.get("tool_calls")
        if isinstance(delta, dict) and set(delta) == {"tool_calls"}
        else None
    )
    if isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], dict):
        call = calls[0]
        function = call.get("function")
        if (
            set(call) == {"index", "function"}
            and isinstance(function, dict)
            and set(function) == {"arguments"}
            and isinstance(function["arguments"], str)
        ):
            return ("chat", choice.get("index"), "arguments", call.get("index"))
    return None


def _delta_key(name: str | None, data: Any) -> tuple[Any, ...] | None:
    """What a delta event adds to (``None``: not a delta that may be joined)."""
    return _anthropic_delta(data) or _responses_delta(data) or _chat_delta(data)


def _joined(first: Any, second: Any) -> Any:
    """``first`` with ``second``'s piece of text appended."""
    if first.get("type") == "content_block_delta":
        field = _DELTA_FIELDS[first["delta"]["type"]]
        return {
            **first,
            "delta": {**first["delta"], field: first["delta"][field] + second["delta"][field]},
        }
    if "delta" in first and isinstance(first["delta"], str):
        return {**first, "delta": first["delta"] + second["delta"]}
    choice, other = first["choices"][0], second["choices"][0]
    if "content" in choice["delta"]:
        delta: Any = {"content": choice["delta"]["content"] + other["delta"]["content"]}
    else:
        call, more = choice["delta"]["tool_calls"][0], other["delta"]["tool_calls"][0]
        arguments = call["function"]["arguments"] + more["function"]["arguments"]
        delta = {"tool_calls": [{**call, "function": {"arguments": arguments}}]}
    return {**first, "choices": [{**choice, "delta": delta}]}


def coalesce(events: Sequence[Event]) -> list[Event]:
    """``events`` with each run of deltas to the same text joined into its first."""
    out: list[Event] = []
    last: tuple[Any, ...] | None = None
    for name, data in events:
        key = _delta_key(name, data)
        if key is not None and key == last and out[-1][0] == name:
            out[-1] = (name, _joined(out[-1][1], data))
            continue
        out.append((name, data))
        last = key
    return out


def _anthropic(events: Sequence[Event]) -> Any:
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for _, data in events:
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"])
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            blocks[int(data.get("index", len(blocks)))] = dict(data["content_block"])
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            index = int(data.get("index", 0))
            block = blocks.setdefault(index, {})
            delta = data["delta"]
            for field in ("text", "thinking", "signature"):
                if isinstance(delta.get(field), str):
                    block[field] = block.get(field, "") + delta[field]
            if isinstance(delta.get("partial_json"), str):
                partial[index] = partial.get(index, "") + delta["partial_json"]
        elif kind == "message_delta" and message is not None:
            message.update(data.get("delta") or {})
            if isinstance(data.get("usage"), dict):
                message["usage"] = {**(message.get("usage") or {}), **data["usage"]}
    if message is None:
        return None
    for index, text in partial.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError:
            blocks[index]["input"] = text
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def _chat(events: Sequence[Event]) -> Any:
    base: dict[str, Any] | None = None
    choices: dict[int, dict[str, Any]] = {}
    for _, data in events:
        if not isinstance(data, dict):
            continue
        if base is None:
            base = {k: v for k, v in data.items() if k not in ("choices", "object")}
            base["object"] = "chat.completion"
        if data.get("usage"):
            base["usage"] = data["usage"]
        for choice in data.get("choices") or ():
            index = int(choice.get("index", 0))
            entry = choices.setdefault(index, {"index": index, "message": {"role": "assistant"}})
            message = entry["message"]
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                message["content"] = (message.get("content") or "") + delta["content"]
            for call in delta.get("tool_calls") or ():
                calls = message.setdefault("tool_calls", [])
                at = int(call.get("index", len(calls)))
                while len(calls) <= at:
                    calls.append({"function": {"name": "", "arguments": ""}})
                target = calls[at]
                for field in ("id", "type"):
                    if field in call:
                        target[field] = call[field]
                function = call.get("function") or {}
                target["function"]["name"] += function.get("name") or ""
                target["function"]["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                entry["finish_reason"] = choice["finish_reason"]
    if base is None:
        return None
    base["choices"] = [choices[index] for index in sorted(choices)]
    return base


def final_message(events: Sequence[Event]) -> Any:
    """The message a stream amounts to (``None`` for a stream of no known API)."""
    for name, data in events:
        if name == "response.completed" and isinstance(data, dict):
            return data.get("response", data)
    first = next((data for _, data in events if isinstance(data, dict)), None)
    if first is None:
        return None
    if first.get("type") == "message_start":
        return _anthropic(events)
    if first.get("object") == "chat.completion.chunk":
        return _chat(events)
    return None

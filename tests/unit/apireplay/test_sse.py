"""``apireplay.sse``: events read from chunks of any size, written back, their deltas
joined, and folded into the final message of each API."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ooda.apireplay.sse import EventReader, coalesce, final_message, frame

from .helpers import anthropic_events, chat_chunks, responses_events, sse


@pytest.mark.parametrize("size", [1, 7, 64, 100000])
def test_events_come_out_whole_however_the_bytes_are_cut(size: int) -> None:
    data = (
        sse(anthropic_events("hello world"))
        + b": keep-alive\n\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n"
    )
    reader = EventReader()
    events: list[Any] = []
    for start in range(0, len(data), size):
        events.extend(reader.feed(data[start : start + size]))
    events.extend(reader.close())
    assert events[: len(anthropic_events("hello world"))] == anthropic_events("hello world")
    assert events[-1] == ("x", "a\nb")


def test_an_unterminated_last_event_is_kept_and_framing_reads_back() -> None:
    reader = EventReader()
    assert list(reader.feed(b"data: [DONE]")) == []
    assert list(reader.close()) == [(None, "[DONE]")]
    events = [*responses_events("hi"), *chat_chunks("hello")]
    again = EventReader()
    assert [*again.feed(frame(events).encode()), *again.close()] == events


def test_anthropic_deltas_join_per_block_and_fold_into_the_message() -> None:
    events = anthropic_events("hello world", tool_path="/w/a.txt")
    joined = coalesce(events)
    deltas = [data for _, data in joined if data.get("type") == "content_block_delta"]
    assert [d["delta"] for d in deltas] == [
        {"type": "text_delta", "text": "hello world"},
        {"type": "input_json_delta", "partial_json": '{"file_path": "/w/a.txt", "content": "x"}'},
    ]
    message = final_message(joined)
    assert message == final_message(events)
    assert message["content"] == [
        {"type": "text", "text": "hello world"},
        {"type": "tool_use", "id": "toolu_1", "name": "Write",
         "input": {"file_path": "/w/a.txt", "content": "x"}},
    ]  # fmt: skip
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 7}


def test_responses_and_chat_streams_fold_into_their_messages() -> None:
    responses = coalesce(responses_events("hi there"))
    assert final_message(responses)["output"][0]["content"][0]["text"] == "hi there"
    chat = coalesce(chat_chunks("hello"))
    # The role chunk stays apart; the tool call's first chunk carries its id and name.
    assert len(chat) == 5
    message = final_message(chat)
    choice = message["choices"][0]
    assert choice["message"]["content"] == "hello"
    assert choice["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": '{"a":1}'}}
    ]
    assert message["object"] == "chat.completion"


def test_runs_of_chat_and_responses_deltas_join() -> None:
    base = {"object": "chat.completion.chunk", "id": "c"}
    pieces = [(None, {**base, "choices": [{"index": 0, "delta": {"content": p}}]}) for p in "abc"]
    assert coalesce(pieces) == [
        (None, {**base, "choices": [{"index": 0, "delta": {"content": "abc"}}]})
    ]
    calls = [
        (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": p}}]}}]}) for p in ('{"x"', ":1}")
    ]  # fmt: skip
    [joined] = coalesce(calls)
    assert joined[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] == '{"x":1}'
    deltas = [
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "i",
                                        "delta": p, "sequence_number": n})
        for n, p in enumerate(("to", "ken"))
    ]  # fmt: skip
    [one] = coalesce(deltas)
    assert (one[1]["delta"], one[1]["sequence_number"]) == ("token", 0)


def test_different_blocks_and_other_events_are_not_joined() -> None:
    a = ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "a"}})  # fmt: skip
    b = ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": "b"}})  # fmt: skip
    ping = ("ping", {"type": "ping"})
    assert coalesce([a, b, ping, ping, a, ping, a]) == [a, b, ping, ping, a, ping, a]


def test_a_stream_of_no_known_api_has_no_message() -> None:
    assert final_message([]) is None
    assert final_message([(None, "[DONE]")]) is None
    assert final_message([("x", {"type": "something"})]) is None

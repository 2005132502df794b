"""``apireplay.divergence``: the nearest recorded request and a diff a person can read."""

from __future__ import annotations

import json
from typing import Any

from pytest_ooda.apireplay.canonical import Normaliser, canonical_request
from pytest_ooda.apireplay.cassette import Cassette, Exchange
from pytest_ooda.apireplay.divergence import Divergence, render_canonical


def _request(*messages: str, endpoint: str = "/v1/messages") -> Any:
    body = {"model": "m", "tools": [{"name": "Bash"}], "messages": list(messages)}
    return canonical_request("anthropic", "POST", endpoint, json.dumps(body).encode(), Normaliser())


def _cassette(*requests: Any) -> Cassette:
    cassette = Cassette()
    for request in requests:
        cassette.parts.update(request.parts)
        exchange = Exchange(0, request.endpoint, request.skeleton, 200, message={}, line=None)
        cassette.add(exchange)
    return cassette


def test_canonical_forms_render_one_leaf_a_line_and_texts_as_blocks() -> None:
    assert render_canonical({"a": [1, {"b": "x\ny"}], "c": {}, "d": "é"}) == [
        "a[0]: 1",
        "a[1].b: |",
        "    x",
        "    y",
        "c: {}",
        'd: "é"',
    ]


def test_the_nearest_is_the_longest_shared_conversation_and_the_diff_shows_the_change() -> None:
    opening = "task:\nwrite a.py\nrun it"
    recorded = [_request(opening), _request(opening, "ran: ok"), _request("other task")]
    cassette = _cassette(*recorded)
    asked = _request(opening, "ran: failed")
    divergence = Divergence.find(asked, cassette, served=0, recorded=0)
    assert divergence.nearest is cassette.exchanges[1]
    text = divergence.describe()
    assert text.splitlines()[0] == (
        "replay divergence: no recorded answer for this anthropic POST /v1/messages request; "
        "the nearest recorded one is exchange 2"
    )
    assert '-messages[1]: "ran: ok"' in text
    assert '+messages[1]: "ran: failed"' in text
    assert "--- recorded (exchange 2)" in text
    assert divergence.changed_texts() == []  # one-line texts: the diff says it all


def test_changed_multi_line_texts_are_listed_for_the_caller() -> None:
    cassette = _cassette(_request("observe\nthe files\nact"))
    divergence = Divergence.find(
        _request("observe\nthe tests\nact"), cassette, served=0, recorded=0
    )
    assert divergence.changed_texts() == [
        ("messages[0]", "observe\nthe files\nact", "observe\nthe tests\nact")
    ]
    assert "-    the files\n+    the tests" in divergence.diff()


def test_another_endpoint_only_or_an_empty_cassette_say_so() -> None:
    cassette = _cassette(_request("x", endpoint="/v1/complete"))
    divergence = Divergence.find(_request("x"), cassette, served=0, recorded=0)
    assert divergence.nearest is cassette.exchanges[0]  # nothing of the endpoint: any
    empty = Divergence.find(_request("x"), Cassette(), served=0, recorded=0)
    assert empty.nearest is None
    assert empty.describe() == (
        "replay divergence: the cassette holds no anthropic POST /v1/messages request"
    )
    assert "--- recorded (nothing)" in empty.diff()


def test_a_long_diff_is_cut_and_counted() -> None:
    many = "\n".join(f"line {n}" for n in range(300))
    cassette = _cassette(_request(many))
    changed = many.replace("line ", "LINE ")
    divergence = Divergence.find(_request(changed), cassette, served=0, recorded=0)
    lines = divergence.diff(limit=20).splitlines()
    assert len(lines) == 21
    assert lines[-1].startswith("… (")
    assert lines[-1].endswith(" more diff lines)")

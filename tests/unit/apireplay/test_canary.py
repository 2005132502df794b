"""``apireplay.canary``: a replay that answers what the cassette lacks with its nearest
unserved exchange and keeps every request (credentials never), and the comparison of
what two agents sent: system prompt, tools, message roles, headers, fields."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.apireplay import ApiProxy, CanaryProxy, Sent, what_changed
from pytest_ooda.redact import Redactor

from .helpers import Gone, Upstream, post

if TYPE_CHECKING:
    from collections.abc import Iterator

PATH = "/v1/messages"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


def _message(text: str, *, system: str = "You are a test.", **more: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": system}],
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        **more,
    }


def test_a_miss_is_answered_with_the_nearest_unserved_exchange_and_every_request_kept(
    upstream: Upstream,
) -> None:
    with ApiProxy("record", upstreams={"anthropic": upstream.url}).start() as proxy:
        first = post(proxy.url("anthropic") + PATH, _message("first"))
        second = post(proxy.url("anthropic") + PATH, _message("second"))
    gone = Gone()
    try:
        canary = CanaryProxy(cassette=proxy.recording(), redact=Redactor()).start()
        with canary:
            headers = {"x-api-key": "sk-ant-secret", "User-Agent": "agent/2"}
            same = post(canary.url("anthropic") + PATH, _message("first"), headers=headers)
            reworded = post(canary.url("anthropic") + PATH, _message("second", system="New."))
            extra = post(canary.url("anthropic") + PATH, _message("third"))
    finally:
        gone.close()
    assert same[2] == first[2]
    # Not held as sent: the recorded answer to the nearest request, the second one.
    assert reworded[0] == 200
    assert json.loads(reworded[2]) == json.loads(second[2])
    # Nothing left to answer with: a divergence, as in a replay.
    assert extra[0] == 400
    assert [sent.as_recorded for sent in canary.sent] == [True, False, False]
    kept = dict(canary.sent[0].headers)
    assert kept["user-agent"] == "agent/2"
    assert "x-api-key" not in kept
    assert "content-length" not in kept
    assert canary.sent[1].body["system"] == [{"type": "text", "text": "New."}]
    assert canary.forwarded == 0


def _sent(body: dict[str, Any], **headers: str) -> Sent:
    return Sent("anthropic POST /v1/messages", body, tuple(sorted(headers.items())), True)


def test_what_changed_names_each_kind_of_change_once() -> None:
    pinned = [
        _sent(_message("hi", system="One.\nTwo.\nThree."), **{"user-agent": "cli/1"}),
        _sent(_message("again", system="One.\nTwo.\nThree."), **{"user-agent": "cli/1"}),
    ]
    body = _message("hi", system="One.\nTwo, reworded.\nThree.", max_tokens=20)
    body["tools"] = [{"name": "Write", "input_schema": {"type": "object", "x": 1}},
                     {"name": "Search", "input_schema": {}}]  # fmt: skip
    body["messages"].append({"role": "system", "content": "listing"})
    new = [_sent(body, **{"user-agent": "cli/2", "x-new": "yes"})]
    changes = {change.what: change for change in what_changed(pinned, new)}
    assert list(changes) == [
        "requests", "system prompt", "tools", "message roles", "headers", "fields",
    ]  # fmt: skip
    assert changes["requests"].summary == "anthropic POST /v1/messages: 2 -> 1"
    assert changes["system prompt"].summary == "1 line(s) removed, 1 added"
    assert "-Two." in changes["system prompt"].diff
    assert "+Two, reworded." in changes["system prompt"].diff
    assert changes["tools"].summary == "1 added (Search); 1 changed (Write)"
    assert changes["message roles"].summary == "[user] -> [user, system]"
    assert changes["headers"].summary == "1 added (x-new); 1 changed (user-agent)"
    assert changes["headers"].diff == ("user-agent: cli/1 -> cli/2", "+ x-new: yes")
    assert changes["fields"].diff == ("max_tokens: 10 -> 20",)
    assert changes["fields"].lines()[0] == "fields: 1 changed (max_tokens)"


def test_the_same_requests_change_nothing() -> None:
    sent = [_sent(_message("hi"), **{"user-agent": "cli/1"})]
    assert what_changed(sent, list(sent)) == ()


def test_an_openai_request_is_read_by_its_instructions_and_input() -> None:
    before = {"model": "m", "instructions": "Be terse.",
              "input": [{"role": "user", "content": "hi"}],
              "tools": [{"type": "function", "function": {"name": "shell"}}]}  # fmt: skip
    after = {**before, "instructions": "Be kind.",
             "input": [{"role": "developer", "content": "x"}, {"type": "message"}],
             "tools": []}  # fmt: skip
    changes = {c.what: c for c in what_changed([_sent(before)], [_sent(after)])}
    assert changes["system prompt"].diff[-2:] == ("-Be terse.", "+Be kind.")
    assert changes["tools"].summary == "1 removed (shell)"
    assert changes["message roles"].summary == "[user] -> [developer, message]"

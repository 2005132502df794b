"""``apireplay.proxy``: the real proxy between a real HTTP client and a scripted upstream
(tests/unit/apireplay/helpers.py) — every endpoint recorded and replayed, paths,
concurrency, retries, redaction, ``new`` mode, divergences, and an upstream that is never
contacted in replay."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.apireplay import (
    ApiProxy,
    Cassette,
    Normaliser,
    cassette_path,
    read_cassette,
    write_cassette,
)
from pytest_ooda.apireplay.sse import EventReader, coalesce, final_message
from pytest_ooda.redact import Redactor

from .helpers import Gone, Upstream, post

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from pytest_ooda._types import ApiMode

SESSIONS = ("9f0b7e52-1d5c-4b8e-a2a5-3c1e0d9b8f11", "0c3d2e1f-aaaa-4bbb-8ccc-dddddddddddd")
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def gone() -> Iterator[Gone]:
    port = Gone()
    yield port
    port.close()


def _proxy(mode: ApiMode, url: str, cassette: Cassette | None = None, **kw: Any) -> ApiProxy:
    return ApiProxy(
        mode,
        cassette=cassette,
        upstreams={"anthropic": url, "openai": url + "/v1"},
        **kw,
    ).start()


def _message(text: str, *, stream: bool) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 10,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test."}],
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }


#: (provider, path, body) of one call per endpoint the proxy covers.
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("anthropic", "/v1/messages?beta=true", _message("streamed", stream=True)),
    ("anthropic", "/v1/messages", _message("whole", stream=False)),
    ("anthropic", "/v1/messages/count_tokens", _message("count", stream=False)),
    ("openai", "/responses", {"model": "m", "stream": True, "input": "codex says hi"}),
    ("openai", "/chat/completions", {"model": "m", "stream": True,
                                     "messages": [{"role": "user", "content": "chat"}]}),
    ("openai", "/chat/completions", {"model": "m",
                                     "messages": [{"role": "user", "content": "whole chat"}]}),
]  # fmt: skip


def _events(data: bytes) -> list[Any]:
    reader = EventReader()
    return [*reader.feed(data), *reader.close()]


def _answer_text(kind: str, data: bytes) -> str:
    """The text of an Anthropic answer, streamed or whole."""
    message = final_message(_events(data)) if kind.startswith("text/") else json.loads(data)
    return "".join(block.get("text", "") for block in message["content"])


def _call(proxy: ApiProxy, provider: str, path: str, body: Any) -> tuple[int, str, bytes]:
    return post(proxy.url(provider) + path, body)


def _parsed(kind: str, data: bytes) -> Any:
    """What an answer says: a stream's events with its deltas joined (as the cassette
    keeps them), or the JSON."""
    return coalesce(_events(data)) if kind.startswith("text/event-stream") else json.loads(data)


def test_every_endpoint_replays_what_was_recorded_without_the_upstream(
    upstream: Upstream, gone: Gone, tmp_path: Path
) -> None:
    with _proxy("record", upstream.url) as proxy:
        recorded = [_call(proxy, *call) for call in CALLS]
    assert [status for status, _, _ in recorded] == [200] * len(CALLS)
    assert len(upstream.requests) == len(CALLS)
    path = cassette_path(tmp_path / "greet.yml")
    write_cassette(proxy.recording(), path)
    assert path.name == "greet.cassette.jsonl"

    with _proxy("replay", gone.url, read_cassette(path)) as replay:
        replayed = [_call(replay, *call) for call in CALLS]
    assert gone.connections == 0
    assert replay.forwarded == 0
    assert not replay.divergences
    for (status, kind, data), (again, again_kind, again_data) in zip(
        recorded, replayed, strict=True
    ):
        assert (again, again_kind) == (status, kind)
        assert _parsed(again_kind, again_data) == _parsed(kind, data)
    assert json.loads(replayed[2][2]) == {"input_tokens": 42}


def test_the_cassette_holds_each_final_message_beside_its_events(
    upstream: Upstream, tmp_path: Path
) -> None:
    with _proxy("record", upstream.url) as proxy:
        for call in CALLS:
            _call(proxy, *call)
    exchanges = proxy.recording().exchanges
    assert [e.endpoint for e in exchanges] == [
        f"{provider} POST {'/v1' if provider == 'openai' else ''}{path}"
        for provider, path, _ in CALLS
    ]
    streamed = exchanges[0]
    assert streamed.events is not None
    assert [name for name, _ in streamed.events][:2] == ["message_start", "ping"]
    assert streamed.message["content"] == [{"type": "text", "text": "answer 1 to streamed"}]
    assert streamed.message["stop_reason"] == "end_turn"
    assert streamed.message["usage"] == {"input_tokens": 3, "output_tokens": 7}
    assert exchanges[1].events is None
    assert exchanges[1].message["content"][0]["text"] == "answer 2 to whole"
    responses = exchanges[3].message
    assert responses["output"][0]["content"][0]["text"] == "answer 4 to codex says hi"
    chat = exchanges[4].message["choices"][0]
    assert chat["message"]["content"] == "answer 5 to chat"
    assert chat["message"]["tool_calls"][0]["function"] == {"name": "run", "arguments": '{"a":1}'}
    assert chat["finish_reason"] == "tool_calls"
    assert exchanges[4].events is not None
    assert exchanges[4].events[-1] == (None, "[DONE]")
    # The tools and system prompt are one part each, stored once for the whole cassette.
    text = (write_cassette(proxy.recording(), tmp_path / "c.jsonl"), tmp_path / "c.jsonl")[1]
    assert text.read_text().count('"You are a test."') == 1


def test_paths_ids_and_dates_match_across_runs_and_answers_carry_todays_paths(
    upstream: Upstream, gone: Gone, tmp_path: Path
) -> None:
    first, second = tmp_path / "run-1" / "workspace", tmp_path / "run-2" / "workspace"

    def body(workspace: Path, session: str, date: str) -> dict[str, Any]:
        message = _message(f"Primary working directory: {workspace}\nToday is {date}.", stream=True)
        message["metadata"] = {
            "user_id": json.dumps({"device_id": session[:8], "session_id": session})
        }
        return message  # fmt: skip

    upstream.workspace = str(first)
    with _proxy("record", upstream.url, normaliser=Normaliser.for_run(workspace=first)) as proxy:
        status, _, data = _call(
            proxy, "anthropic", "/v1/messages", body(first, SESSIONS[0], "2026-11-27")
        )
    assert status == 200
    assert str(first) + "/made.txt" in data.decode()
    cassette = proxy.recording()
    stored = json.dumps([cassette.parts, [e.as_line() for e in cassette.exchanges]])
    assert str(first) not in stored
    assert "<ooda:workspace>/made.txt" in stored
    assert "Today is <ooda:date>." in stored

    with _proxy(
        "replay", gone.url, cassette, normaliser=Normaliser.for_run(workspace=second)
    ) as replay:
        status, _, data = _call(
            replay, "anthropic", "/v1/messages", body(second, SESSIONS[1], "2027-01-02")
        )
    assert (status, replay.divergences) == (200, [])
    events = _events(data)
    tool = [
        e for e in events if e[1].get("type") == "content_block_delta" and e[1].get("index") == 1
    ]
    written = "".join(e[1]["delta"]["partial_json"] for e in tool)
    assert str(second) + "/made.txt" in written
    assert str(first) not in data.decode()


def test_concurrent_conversations_streaming_and_not_each_get_their_own_answers(
    tmp_path: Path, gone: Gone
) -> None:
    arrived = threading.Barrier(8, timeout=10)

    class Together(Upstream):
        def serve(self, handler: Any) -> None:
            arrived.wait()  # all eight are in flight at once
            super().serve(handler)

    upstream = Together()
    bodies = [_message(f"conversation {n}", stream=n % 2 == 0) for n in range(8)]
    try:
        with _proxy("record", upstream.url) as proxy, ThreadPoolExecutor(8) as pool:
            recorded = list(
                pool.map(lambda b: _call(proxy, "anthropic", "/v1/messages", b), bodies)
            )
    finally:
        upstream.close()
    for n, (status, kind, data) in enumerate(recorded):
        assert status == 200
        assert _answer_text(kind, data).endswith(f"to conversation {n}")
    cassette = proxy.recording()
    assert len(cassette.exchanges) == 8

    order = list(range(8))
    random.Random(7).shuffle(order)
    with _proxy("replay", gone.url, cassette) as replay, ThreadPoolExecutor(8) as pool:
        answers = pool.map(lambda n: _call(replay, "anthropic", "/v1/messages", bodies[n]), order)
        replayed = dict(zip(order, answers, strict=True))
    assert not replay.divergences
    for n in range(8):
        assert _parsed(replayed[n][1], replayed[n][2]) == _parsed(recorded[n][1], recorded[n][2])


def test_the_same_request_twice_is_answered_in_recorded_order_then_diverges(
    upstream: Upstream, gone: Gone
) -> None:
    body = _message("again", stream=False)
    with _proxy("record", upstream.url) as proxy:
        answers = [json.loads(_call(proxy, "anthropic", "/v1/messages", body)[2]) for _ in range(2)]
    assert [a["content"][0]["text"] for a in answers] == ["answer 1 to again", "answer 2 to again"]
    with _proxy("replay", gone.url, proxy.recording()) as replay:
        again = [_call(replay, "anthropic", "/v1/messages", body) for _ in range(3)]
    assert [json.loads(d) for _, _, d in again[:2]] == answers
    assert again[2][0] == 400
    [divergence] = replay.divergences
    assert "holds this request 2 time(s) and all were served" in divergence.describe()


def test_a_529_is_recorded_but_only_the_successful_retry_is_replayed(gone: Gone) -> None:
    upstream = Upstream(fail=1, fail_status=529)
    body = _message("busy", stream=True)
    try:
        with _proxy("record", upstream.url) as proxy:
            first = _call(proxy, "anthropic", "/v1/messages", body)
            retry = _call(proxy, "anthropic", "/v1/messages", body)
    finally:
        upstream.close()
    assert (first[0], retry[0]) == (529, 200)
    cassette = proxy.recording()
    assert [(e.status, e.replay) for e in cassette.exchanges] == [(529, False), (200, True)]
    assert cassette.exchanges[0].as_line()["replay"] is False
    with _proxy("replay", gone.url, cassette) as replay:
        status, _, data = _call(replay, "anthropic", "/v1/messages", body)
    assert status == 200
    assert _parsed("text/event-stream", data) == _parsed("text/event-stream", retry[2])


def test_secrets_and_auth_headers_never_reach_the_cassette_and_the_request_still_matches(
    upstream: Upstream, gone: Gone, tmp_path: Path
) -> None:
    body = _message(f"the deploy token is {TOKEN}\nkeep it safe", stream=True)
    headers = {"x-api-key": "sk-ant-api03-" + "k" * 40, "Authorization": "Bearer " + "b" * 30}
    redactor = Redactor()
    with _proxy("record", upstream.url, redact=redactor) as proxy:
        recorded = post(proxy.url("anthropic") + "/v1/messages", body, headers=headers)
    assert upstream.requests[0][2]["x-api-key"] == headers["x-api-key"]  # forwarded
    path = tmp_path / "secret.cassette.jsonl"
    write_cassette(proxy.recording(), path)
    text = path.read_text()
    assert TOKEN not in text
    assert "<redacted>" in text
    assert "k" * 40 not in text
    assert "b" * 30 not in text
    assert '"redacted": true' in text
    # The answer echoed the token too: it is redacted in the stored events as well.
    assert TOKEN in _answer_text(recorded[1], recorded[2])

    with _proxy("replay", gone.url, read_cassette(path), redact=redactor) as replay:
        status, _, data = post(replay.url("anthropic") + "/v1/messages", body, headers=headers)
    assert (status, replay.divergences) == (200, [])
    assert TOKEN not in data.decode()


def test_new_mode_answers_what_it_has_and_records_only_what_is_missing(
    upstream: Upstream,
) -> None:
    known, unknown = _message("known", stream=False), _message("unknown", stream=True)
    with _proxy("record", upstream.url) as proxy:
        _call(proxy, "anthropic", "/v1/messages", known)
    before = len(upstream.requests)
    with _proxy("new", upstream.url, proxy.recording()) as extend:
        assert _call(extend, "anthropic", "/v1/messages", known)[0] == 200
        assert _call(extend, "anthropic", "/v1/messages", unknown)[0] == 200
    assert len(upstream.requests) == before + 1
    assert upstream.requests[-1][3]["messages"][0]["content"][0]["text"] == "unknown"
    merged = extend.recording()
    assert [e.number for e in merged.exchanges] == [1, 2]
    assert "known" in json.dumps(merged.parts)
    assert "unknown" in json.dumps(merged.parts)


@pytest.mark.parametrize(
    ("provider", "path", "error"),
    [
        ("anthropic", "/v1/messages", lambda b: b["error"]["message"]),
        ("openai", "/chat/completions", lambda b: b["error"]["message"]),
    ],
)
def test_a_request_the_cassette_lacks_is_a_400_and_a_divergence_with_a_diff(
    upstream: Upstream, gone: Gone, provider: str, path: str, error: Any
) -> None:
    old = _message("write hello.py\nthen run it\nthen stop", stream=False)
    new = _message("write hello.py\nthen test it\nthen stop", stream=False)
    with _proxy("record", upstream.url) as proxy:
        _call(proxy, provider, path, old)
    with _proxy("replay", gone.url, proxy.recording()) as replay:
        status, _, data = _call(replay, provider, path, new)
    assert status == 400
    assert "replay divergence" in error(json.loads(data))
    [divergence] = replay.divergences
    assert divergence.nearest is not None
    assert divergence.nearest.number == 1
    text = divergence.describe()
    assert "-    then run it" in text
    assert "+    then test it" in text
    assert "write hello.py" in text  # context around the change
    assert divergence.changed_texts() == [
        ("messages[0].content[0].text", old["messages"][0]["content"][0]["text"],
         new["messages"][0]["content"][0]["text"]),
    ]  # fmt: skip
    assert gone.connections == 0


def test_warm_up_and_paths_outside_the_apis_are_answered_here(upstream: Upstream) -> None:
    with _proxy("record", upstream.url) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        connection.request("HEAD", "/")
        assert connection.getresponse().status == 200
        connection.close()
        assert post(f"http://127.0.0.1:{proxy.port}/elsewhere/x", {})[0] == 200
    assert upstream.connections == 0
    assert proxy.recording().exchanges == []


def test_an_unreachable_upstream_is_a_502_and_a_problem_and_nothing_is_kept() -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    with _proxy("record", url) as proxy:
        status, _, data = _call(proxy, "anthropic", "/v1/messages", _message("x", stream=False))
    assert status == 502
    assert "unreachable" in json.loads(data)["error"]["message"]
    assert len(proxy.problems) == 1
    assert "unreachable" in proxy.problems[0]
    assert proxy.recording().exchanges == []


def test_the_proxy_also_answers_on_a_unix_socket(upstream: Upstream, tmp_path: Path) -> None:
    path = tmp_path / "api.sock"

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(str(path))

    with _proxy("record", upstream.url) as proxy:
        proxy.listen_unix(path)
        connection = UnixConnection("localhost", timeout=10)
        payload = json.dumps(_message("over unix", stream=False))
        connection.request("POST", "/anthropic/v1/messages", body=payload)
        answer = connection.getresponse()
        assert answer.status == 200
        assert "answer 1 to over unix" in answer.read().decode()
        connection.close()
    assert not path.exists()


def test_a_chunked_request_body_is_read_whole(upstream: Upstream) -> None:
    with _proxy("record", upstream.url) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        payload = json.dumps(_message("chunked", stream=False)).encode()
        connection.request(
            "POST", "/anthropic/v1/messages", body=iter([payload[:20], payload[20:]]),
            headers={"Transfer-Encoding": "chunked"}, encode_chunked=True,
        )  # fmt: skip
        assert "answer 1 to chunked" in connection.getresponse().read().decode()
        connection.close()
    assert upstream.requests[0][3]["messages"][0]["content"][0]["text"] == "chunked"


def test_an_exchange_still_being_kept_when_the_agent_is_done_is_waited_for(
    upstream: Upstream,
) -> None:
    # The agent has its answer before the proxy has redacted and kept it.
    def slow(text: str) -> str:
        time.sleep(0.05)
        return text

    with _proxy("record", upstream.url, redact=slow) as proxy:
        assert _call(proxy, "anthropic", "/v1/messages", _message("slow", stream=True))[0] == 200
    assert len(proxy.recording().exchanges) == 1


def test_a_failure_of_the_proxy_is_a_500_and_a_problem_not_a_traceback(
    upstream: Upstream, capfd: pytest.CaptureFixture[str]
) -> None:
    class Broken(Normaliser):
        def request(self, text: str) -> str:
            raise RuntimeError("normaliser broke")

    with _proxy("record", upstream.url, normaliser=Broken()) as proxy:
        status, _, _ = _call(proxy, "anthropic", "/v1/messages", _message("x", stream=False))
    assert status == 500
    assert proxy.problems == [
        "the proxy failed on POST /anthropic/v1/messages: RuntimeError('normaliser broke')"
    ]
    assert "Traceback" not in capfd.readouterr().err
    assert upstream.requests == []


def _raw(proxy: ApiProxy, head: bytes) -> bytes:
    """Send ``head`` (a request's line and headers, nothing more) and read the answer."""
    import socket

    with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as connection:
        connection.sendall(head)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (b"Content-Length: 100000000\r\n", b"413"),
        (b"Transfer-Encoding: chunked\r\n\r\n4000000\r\n", b"413"),
        (b"Content-Length: lots\r\n", b"400"),
    ],
)
def test_a_request_body_over_the_cap_is_refused_before_it_is_read(
    gone: Gone, headers: bytes, status: bytes
) -> None:
    from pytest_ooda.apireplay.proxy import MAX_REQUEST_BYTES

    assert MAX_REQUEST_BYTES < 100_000_000
    with _proxy("replay", gone.url, Cassette()) as proxy:
        head = b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: x\r\n" + headers
        answer = _raw(proxy, head if headers.endswith(b"\r\n\r\n4000000\r\n") else head + b"\r\n")
        assert answer.split(b" ")[1] == status, answer[:200]
        assert any("refused" in problem for problem in proxy.problems)


def test_a_stored_header_with_a_line_break_is_never_served_as_header_lines(
    upstream: Upstream, gone: Gone
) -> None:
    body = _message("whole", stream=False)
    with _proxy("record", upstream.url) as proxy:
        _call(proxy, "anthropic", "/v1/messages", body)
    cassette = proxy.recording()
    # Spoiled in memory: a cassette file holding it is refused when it is read.
    cassette.exchanges[0].headers = {"content-type": "application/json\r\nX-Injected: yes"}
    data = json.dumps(body).encode()
    with _proxy("replay", gone.url, cassette) as replay:
        answer = _raw(
            replay,
            b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data),
        )
    head = answer.split(b"\r\n\r\n", 1)[0]
    assert head.startswith(b"HTTP/1.1 200")
    assert b"X-Injected" not in head

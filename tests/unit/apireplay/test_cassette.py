"""``apireplay.cassette``: the file read and written back unchanged, every broken line a
located error, and exchanges served in recorded order per key, retried errors never."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.apireplay.canonical import digest
from pytest_ooda.apireplay.cassette import (
    Cassette,
    Exchange,
    Matcher,
    cassette_path,
    dump_cassette,
    read_cassette,
    write_cassette,
)
from pytest_ooda.errors import ScenarioError

HEADER = '{"ooda_cassette": 1}'


def _exchange(text: str, *, status: int = 200, replay: bool = True) -> Exchange:
    return Exchange(
        number=0,
        endpoint="anthropic POST /v1/messages",
        request={"model": "m", "messages": [digest(text)]},
        status=status,
        headers={"content-type": "text/event-stream"},
        events=[("message_start", {"type": "message_start"}), (None, "[DONE]")],
        message={"content": [{"type": "text", "text": f"re: {text}"}]},
        replay=replay,
    )


def _cassette(*texts: str, statuses: tuple[int, ...] = ()) -> Cassette:
    cassette = Cassette()
    for index, text in enumerate(texts):
        cassette.parts[digest(text)] = text
        status = statuses[index] if index < len(statuses) else 200
        cassette.add(_exchange(text, status=status, replay=status == 200))
    return cassette


def test_the_cassette_sits_beside_its_scenario() -> None:
    assert cassette_path(Path("s/greet.yml")) == Path("s/greet.cassette.jsonl")
    assert cassette_path(Path("s/greet.scenario.yaml")) == Path("s/greet.scenario.cassette.jsonl")


def test_written_and_read_back_it_is_the_same_and_parts_come_first(tmp_path: Path) -> None:
    cassette = _cassette("hello", "again", "hello", statuses=(200, 529, 200))
    cassette.redacted_parts.add(digest("again"))
    path = tmp_path / "x.cassette.jsonl"
    write_cassette(cassette, path)
    text = path.read_text()
    back = read_cassette(path)
    assert dump_cassette(back) == text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["ooda_cassette"] == 1
    assert [next(iter(line)) for line in lines[1:]] == [
        "part", "exchange", "part", "exchange", "exchange",
    ]  # fmt: skip
    assert lines[3]["redacted"] is True
    assert lines[4]["replay"] is False
    assert [e.line for e in back.exchanges] == [3, 5, 6]
    assert [e.number for e in back.exchanges] == [1, 2, 3]
    assert back.exchanges[0].events == [
        ("message_start", {"type": "message_start"}),
        (None, "[DONE]"),
    ]
    assert back.has_redactions


def _broken(tmp_path: Path, *lines: Any) -> ScenarioError:
    path = tmp_path / "bad.cassette.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    with pytest.raises(ScenarioError) as caught:
        read_cassette(path)
    assert caught.value.file == str(path)
    return caught.value


def test_a_line_that_is_not_json_is_located_to_its_column(tmp_path: Path) -> None:
    error = _broken(tmp_path, HEADER, '{"part": "x", "value": nope}')
    assert (error.line, error.column) == (2, 24)
    assert "not JSON" in error.message
    assert "--ooda-record-api" in str(error.hint)


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (["[1, 2]"], 1, "each line must be a JSON object"),
        (['{"cassette": 2}'], 1, '{"ooda_cassette": 1, ...}'),
        ([], 1, "empty cassette"),
        ([HEADER, {"part": "abc", "value": "x"}], 2, "does not match its value's digest"),
        ([HEADER, {"something": 1}], 2, 'expected a "part" or an "exchange"'),
        ([HEADER, {"exchange": 1, "status": 200, "request": {}}], 2, "no endpoint (str)"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": "200", "request": {}}], 2,
         "no status (int)"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": 200}], 2, "has no request"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": 200, "request": {},
                   "events": [["x"]]}], 2, "[name, data] pairs"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": 200, "request": {},
                   "headers": {"a": 1}}], 2, "headers must map names to strings"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": 200, "request": {},
                   "body": 3}], 2, "body must be a string"),
        ([HEADER, {"exchange": 1, "endpoint": "a", "status": 200,
                   "request": {"messages": ["0123"]}}], 2, "uses part 0123 before any line"),
    ],
)  # fmt: skip
def test_each_broken_line_is_a_located_error(
    tmp_path: Path, lines: list[Any], line: int, message: str
) -> None:
    error = _broken(tmp_path, *lines)
    assert error.line == line
    assert message in error.message


def test_a_cassette_that_is_not_text_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.cassette.jsonl"
    path.write_bytes(b'{"ooda_cassette": 1}\n\xff\xfe')
    with pytest.raises(ScenarioError, match="not valid UTF-8"):
        read_cassette(path)


def test_exchanges_are_served_in_order_per_key_and_each_once() -> None:
    cassette = _cassette("a", "b", "a", "a", statuses=(200, 200, 529, 200))
    first, second, retried, again = cassette.exchanges
    matcher = Matcher(cassette)
    assert matcher.recorded(first.key) == 2  # the 529 is not counted: never served
    assert matcher.take(["nothing", second.key]) is second
    assert matcher.take([first.key]) is first
    assert matcher.take([first.key]) is again
    assert matcher.take([first.key]) is None
    assert matcher.served(first.key) == 2
    assert retried.replay is False


# --------------------------------------------------------------- hostile cassettes
#: An exchange line with a valid request and answer, to be spoiled one field at a time.
_GOOD = {"exchange": 1, "endpoint": "anthropic POST /v1/messages", "status": 200,
         "request": {}, "headers": {"content-type": "application/json"}, "message": {}}  # fmt: skip


@pytest.mark.parametrize(
    ("spoiled", "message"),
    [
        ({"headers": {"content-type": "text/plain\r\nSet-Cookie: a=b"}}, "holds a line break"),
        ({"headers": {"x-a": "ok\nX-Injected: 1"}}, "holds a line break"),
        ({"headers": {"x-a": "nul\x00"}}, "holds a line break or a NUL"),
        ({"headers": {"x-a": "v" * 9000}}, "over 8 KiB"),
        ({"headers": {"bad name": "v"}}, "is no HTTP header name"),
        ({"headers": {"x:y": "v"}}, "is no HTTP header name"),
        ({"status": 99999}, "status 99999 is no HTTP status"),
        ({"status": 0}, "status 0 is no HTTP status"),
    ],
)
def test_a_header_or_status_that_would_break_the_answer_is_refused_on_read(
    tmp_path: Path, spoiled: dict[str, Any], message: str
) -> None:
    error = _broken(tmp_path, HEADER, {**_GOOD, **spoiled})
    assert error.line == 2
    assert message in error.message


@pytest.mark.parametrize("depth", [101, 1_000, 100_000])
def test_a_line_nested_too_deep_is_a_located_error_not_a_traceback(
    tmp_path: Path, depth: int
) -> None:
    deep = "[" * depth + "]" * depth
    error = _broken(tmp_path, HEADER, '{"part": "x", "value": ' + deep + "}")
    assert error.line == 2
    assert "nesting deeper than 100 levels" in error.message
    # Within the bound, the same shape reads (and is refused only for its digest).
    shallow = _broken(tmp_path, HEADER, '{"part": "x", "value": ' + "[" * 90 + "]" * 90 + "}")
    assert "digest" in shallow.message


_EXCHANGE = json.dumps(_GOOD)[:-1]  # an exchange line to which fields are added


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_EXCHANGE + ', "exchange": "abc"}', "exchange must be a number"),
        (_EXCHANGE + ', "exchange": [1]}', "exchange must be a number"),
        (_EXCHANGE + ', "exchange": NaN}', "not JSON: NaN is no JSON number"),
        (_EXCHANGE + ', "status": Infinity}', "not JSON: Infinity is no JSON number"),
        (_EXCHANGE + ', "exchange": ' + "9" * 5000 + "}", "not JSON: Exceeds the limit"),
        (_EXCHANGE + ', "endpoint": "anthropic POST /\\ud800"}', "a lone surrogate"),
        (_EXCHANGE + ', "request": {"model": "\\udfff"}}', "a lone surrogate"),
        ('{"part": "x", "value": "\\ud83d"}', "a lone surrogate"),
        (_EXCHANGE + ', "request": {"messages": [[]]}}', "must name parts (strings)"),
        (_EXCHANGE + ', "request": {"system": {"a": 1}}}', "must name parts (strings)"),
        ("null", "each line must be a JSON object"),
    ],
)
def test_a_line_no_reader_could_use_is_a_located_error_not_a_traceback(
    tmp_path: Path, line: str, message: str
) -> None:
    # Each of these was a ValueError, TypeError or UnicodeEncodeError from reading the
    # cassette or starting the proxy over it (hashing, matching, expanding a request).
    error = _broken(tmp_path, HEADER, line)
    assert error.line == 2
    assert message in error.message
    assert "sys.set_int_max_str_digits" not in error.message


def test_an_escaped_pair_is_a_character_and_a_request_s_text_input_is_no_part(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fine.cassette.jsonl"
    fine = _EXCHANGE + ', "request": {"input": "plain text", "model": "\\ud83d\\ude00"}}'
    path.write_text(HEADER + "\n" + fine + "\n")
    (exchange,) = read_cassette(path).exchanges
    assert exchange.request == {"input": "plain text", "model": "\U0001f600"}
    assert Matcher(read_cassette(path)).take([exchange.key]) is not None


def test_a_cassette_over_its_size_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "big.cassette.jsonl"
    with path.open("w") as handle:
        handle.write(json.dumps({"ooda_cassette": 1}) + "\n")
        handle.truncate(65 * 1024 * 1024)
    with pytest.raises(ScenarioError) as caught:
        read_cassette(path)
    assert caught.value.file == str(path)
    assert "MB" in caught.value.message or "large" in caught.value.message

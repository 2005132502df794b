"""Reading results logs: files merge, damage is located or skipped, summaries leave the
transcripts on disk until a page asks, and a file being written is read as it grows."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from sample_records import record, sample, write

from pytest_ooda.backends import ToolCall
from pytest_ooda.errors import ResultsError
from pytest_ooda.reader import MAX_DEPTH
from pytest_ooda.results import ResultsFile, read_record, read_results

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.results import RunRecord


def _with_transcript(base: RunRecord) -> RunRecord:
    iteration = replace(
        base.iterations[0],
        tool_calls=(ToolCall("Bash", "pytest -q", True),),
        files={"a.py": "created"},  # type: ignore[arg-type]
    )
    return replace(
        base,
        iterations=(iteration,),
        transcript={"prompt": [{"source": "inline", "text": "Do it."}], "iterations": []},
    )


def test_files_and_directories_merge(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", sample(2, 3))
    write(tmp_path / "shards/1/b.jsonl", sample(1, 2))
    write(tmp_path / "shards/2/c.jsonl", sample(0, 1))
    results = read_results([tmp_path / "a.jsonl", tmp_path / "shards"])
    assert len(results.records) == 6
    assert [path.name for path in results.files] == ["a.jsonl", "b.jsonl", "c.jsonl"]
    assert results.warnings == ()


def test_a_record_seen_twice_counts_once(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", sample(2, 3))
    results = read_results([path, path])
    assert len(results.records) == 3
    [warning] = results.warnings
    assert "3 record(s) appear more than once" in str(warning)


def test_an_unfinished_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", sample(2, 3))
    whole = path.read_text()
    path.write_text(whole + record(True).to_line()[:40])
    results = read_results([path])
    assert len(results.records) == 3
    [warning] = results.warnings
    assert warning.file == str(path)
    assert warning.line == 4
    assert "incomplete" in str(warning)


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ('{"schema": "pytest-ooda/results"\n', 1, "not a results record: Expecting ',' delimiter"),
        ("[1, 2]\n", 1, "record: expected an object, got a list"),
        ('{"schema": "other"}\n', 1, "not a pytest-ooda results record (schema 'other')"),
        pytest.param(
            '{"schema": ' + "9" * 5000 + "}\n",
            1,
            "not a results record: Exceeds the limit",
            id="an-integer-of-5000-digits",
        ),
    ],
)
def test_a_damaged_line_is_located(tmp_path: Path, content: str, line: int, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(record(True).to_line() + content)
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    assert caught.value.file == str(path)
    assert caught.value.line == line + 1
    assert message in caught.value.message


def test_a_json_error_has_its_column(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"schema": x}\n\n')
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    assert (caught.value.line, caught.value.column) == (1, 12)


def test_missing_paths_and_empty_directories_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="results file not found"):
        read_results([tmp_path / "nope.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match=r"no results files \(\*\.jsonl\) under"):
        read_results([tmp_path / "empty"])
    with pytest.raises(ResultsError, match="no results files given"):
        read_results([])


def test_binary_junk_is_not_a_results_file(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(record(True).to_line().encode() + b"\xff\xfe\n")
    with pytest.raises(ResultsError) as caught:
        read_results([path])
    assert caught.value.line == 2
    assert "not UTF-8" in caught.value.message


def test_summaries_leave_out_what_only_a_runs_page_shows(tmp_path: Path) -> None:
    runs = [_with_transcript(item) for item in sample(1, 2)]
    path = write(tmp_path / "a.jsonl", runs)
    results = read_results([path], summary=True)
    first = results.records[0]
    assert first.transcript is None
    assert first.iterations[0].tool_calls == ()
    assert first.iterations[0].output_tail == ""
    # What tables need is all there.
    assert (first.id, first.head.run, first.status, len(first.iterations)) == (
        runs[0].id,
        1,
        runs[0].status,
        1,
    )
    assert first.head.fragments == runs[0].head.fragments
    # Every record of a prompt version holds one copy of its fragment list.
    assert results.records[1].head.fragments is first.head.fragments
    # The whole record, read again from its line.
    assert results.whole(first) == runs[0]
    source = results.sources[first.id]
    assert (source.file, source.line) == (path, 1)
    assert read_record(results.sources[runs[1].id]) == runs[1]


def test_a_summary_does_not_check_what_it_leaves_out(tmp_path: Path) -> None:
    data = record(True).to_json()
    data["transcript"] = {"prompt": []}
    data["iterations"][0]["tool_calls"] = [{"summary": "no name"}]
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(data) + "\n")
    [found] = read_results([path], summary=True).records
    assert found.id == data["id"]
    with pytest.raises(ResultsError, match=r"missing field 'iterations\[0\]\.tool_calls\[0\]"):
        read_results([path])


def test_a_file_being_written_is_read_as_it_grows(tmp_path: Path) -> None:
    first, second, third = sample(2, 3)
    path = tmp_path / "a.jsonl"
    path.write_text(first.to_line() + second.to_line()[:30])
    log = ResultsFile(path, summary=True)
    found, warnings = log.read(final=False)
    assert [item.id for _, item in found] == [first.id]
    assert warnings == []
    # The writer finishes the line and adds another: only the new ones are read.
    path.write_text(first.to_line() + second.to_line() + third.to_line())
    found, warnings = log.read(final=False)
    assert [(source.line, item.id) for source, item in found] == [(2, second.id), (3, third.id)]
    assert log.read(final=False) == ([], [])
    # An unfinished line of a session that ended is what it left: a warning, once.
    with open(path, "a") as handle:
        handle.write('{"schema": "pytest-ooda/res')
    assert log.read(final=False) == ([], [])
    found, warnings = log.read(final=True)
    assert found == []
    assert [warning.line for warning in warnings] == [4]
    assert log.read(final=True) == ([], [])


@pytest.mark.parametrize("summary", [False, True])
def test_a_line_nested_too_deeply_is_left_out_with_a_warning(tmp_path: Path, summary: bool) -> None:
    """Nested past Python's parser (1,000 levels) or past MAX_DEPTH inside a field a
    record keeps as it is: each such line is a warning at its line, the others count."""
    first = record(True)
    fields = json.loads(first.to_line())
    deep: object = 1
    for _ in range(MAX_DEPTH):
        deep = {"a": deep}
    lines = [
        first.to_line(),
        "[" * 1000 + "]" * 1000,
        json.dumps({**fields, "id": "deep-expect", "expect": {"b": deep}}),
        json.dumps({**fields, "id": "deep-judge", "judge": {"votes": [deep]}}),
        "[" * 100_000,
        replace(record(False), id="last").to_line(),
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(line.rstrip("\n") + "\n" for line in lines))
    results = read_results([path], summary=summary)
    assert [r.id for r in results.records] == [first.id, "last"]
    said = [(w.line, w.message) for w in results.warnings]
    assert said == [
        (2, f"the record nests deeper than {MAX_DEPTH} levels; the line is left out"),
        (3, f"field 'expect' nests deeper than {MAX_DEPTH} levels; the line is left out"),
        (4, f"field 'judge' nests deeper than {MAX_DEPTH} levels; the line is left out"),
        (5, f"the record nests deeper than {MAX_DEPTH} levels; the line is left out"),
    ]


def test_a_line_nested_within_the_bound_is_read(tmp_path: Path) -> None:
    fields = json.loads(record(True).to_line())
    deep: object = 1
    for _ in range(MAX_DEPTH):
        deep = {"a": deep}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({**fields, "expect": deep}) + "\n")
    [kept] = read_results([path]).records
    assert kept.head.expect is not None


def test_a_lone_surrogate_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    # "\ud800" alone is valid JSON but no text: ooda report printed it with a
    # UnicodeEncodeError traceback (found in issue 39's audit). A pair is a character.
    fields = json.loads(record(True).to_line())
    fields["procedure"] = "build\ud800"
    fields["iterations"][0]["output_tail"] = "tail \udfff and \U0001f600"
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(fields) + "\n")
    assert "\\ud800" in path.read_text()
    [kept] = read_results([path]).records
    assert kept.head.procedure == "build\ufffd\ufffd\ufffd"
    tail = kept.iterations[0].output_tail
    assert tail == "tail \ufffd\ufffd\ufffd and \U0001f600"
    (kept.head.procedure + tail).encode("utf-8")

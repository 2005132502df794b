"""The results record: round-trips through its line, and every wrong field is named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sample_records import changed, record, sample

from pytest_ooda.errors import ResultsError
from pytest_ooda.results import (
    SCHEMA_VERSION,
    ResultsLog,
    SessionStamp,
    decode_record,
    read_results,
    session_stamp,
)


def test_a_record_round_trips_through_its_line() -> None:
    original = record(True, iterations=3, cost=0.25, tokens=1200, gates={"max_mean_cost": 1})
    line = original.to_line()
    assert line.endswith("\n")
    assert line.count("\n") == 1
    assert decode_record(json.loads(line)) == original


def test_verification_commands_round_trip() -> None:
    from dataclasses import replace

    from pytest_ooda.scenario import CommandOutcome

    original = replace(
        record(False),
        commands=(
            CommandOutcome("pytest -q", 1, 0, 2.5, problem="exited 1", output_tail="1 failed"),
            CommandOutcome("true", 0, 0, 0.0),
        ),
    )
    data = json.loads(original.to_line())
    assert [command["passed"] for command in data["commands"]] == [False, True]
    assert decode_record(data) == original


def test_undecodable_output_stays_one_valid_line() -> None:
    # An agent's undecodable bytes are kept as lone surrogates.
    original = record(False)
    from dataclasses import replace

    broken = replace(
        original,
        iterations=(replace(original.iterations[0], output_tail="bad \udcff bytes\nnext"),),
    )
    line = broken.to_line()
    line.encode("ascii")
    assert decode_record(json.loads(line)).iterations[0].output_tail == "bad \udcff bytes\nnext"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "done"}, "field 'status': expected one of success, max-iters, aborted"),
        ({"outcome": 1}, "field 'outcome': expected a string, got an integer (1)"),
        ({"run": True}, "field 'run': expected an integer, got a boolean (true)"),
        ({"elapsed_s": None}, "field 'elapsed_s': expected a number, got null"),
        ({"problems": [1]}, "field 'problems': expected a list of strings"),
        ({"files_changed": {"a": "renamed"}}, "expected one of created, modified, deleted"),
        ({"version": SCHEMA_VERSION + 1}, "is newer than this pytest-ooda reads"),
    ],
)
def test_a_wrong_field_is_named(tmp_path: Path, change: dict[str, object], message: str) -> None:
    data = record(True).to_json()
    data.update(change)
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(ResultsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_results([path])


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    data = record(True).to_json()
    del data["procedure"]
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(ResultsError, match="missing field 'procedure'"):
        read_results([path])


def test_fields_added_later_in_a_version_may_be_missing(tmp_path: Path) -> None:
    data = record(True).to_json()
    for optional in ("worker", "shard", "usage", "fragments", "files_changed", "model"):
        del data[optional]
    data["a_field_from_the_future"] = {"ignored": True}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(data) + "\n")
    [found] = read_results([path]).records
    assert found.head.worker is None
    assert found.usage is None


def test_the_log_creates_a_new_file_and_never_touches_an_existing_one(tmp_path: Path) -> None:
    stamp = session_stamp(0, unique="abc123")
    assert stamp == "19700101T000000Z-abc123"
    taken = tmp_path / "results" / f"{stamp}.jsonl"
    taken.parent.mkdir()
    taken.write_text("someone's work\n")
    log = ResultsLog(tmp_path / "results", session=stamp, ignore_dir=tmp_path / "results")
    assert log.path is None
    first, second = sample(1, 2)
    log.append(first)
    log.append(second)
    log.close()
    assert log.path == tmp_path / "results" / f"{stamp}-2.jsonl"
    assert taken.read_text() == "someone's work\n"
    # An existing directory gets no .gitignore of ours.
    assert not (tmp_path / "results/.gitignore").exists()
    assert [item.id for item in read_results([log.path]).records] == [first.id, second.id]


def test_sessions_started_in_one_second_have_names_of_their_own() -> None:
    names = {session_stamp(0) for _ in range(50)}
    assert len(names) == 50
    assert all(re.fullmatch(r"19700101T000000Z-[0-9a-f]{6}", name) for name in names)


def test_a_session_stamp_names_the_session_and_the_repository(tmp_path: Path) -> None:
    import subprocess

    stamp = SessionStamp.start(tmp_path, started=0)
    # Not a repository; a session of its own series.
    assert re.fullmatch(r"19700101T000000Z-[0-9a-f]{6}", stamp.session)
    assert (stamp.series, stamp.git_commit, stamp.git_dirty) == (stamp.session, None, None)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "f").write_text("x")
    subprocess.run(["git", "add", "f"], cwd=tmp_path, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        cwd=tmp_path,
        check=True,
    )
    (tmp_path / "f").write_text("changed")
    resumed = SessionStamp.start(tmp_path, series="20250101T000000Z")
    assert resumed.series == "20250101T000000Z"
    assert resumed.git_commit is not None
    assert len(resumed.git_commit) == 40
    assert resumed.git_dirty is True
    assert SessionStamp.from_json(resumed.to_json()) == resumed


def test_version_three_fields_round_trip() -> None:

    original = changed(
        record(False),
        outcome="error",
        error_reason="API Error: 529 overloaded",
        retries=2,
        sandbox={"kind": "docker", "image": "ooda-test:1", "image_id": "sha256:abc"},
        variant="haiku",
        judge={"verdict": "fail", "votes": []},
        replaces="id-0",
    )
    data = json.loads(original.to_line())
    assert data["version"] == SCHEMA_VERSION == 3
    assert data["replaces"] == "id-0"
    # The outcome alone says how a run counts: no `success` beside it.
    assert "success" not in data
    assert (data["outcome"], data["retries"], data["variant"]) == ("error", 2, "haiku")
    back = decode_record(data)
    assert back == original
    assert not back.valid


def test_a_version_one_line_reads_its_outcome_from_success() -> None:
    data = json.loads(record(True).to_line())
    data["version"] = 1
    for key in ("outcome", "error_reason", "retries", "sandbox", "variant", "judge"):
        del data[key]
    data["success"] = True
    assert decode_record(data).outcome == "success"
    data["success"] = False
    back = decode_record(data)
    assert (back.outcome, back.valid, back.retries) == ("failure", True, 0)
    del data["success"]
    with pytest.raises(ResultsError, match="missing field 'success'"):
        decode_record(data)


def test_a_version_two_line_reads_its_outcome_and_checks_success_against_it() -> None:
    data = {**json.loads(record(False).to_line()), "version": 2}
    data.update(outcome="error", success=False)
    assert decode_record(data).outcome == "error"
    # Written before a run's outcome was recorded: its success says.
    del data["outcome"]
    data["success"] = True
    assert decode_record(data).outcome == "success"
    data.update(outcome="failure")
    with pytest.raises(ResultsError, match="'outcome' is 'failure' but 'success' is true"):
        decode_record(data)


def test_a_version_three_line_needs_its_outcome() -> None:
    data = json.loads(record(True).to_line())
    del data["outcome"]
    with pytest.raises(ResultsError, match="missing field 'outcome'"):
        decode_record(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"outcome": "crashed"}, "field 'outcome': expected one of success, failure, error"),
        (
            {"version": 2, "outcome": "failure", "success": True},
            "field 'outcome' is 'failure' but 'success' is true",
        ),
        ({"retries": -1}, "field 'retries': expected a count >= 0, got -1"),
        ({"sandbox": "docker"}, "field 'sandbox': expected an object, got a string"),
        # The reports show a sandbox's kind and image: a hand-edited one is named here,
        # never a template's error.
        ({"sandbox": {"image": "x"}}, "missing field 'sandbox.kind'"),
        ({"sandbox": {"kind": 3}}, "field 'sandbox.kind': expected a string, got an integer"),
        ({"sandbox": {"kind": "docker", "image": 5}}, "field 'sandbox.image': expected a string"),
    ],
)
def test_fields_are_checked(change: dict[str, object], message: str) -> None:
    data = {**json.loads(record(True).to_line()), **change}
    with pytest.raises(ResultsError, match=r"^f\.jsonl:3: ") as caught:
        decode_record(data, file="f.jsonl", line=3)
    assert message in str(caught.value)


def test_a_sandbox_without_an_image_reads_with_the_image_null() -> None:
    data = {**json.loads(record(True).to_line()), "sandbox": {"kind": "bwrap"}}
    sandbox = decode_record(data).sandbox
    assert sandbox is not None
    assert dict(sandbox) == {"kind": "bwrap", "image": None, "image_id": None}


def _documented_fields() -> set[str]:
    """The fields the results-log table of docs/evaluating.md names (first column)."""
    docs = Path(__file__).resolve().parents[3] / "docs" / "evaluating.md"
    text = docs.read_text(encoding="utf-8")
    table = text[text.index("### Schema (version") :].split("\n\n")[2]
    names: set[str] = set()
    for row in table.splitlines()[2:]:
        names.update(re.findall(r"`([a-z_0-9]+)`", row.split("|")[1]))
    return names


def test_the_documented_schema_is_the_records_json() -> None:
    """The record is declared once (results/schema.py) and its JSON line follows from
    the declaration: every key it writes is a row of the documented schema, and every
    row a key it writes."""
    assert set(record(True).to_json()) == _documented_fields()

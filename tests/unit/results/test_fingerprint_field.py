"""The record's ``fingerprint`` (and its head's ``variant_keys`` and ``control``): written
and read back the same, built with the model the API reported and what came from the
user's files redacted, every wrong part named at its line, an older line without it
read as ``None``; shown with its run in the HTML report and on ``ooda view``'s run page."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest
from sample_records import changed, record, write

from pytest_ooda.errors import ResultsError
from pytest_ooda.facts import Fingerprint, LoadedItem
from pytest_ooda.redact import Redactor
from pytest_ooda.report import fingerprint_text, render_html
from pytest_ooda.results import decode_record
from pytest_ooda.results.builder import _fingerprint
from pytest_ooda.stats import summarize

if TYPE_CHECKING:
    from pathlib import Path

PRINT = Fingerprint(
    agent="claude",
    version="2.1.197 (Claude Code)",
    model="claude-opus-4-8",
    settings="5" * 64,
    env=("LANG", "PATH"),
    loaded=MappingProxyType(
        {
            "skills": (LoadedItem("greet", "a" * 64, "project"),),
            "hooks": (LoadedItem("PreToolUse:Write", "b" * 64, "user"),),
        }
    ),
)


def test_a_fingerprint_round_trips_through_its_line() -> None:
    original = changed(
        record(True), fingerprint=PRINT, variant_keys=("ai_cmd", "claude"), control=True
    )
    data = json.loads(original.to_line())
    assert data["fingerprint"] == {
        "agent": "claude",
        "version": "2.1.197 (Claude Code)",
        "model": "claude-opus-4-8",
        "settings": "5" * 64,
        "env": ["LANG", "PATH"],
        "loaded": {
            "skills": [{"name": "greet", "scope": "project", "sha256": "a" * 64}],
            "hooks": [{"name": "PreToolUse:Write", "scope": "user", "sha256": "b" * 64}],
        },
    }
    assert data["variant_keys"] == ["ai_cmd", "claude"]
    assert data["control"] is True
    assert decode_record(data) == original
    assert decode_record(data, summary=True).fingerprint == PRINT


def test_a_line_written_before_fingerprints_reads_without_one() -> None:
    data = json.loads(record(True).to_line())
    for key in ("fingerprint", "variant_keys", "control"):
        del data[key]
    found = decode_record(data)
    assert found.fingerprint is None
    assert found.head.variant_keys == ()
    assert found.head.control is False


def _with(fingerprint: dict[str, Any]) -> dict[str, Any]:
    return {**json.loads(changed(record(True), fingerprint=PRINT).to_line()),
            "fingerprint": fingerprint}  # fmt: skip


@pytest.mark.parametrize(
    ("fingerprint", "message"),
    [
        ({"version": "1"}, "missing field 'fingerprint.agent'"),
        ({"agent": 3}, "field 'fingerprint.agent': expected a string, got an integer"),
        ({"agent": "a", "env": "PATH"}, "field 'fingerprint.env': expected a list of strings"),
        (
            {"agent": "a", "loaded": {"secrets": []}},
            "field 'fingerprint.loaded': expected kinds among skills, commands",
        ),
        (
            {"agent": "a", "loaded": {"skills": [{"name": "x", "sha256": "y", "scope": "z"}]}},
            "field 'fingerprint.loaded.skills[0].scope': expected one of user, project",
        ),
        (
            {"agent": "a", "loaded": {"skills": [{"name": "x", "scope": "user"}]}},
            "missing field 'fingerprint.loaded.skills[0].sha256'",
        ),
    ],
)
def test_a_wrong_fingerprint_is_named_at_its_line(
    fingerprint: dict[str, Any], message: str
) -> None:
    with pytest.raises(ResultsError, match=r"^f\.jsonl:4: ") as caught:
        decode_record(_with(fingerprint), file="f.jsonl", line=4)
    assert message in str(caught.value)


def test_the_builder_adds_the_reported_model_and_redacts_what_came_from_files() -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    planted = Fingerprint(
        agent="claude",
        version=f"1.0 {secret}",
        loaded=MappingProxyType({"mcp": (LoadedItem(secret, "c" * 64, "user"),)}),
    )
    built = _fingerprint(planted, "claude-haiku", Redactor())
    assert built is not None
    assert built.model == "claude-haiku"
    assert secret not in json.dumps(built.as_dict())
    assert _fingerprint(None, "m", Redactor()) is None


def test_the_html_report_shows_each_runs_fingerprint() -> None:
    html = render_html(summarize([changed(record(True), fingerprint=PRINT)]), k=3, title="t")
    assert 'class="fingerprint"' in html
    assert "2.1.197 (Claude Code)" in html
    assert '<tr data-kind="skills"><td>skills</td><td><code>greet</code></td>' in html
    assert fingerprint_text(PRINT) == (
        "claude 2.1.197 (Claude Code) · model claude-opus-4-8 · settings 555555555555 · "
        "env LANG, PATH · loaded: skills greet (project); hooks PreToolUse:Write (user)"
    )


def test_ooda_views_run_page_shows_the_fingerprint_read_from_the_log(tmp_path: Path) -> None:
    from pytest_ooda.view import ResultsIndex, Viewer

    shown = changed(record(True), id="with-print", fingerprint=PRINT)
    write(tmp_path / "20250101T000000Z.jsonl", [shown, changed(record(True), id="without")])
    viewer = Viewer(ResultsIndex([tmp_path]), k=3)
    page = viewer.respond("/run/with-print")
    assert page.status == 200
    html = page.body.decode("utf-8")
    assert 'class="fingerprint"' in html
    assert "<code>2.1.197 (Claude Code)</code>" in html
    hook = "<td><code>PreToolUse:Write</code></td><td>user</td><td><code>bbbbbbbbbbbb</code>"
    assert hook in html
    # A run recorded without one (an HTTP API, an older line) shows none.
    assert 'class="fingerprint"' not in viewer.respond("/run/without").body.decode("utf-8")

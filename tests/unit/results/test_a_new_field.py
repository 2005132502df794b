"""A new results-log field, added the way ``docs/architecture.md``'s recipe says, in a
copy of the package: one line in ``results/schema.py`` (the field and its column) and
two in ``results/builder.py`` (where its value comes from). Nothing else changes, and
the field is written to the log, read back and checked when read (the full and the
summary reader), noted by the text report when a scenario's runs differ in it, and
shown with its run in the static HTML report and on ``ooda view``'s run page."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from pytest_ooda.results import RunRecord

PACKAGE = Path(__file__).resolve().parents[3] / "pytest_ooda"

#: The recipe's edits: (file, the line it goes before, the lines added).
EDITS = (
    (
        "results/schema.py",
        "    #: What the HTML transcript view shows",
        "    agent_version: str | None = field(\n"
        '        default=None, metadata=column(kinds=STR, label="agent version", compare=True)\n'
        "    )\n",
    ),
    (
        "results/builder.py",
        "    protected_changes: Sequence[str] = (),\n",
        "    agent_version: str | None = None,\n",
    ),
    (
        "results/builder.py",
        "        transcript=transcript,\n",
        "        agent_version=agent_version,\n",
    ),
)

SCRIPT = """
import json, sys
from pathlib import Path

import pytest_ooda
from pytest_ooda.errors import ResultsError
from pytest_ooda.report import notes, render_html
from pytest_ooda.results import RecordHead, ResultsLog, build_record, decode_record, read_results
from pytest_ooda.stats import summarize
from pytest_ooda.view import ResultsIndex, Viewer

here = Path(sys.argv[1])


class Loop:
    status = "success"
    records = ()
    elapsed = 1.0
    usage = None
    error = None
    infra_error = None
    retries = 0


def run(number, version):
    return build_record(
        RecordHead(procedure="build", scenario="happy", run=number, runs=2),
        Loop(),
        "success",
        redactor=lambda text: text,
        redact_call=lambda call, redact: call,
        started_at=0.0,
        finished_at=1.0,
        agent_version=version,
    )


log = ResultsLog(here / "results", session="20250101T000000Z-abcdef")
first, second = run(1, "2.1.197"), run(2, "2.1.198")
log.append(first)
path = log.append(second)
log.close()
line = json.loads(path.read_text().splitlines()[0])
whole = read_results([path]).records
summary = read_results([path], summary=True).records
try:
    decode_record({**line, "agent_version": 5}, file="log.jsonl", line=1)
    refused = None
except ResultsError as error:
    refused = str(error)
old = {key: value for key, value in line.items() if key != "agent_version"}
stats = summarize(whole, k=2)
page = Viewer(ResultsIndex([here / "results"]), k=2).respond(f"/run/{first.id}")
print(json.dumps({
    "package": pytest_ooda.__file__,
    "line": line.get("agent_version"),
    "whole": [record.agent_version for record in whole],
    "summary": [record.agent_version for record in summary],
    "refused": refused,
    "old": decode_record(old).agent_version,
    "notes": notes(stats),
    "html": render_html(stats, k=2, title="report"),
    "viewer": page.body.decode(),
}))
"""


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "src" / "pytest_ooda"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name, before, added in EDITS:
        path = copy / name
        text = path.read_text(encoding="utf-8")
        assert text.count(before) == 1, f"{name}: the recipe's anchor moved: {before!r}"
        path.write_text(text.replace(before, added + before), encoding="utf-8")
    return copy


def _changed(copy: Path) -> list[str]:
    """The files of the copy that differ from the package's."""
    changed: list[str] = []

    def walk(compare: filecmp.dircmp[str], prefix: str) -> None:
        changed.extend(prefix + name for name in compare.diff_files)
        changed.extend(prefix + name for name in compare.left_only + compare.right_only)
        for name, inner in compare.subdirs.items():
            if name != "__pycache__":
                walk(inner, f"{prefix}{name}/")

    walk(filecmp.dircmp(PACKAGE, copy, ignore=["__pycache__"]), "")
    return sorted(changed)


def test_a_new_field_takes_two_files_and_reaches_every_report(tmp_path: Path) -> None:
    assert "agent_version" not in {item.name for item in fields(RunRecord)}
    copy = _copy(tmp_path)
    assert _changed(copy) == ["results/builder.py", "results/schema.py"]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(copy.parent), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["package"] == str(copy / "__init__.py")
    # Written, read back whole and as a summary, checked when read, absent in old lines.
    assert found["line"] == "2.1.197"
    assert found["whole"] == found["summary"] == ["2.1.197", "2.1.198"]
    assert found["refused"] == (
        "log.jsonl:1: field 'agent_version': expected a string, got an integer (5)"
    )
    assert found["old"] is None
    # The text report notes the scenario whose runs differ in it ...
    assert (
        "note: build/happy: its runs differ in agent version (2.1.197 ×1, 2.1.198 ×1)"
        in found["notes"]
    )
    # ... and each run shows it, in the static report and on the viewer's run page.
    assert "agent version <code>2.1.197</code>" in found["html"]
    assert "agent version <code>2.1.198</code>" in found["html"]
    assert "agent version <code>2.1.197</code>" in found["viewer"]

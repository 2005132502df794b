"""A results log holding a line nested 1,000 levels deep (past Python's JSON parser) or a
field nested past the readers' bound: every ``ooda report`` and ``ooda compare`` form
leaves that line out with a warning at its file and line, and reports the rest — never
a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from sample_records import changed, sample, write

from pytest_ooda.reader import MAX_DEPTH

if TYPE_CHECKING:
    from pathlib import Path

FORMS = {
    "report": ["report", "{deep}"],
    "report --markdown": ["report", "{deep}", "--markdown"],
    "report --html": ["report", "{deep}", "--html", "{out}/report.html"],
    "report --check": ["report", "{deep}", "--check"],
    "compare": ["compare", "{deep}", "{other}"],
    "compare --markdown": ["compare", "{deep}", "{other}", "--markdown"],
    "compare --html": ["compare", "{deep}", "{other}", "--html", "{out}/compare.html"],
    "compare --by variant": ["compare", "--by", "variant", "{deep}"],
}


def _nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.fixture(params=["parser", "field"])
def logs(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    variants = [changed(r, variant="a") for r in sample(3, 4)]
    variants += [changed(r, variant="b") for r in sample(2, 4)]
    good = write(tmp_path / "good.jsonl", variants)
    fields = json.loads(good.read_text().splitlines()[0])
    if request.param == "parser":
        planted = "[" * 1000 + "]" * 1000
    else:
        planted = json.dumps({**fields, "id": "planted", "judge": _nested(MAX_DEPTH + 1)})
    deep = tmp_path / "deep.jsonl"
    deep.write_text(good.read_text() + planted + "\n")
    other = write(tmp_path / "other.jsonl", sample(1, 4))
    return {"deep": str(deep), "other": str(other), "out": str(tmp_path)}


@pytest.mark.parametrize("form", FORMS)
def test_every_report_and_compare_form_leaves_the_line_out(logs: dict[str, str], form: str) -> None:
    argv = [word.format(**logs) for word in FORMS[form]]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr  # 2 would be "unreadable results"
    assert "deep.jsonl:9: " in done.stderr
    assert f"nests deeper than {MAX_DEPTH} levels; the line is left out" in done.stderr
    assert done.stdout.strip() or form.endswith("--html")

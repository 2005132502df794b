"""Helpers shared by the judge tests: a scenario file, a judge block, a spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.judge import JudgeBackendSpec, JudgeSpec

if TYPE_CHECKING:
    from pathlib import Path

JUDGE = """\
procedure: b
expect:
  judge:
    rubric: The plan covers the request.
    judge: {ai_cmd: "claude -p --output-format json"}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yml"
    path.write_text(text, encoding="utf-8")
    return path


def spec(votes: int = 3, **changes: object) -> JudgeSpec:
    return JudgeSpec(
        rubric="r",
        backend=JudgeBackendSpec(ai_cmd="judge"),
        votes=votes,
        **changes,  # type: ignore[arg-type]
    )

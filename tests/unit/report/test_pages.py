"""The matrix of scenarios × variants, a cell's verdict colour, a session's badge."""

from __future__ import annotations

import pytest
from sample_records import changed, sample

from pytest_ooda.report.pages import cell_verdict, matrix, session_verdict
from pytest_ooda.stats import summarize

GATES = {"success_rate": {"min": 0.8}}


class Links:
    def run(self, record: object) -> str:
        return "#run"

    def cell(self, stats: object) -> str | None:
        return f"/cell/{stats.label}"  # type: ignore[attr-defined]

    def outputs(self, procedure: str, scenario: str) -> str | None:
        return f"/outputs/{procedure}/{scenario}"


def _variant(records: list, name: str | None) -> list:  # type: ignore[type-arg]
    return [changed(item, variant=name) for item in records]


@pytest.mark.parametrize(
    ("successes", "runs", "gates", "verdict"),
    [(5, 5, None, "success"), (0, 5, None, "failure"), (3, 5, None, "mixed"),
     (5, 5, GATES, "passed"), (3, 5, GATES, "failed")],
)  # fmt: skip
def test_a_cell_is_coloured_by_its_verdict(
    successes: int, runs: int, gates: dict[str, object] | None, verdict: str
) -> None:
    [stats] = summarize(sample(successes, runs, gates=gates))
    assert cell_verdict(stats) == verdict


def test_a_cell_without_valid_runs_is_an_error_and_a_short_running_one_pending() -> None:
    [errors] = summarize(sample(0, 2, outcome="error", error_reason="rate-limit: 429"))
    assert cell_verdict(errors) == "error"
    [few] = summarize([changed(item, runs=10) for item in sample(1, 2, gates=GATES)])
    assert cell_verdict(few) == "failed"
    assert cell_verdict(few, running=True) == "pending"


def test_the_matrix_has_a_row_per_scenario_and_a_column_per_variant() -> None:
    records = [
        *_variant(sample(5, 5), None),
        *_variant(sample(4, 5), "opus"),
        *_variant(sample(1, 4, scenario="sad"), "opus"),
    ]
    found = matrix(summarize(records), Links())
    assert found["columns"] == ["(default)", "opus"]
    happy, sad = found["rows"]
    assert happy["label"] == "build/happy"
    assert happy["outputs"] == "/outputs/build/happy"
    default, opus = happy["cells"]
    assert (default["verdict"], default["rate"], default["interval"]) == (
        "success",
        "100%",
        "57%–100%",
    )
    assert (opus["verdict"], opus["successes"], opus["valid"]) == ("mixed", 4, 5)
    assert opus["href"] == "/cell/build/happy@opus"
    # A scenario that ran under one variant only: an empty cell, no side by side.
    assert sad["cells"][0] is None
    assert sad["outputs"] is None


def test_a_sessions_badge() -> None:
    passed = summarize(sample(5, 5, gates=GATES))
    failed = summarize(sample(1, 5, gates=GATES))
    assert session_verdict(passed) == ("passed", "1 gate(s) met")
    assert session_verdict(failed) == ("failed", "1 of 1 gate(s) missed")
    assert session_verdict(failed, running=True) == ("running", "running")
    assert session_verdict(passed, interrupted=True) == ("interrupted", "interrupted")
    assert session_verdict(summarize(sample(3, 4))) == (
        "mixed",
        "3 of 4 run(s) succeeded · no gates",
    )

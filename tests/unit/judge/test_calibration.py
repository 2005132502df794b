"""Calibration figures against a hand computation, cached gradings, Cohen's kappa."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.judge import (
    LabelledExample,
    cache_for,
    calibrate,
    cohens_kappa,
)
from pytest_ooda.judge.ask import RawAnswer
from pytest_ooda.judge.calibration import render

from .helpers import spec

if TYPE_CHECKING:
    from pathlib import Path


# Per example: the label, and the verdicts its three gradings get.
CALIBRATION = {
    "e1": ("pass", ["pass", "pass", "fail"]),
    "e2": ("fail", ["fail", "fail", "fail"]),
    "e3": ("pass", ["fail", "fail", "pass"]),
    "e4": ("fail", ["pass", "fail", "fail"]),
}


class ScriptedJudge:
    """Answers each example's gradings in the scripted order (found by its output)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = defaultdict(int)

    def __call__(self, prompt: str) -> RawAnswer:
        name = next(name for name in CALIBRATION if f"output of {name}" in prompt)
        verdict = CALIBRATION[name][1][self.calls[name]]
        self.calls[name] += 1
        return RawAnswer(f'{{"verdict": "{verdict}", "reason": "because"}}')


def examples() -> list[LabelledExample]:
    return [
        LabelledExample(label=label, output=f"output of {name}", name=name)  # type: ignore[arg-type]
        for name, (label, _) in CALIBRATION.items()
    ]


def test_calibration_figures_match_a_hand_computation(tmp_path: Path) -> None:
    judge = ScriptedJudge()
    found = calibrate(spec(1, inputs=("output",)), examples(), judge, runs=3)
    # By hand: 8 of 12 gradings match their label (2 + 3 + 1 + 2).
    assert found.accuracy == pytest.approx(8 / 12)
    # Majorities: pass, fail, fail, fail against labels pass, fail, pass, fail: 3 of 4.
    assert found.majority_accuracy == pytest.approx(3 / 4)
    # Pairwise agreement of three gradings: 1/3 when split 2-1, 1 when unanimous.
    assert found.agreement == pytest.approx((1 / 3 + 1 + 1 / 3 + 1 / 3) / 4)
    # Kappa: p_o = 8/12; the judge says pass 4/12 times, the labels 6/12 times, so
    # p_e = 4/12 * 6/12 + 8/12 * 6/12 = 1/2 and kappa = (2/3 - 1/2) / (1/2) = 1/3.
    assert found.kappa == pytest.approx(1 / 3)
    text = "\n".join(render(found, title="judge check b/s"))
    assert "4 labelled example(s) x 3 run(s) = 12 grading(s)" in text
    assert "e3" in text
    assert "<- disagrees with the label" in text
    assert "Cohen's kappa vs the labels:             0.33" in text

    # Cached: a second check asks the judge nothing.
    cache = cache_for(tmp_path)
    calibrate(spec(1, inputs=("output",)), examples(), ScriptedJudge(), runs=3, cache=cache)
    idle = ScriptedJudge()
    again = calibrate(spec(1, inputs=("output",)), examples(), idle, runs=3, cache=cache)
    assert sum(idle.calls.values()) == 0
    assert again.kappa == pytest.approx(1 / 3)


def test_cohens_kappa_edge_cases() -> None:
    assert cohens_kappa([]) is None
    assert cohens_kappa([("pass", "pass")] * 4) is None  # one class only: undefined
    assert cohens_kappa([("pass", "pass"), ("fail", "fail")]) == 1.0
    assert cohens_kappa([("pass", "fail"), ("fail", "pass")]) == -1.0

"""Differential test: random templates rendered by our engine and by Go 1.19 must agree.

Runs only when ``go`` is on PATH (the golden test in test_conformance.py covers CI).
Each Hypothesis example is a batch of generated cases sent to one Go process.
"""

from __future__ import annotations

import base64
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools" / "gotemplate-oracle"))

import oracle  # noqa: E402
from generator import Gen, PrintfGen, SafeGen  # noqa: E402
from test_conformance import outcome  # noqa: E402

pytestmark = pytest.mark.skipif(
    not oracle.go_available(), reason="needs `go` and yaml.v3 (golang-gopkg-yaml.v3-dev)"
)

BATCH = 12


def _go_outcome(res: dict[str, str]) -> tuple[str, str]:
    if res["kind"] != "ok":
        return res["kind"], res["error"]
    if "output_b64" in res:
        return "ok", base64.b64decode(res["output_b64"]).decode("utf-8", "surrogateescape")
    return "ok", res.get("output", "")


@settings(
    max_examples=100,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_templates_match_go(seed: int) -> None:
    gen = (Gen, SafeGen, PrintfGen)[seed % 3](random.Random(seed))
    cases = [
        {"id": str(i), "template": gen.template(), "params": gen.params()} for i in range(BATCH)
    ]
    results = oracle.run(cases)
    for case, res in zip(cases, results, strict=True):
        assert res["kind"] != "yaml", res
        assert outcome(case["template"], case["params"]) == _go_outcome(res), case

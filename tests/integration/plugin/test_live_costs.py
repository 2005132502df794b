"""Tokens and cost of repeated live runs through the HTTP backend (a ``responses``
stub serving the in-process session), and the ``max_mean_cost`` gate."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from ooda_project import GREET_CONFIG

if TYPE_CHECKING:
    from ooda_project import Project

    from pytest_ooda.plugin import HttpAIStub

API = """\
loop:
  ai_api:
    provider: anthropic
    model: test-model
    price_input_per_mtok: 3
    price_output_per_mtok: 15
"""
RUN_COST = (1000 * 3 + 100 * 15) / 1e6


@pytest.fixture
def priced(project: Project, ooda_http_ai: HttpAIStub, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    project.write("ooda-config.yml", API + GREET_CONFIG)
    for _ in range(3):
        ooda_http_ai.reply(
            "Hello all. <promise>SUCCESS</promise>", input_tokens=1000, output_tokens=100
        )
    return project


@pytest.mark.parametrize(("limit", "code"), [(0.005, 0), (0.004, 1)])
def test_cost_per_run_and_its_gate(priced: Project, limit: float, code: int) -> None:
    priced.scenario(
        "paid",
        f"procedure: greet\nrepeat: 3\nexpect: {{status: success, max_mean_cost: {limit}}}\n"
        "iterations: []\n",
    )
    result = priced.run("-m", "live")
    result.assert_outcomes(passed=3, deselected=7)
    assert result.ret == code
    result.stdout.fnmatch_lines(
        [
            "ooda: greet/paid 1/3: success status=success iterations=1 time=*s "
            f"tokens=1000in/100out cost=${RUN_COST:.4f}",
            "greet/paid  *3   3       0  100%  44%–100%  *1.00  *1.00  1.00/1/1  *1,100  "
            f"*${RUN_COST:.4f}  success 3",
        ],
        consecutive=False,
    )
    if code:
        cost = f"${RUN_COST:.4f}"
        result.stdout.fnmatch_lines(
            [f"gate FAILED greet/paid: mean cost {cost} is above the expected maximum ${limit:g}"]
        )
    [log] = (priced.path / ".ooda/results").glob("*.jsonl")
    for line in log.read_text().splitlines():
        record = json.loads(line)
        assert record["ai_api"] == "anthropic:test-model"
        assert record["usage"]["total_tokens"] == 1100
        assert record["usage"]["cost"] == pytest.approx(RUN_COST)
        assert record["iterations"][0]["usage"]["input_tokens"] == 1000

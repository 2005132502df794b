"""Variants: one session runs a scenario under named settings (a scenario's
``variants:`` and ``--ooda-variant``), items ``live[scenario@variant#k]`` spread over
two xdist workers; the results log, the per-scenario table and the gates are per
variant, and ``ooda compare --by variant`` ranks two fake agents of known success rates
with Holm-corrected pairwise tests."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from scipy import stats as scipy_stats

from pytest_ooda.cli import main as ooda
from pytest_ooda.stats import difference_interval

if TYPE_CHECKING:
    from ooda_project import Project

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "random_agent.py"
RUNS, MAX_ITERATIONS, SEED = 10, 2, 7
P_GOOD, P_BAD = 0.8, 0.1


def successes(p: float) -> int:
    spec = importlib.util.spec_from_file_location("random_agent", AGENT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runs: list[int | None] = module.expected_runs(SEED, p, RUNS, MAX_ITERATIONS)
    return sum(run is not None for run in runs)


def agent(state: Path, p: float) -> str:
    return f"{sys.executable} {AGENT} {state} {SEED} {p}"


def test_two_agents_compared_in_one_session(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = successes(P_GOOD), successes(P_BAD)
    project.scenario(
        "coin",
        f"procedure: greet\nmax_iterations: {MAX_ITERATIONS}\nrepeat: {RUNS}\n"
        "expect:\n  success_rate: {min: 0.5}\n"
        f"variants:\n  good: {{ai_cmd: '{agent(tmp_path / 'good', P_GOOD)}'}}\n"
        "iterations: []\n",
    )
    result = project.run(
        "-m", "live", "-n", "2", "--ooda-results=results",
        "--ooda-variant", f"bad:ai_cmd={agent(tmp_path / 'bad', P_BAD)}",
    )  # fmt: skip
    # Every run passes on its own; the bad variant misses its gate, so the session fails.
    result.assert_outcomes(passed=2 * RUNS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            f"greet/coin@bad  * {RUNS}  * {bad}  *",
            f"greet/coin@good * {RUNS}  * {good}  *",
            f"gate FAILED greet/coin@bad: success rate {bad / RUNS:.0%} ({bad}/{RUNS}, *",
            "gate passed greet/coin@good: success rate >= 50%*",
        ]
    )
    lines = [
        json.loads(line)
        for file in (project.path / "results").glob("*.jsonl")
        for line in file.read_text().splitlines()
    ]
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for record in lines:
        by_variant.setdefault(record["variant"], []).append(record)
    assert sorted(by_variant) == ["bad", "good"]
    assert sum(r["outcome"] == "success" for r in by_variant["good"]) == good
    assert sum(r["outcome"] == "success" for r in by_variant["bad"]) == bad
    assert {r["nodeid"].split("::")[-1] for r in by_variant["good"]} == {
        f"live[coin@good#{run}]" for run in range(1, RUNS + 1)
    }
    assert {r["worker"] for r in lines} <= {"gw0", "gw1"}
    assert all("good" in r["ai_command"] for r in by_variant["good"])

    capsys.readouterr()
    assert ooda(["compare", "--by", "variant", str(project.path / "results")]) == 0
    out = capsys.readouterr().out
    p_value = scipy_stats.fisher_exact([[bad, RUNS - bad], [good, RUNS - good]]).pvalue
    assert p_value < 0.05  # the seeds make the difference significant
    ranking = [line.split()[1] for line in out.splitlines() if line.strip()[:2] in ("1 ", "2 ")]
    assert ranking == ["good", "bad"]
    assert "Holm-corrected" in out
    # One pair, so Holm leaves its p-value as it is; the pair leads with the lift and
    # its Newcombe interval.
    low, high = difference_interval(bad, RUNS, good, RUNS)
    lift = f"{(good - bad) / RUNS * 100:+.0f} pp (95% CI {low * 100:+.0f} to {high * 100:+.0f} pp)"
    assert (
        f"greet/coin: lift of good over bad: {lift}; bad {bad}/{RUNS} vs good {good}/{RUNS}  "
        f"p={p_value:.3g} adjusted p={p_value:.3g}  good better" in out
    )


def test_variant_mistakes_are_reported(project: Project) -> None:
    project.scenario(
        "coin",
        "procedure: greet\nvariants:\n  v2:\n    fragments: {prompts/nope.md: prompts/decide.md}\n"
        "iterations: []\n",
    )
    bad_option = project.run("-m", "live", "--ooda-variant", "x y:model=m")
    assert bad_option.ret == pytest.ExitCode.USAGE_ERROR
    bad_option.stderr.fnmatch_lines(["*--ooda-variant*'x y' is not a variant name*"])

    result = project.run("-m", "live", "--ooda-ai-cmd", "true")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "*scenarios/greet/coin.yml:3:3: variant 'v2': procedure greet has no fragment "
            "prompts/nope.md*",
            "*fragments it uses: builtin:fragments/orient/identify_drift.md, "
            "prompts/decide.md, prompts/observe.md*",
        ]
    )


def test_item_ids_per_variant_and_repeat(project: Project) -> None:
    project.scenario("coin", "procedure: greet\nvariants:\n  a: {model: m}\n  b:\niterations: []\n")
    result = project.run(
        "-m", "live", "--collect-only", "-q", "--ooda-repeat", "2", "--ooda-variant", "c:"
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            f"ooda-config.yml::greet::live[coin@{name}#{run}]"
            for name in ("a", "b", "c")
            for run in (1, 2)
        ]
    )
    # Without -m live the scenario is not even read: one live item, deselected.
    plain = project.run("--collect-only", "-q")
    plain.stdout.fnmatch_lines(["7/8 tests collected (1 deselected)*"])


def test_a_fragment_swap_and_a_prompt_format_per_variant(project: Project) -> None:
    """One session A/B-tests a fragment edit: each variant's runs get its own prompt."""
    ai = project.fake_ai('[{"print": "<promise>SUCCESS</promise>"}]')
    project.write("prompts/decide-v2.md", "Decide whom to greet first, loudly.\n")
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 1\nvariants:\n  before:\n"
        "  after: {fragments: {prompts/decide.md: prompts/decide-v2.md}}\n"
        "  rooda: {prompt_format: rooda}\niterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", ai, "--ooda-results=results")
    result.assert_outcomes(passed=3, deselected=7)
    prompts = (project.path / "fake-ai" / "prompts.log").read_text().split("\n===\n")[:-1]
    assert len(prompts) == 3
    loud = [prompt for prompt in prompts if "loudly" in prompt]
    assert len(loud) == 1
    assert len({prompt for prompt in prompts}) == 3  # the rooda layout differs too
    records = [
        json.loads(line)
        for file in (project.path / "results").glob("*.jsonl")
        for line in file.read_text().splitlines()
    ]
    decide = {
        record["variant"]: next(f for f in record["fragments"] if f["phase"] == "decide")
        for record in records
    }
    assert decide["after"]["source"] == "prompts/decide-v2.md"
    assert decide["before"]["source"] == "prompts/decide.md"
    assert decide["after"]["sha256"] != decide["before"]["sha256"]


def test_a_variants_sandbox_is_the_runs_sandbox(project: Project) -> None:
    ai = project.fake_ai('[{"print": "<promise>SUCCESS</promise>"}]')
    project.scenario("hello", "procedure: greet\nmax_iterations: 1\niterations: []\n")
    result = project.run(
        "-m", "live", "--ooda-ai-cmd", ai, "--ooda-results=results",
        "--ooda-variant", "plain:sandbox=none", "--ooda-variant", "boxed:sandbox=no-such-kind",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1, deselected=7)
    result.stdout.fnmatch_lines(["*live[[]hello@boxed[]]*", "*no-such-kind*"])

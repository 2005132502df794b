"""docs/evaluating.md stays true: its scenarios load, its commands and options exist,
its GitHub Actions workflow is valid YAML running those commands, its figures are ours."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from pytest_ooda.cli.app import build_parser
from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.settings import SETTINGS
from pytest_ooda.stats import fisher_exact, min_detectable_difference, runs_needed, wilson_interval

DOC = Path(__file__).resolve().parents[3] / "docs" / "evaluating.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", TEXT, flags=re.DOTALL)


def commands() -> list[str]:
    """Every `pytest …` / `ooda …` command in bash blocks and the workflow's run steps."""
    found = []
    for kind, body in BLOCKS:
        if kind == "bash":
            found += [line.split("  #")[0] for line in body.replace("\\\n", " ").splitlines()]
        if kind == "yaml" and "jobs:" in body:
            for job in yaml.safe_load(body)["jobs"].values():
                found += [step["run"] for step in job["steps"] if "run" in step]
    return [" ".join(c.split()) for c in found if c.strip().startswith(("pytest", "ooda"))]


def test_the_scenarios_load() -> None:
    scenarios = [body for kind, body in BLOCKS if kind == "yaml" and body.startswith("procedure:")]
    assert len(scenarios) >= 3
    for body in scenarios:
        load_scenario_text(body, path="doc.yml")


def test_the_commands_and_options_exist() -> None:
    flags = {row.pytest for row in SETTINGS if row.pytest} | {"-m", "-k", "-n"}
    parser = build_parser()
    seen = set()
    for command in commands():
        words = shlex.split(re.sub(r"\$\{\{[^}]*\}\}", "1", command))
        seen.add(words[0])
        if words[0] == "ooda":
            parser.parse_args(words[1:])
        else:
            used = {word.split("=")[0] for word in words if word.startswith("-")}
            assert used <= flags, (command, used - flags)
    assert seen == {"pytest", "ooda"}


def test_the_figures_quoted_are_what_the_code_computes() -> None:
    low, high = wilson_interval(17, 20)
    assert f"of 85% has a 95% interval of {low:.0%}–{high:.0%}" in TEXT
    assert f"17/20 85%  9/20 45%   0 / 1   -40 pp   {fisher_exact(17, 3, 9, 11):.4f}" in TEXT
    detectable = min_detectable_difference(20, 20, 0.85)
    assert detectable is not None
    assert f"{fisher_exact(17, 3, 9, 11):.4f}       {detectable * 100:.0f} pp" in TEXT
    # The inconclusive example: 5/5 against 5/10.
    assert f"inconclusive` (p = {fisher_exact(5, 0, 5, 5):.2f})" in TEXT
    small = min_detectable_difference(5, 10, 1.0)
    assert small is not None
    assert f"about {small * 100:.0f} points" in TEXT
    assert f"change of {small * 100:.0f} pp or more" in TEXT
    assert f"needs {runs_needed(1.0, 0.2)} valid run(s) per side (has 5)" in TEXT
    low, high = wilson_interval(14, 20)
    assert f"success rate 70% (14/20, 95% CI\n  {low:.0%}–{high:.0%})" in TEXT


def test_the_planning_history_and_ablation_figures_are_ours() -> None:
    from pytest_ooda.stats import mcnemar_exact, paired_difference_interval

    needed = runs_needed(0.85, 0.1)
    assert f"{needed} valid runs per arm; start {-(-needed * 42 // 40)} per arm" in TEXT
    low, high = wilson_interval(21, 30)
    assert f"flaky: 70% (21/30, 95% CI {low:.0%}–{high:.0%}) over 3 session(s)" in TEXT
    p_value = fisher_exact(29, 1, 5, 15) * 4
    assert f"29/30 (97%) -> 5/20 (25%), p {p_value:.3g}" in TEXT
    # Two looks, three arms: intervals at 1 - 0.025 / 3.
    low, high = paired_difference_interval(10, 0, 0, 1 - 0.025 / 3)
    assert f"{low * 100:+.0f} … {high * 100:+.0f} pp         1  cut" in TEXT
    assert f"{3 * mcnemar_exact(10, 0):.3g}  keep" in TEXT

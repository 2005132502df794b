"""docs/claude-code.md stays true: its scenarios load, its commands and options exist,
its snapshot example is what pytest-ooda renders of the test plugin, its rules are the
lint table's, and its figures are what the code computes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pytest_ooda.agents import MATERIAL_SECTIONS, load_material, render_snapshot
from pytest_ooda.cli.app import build_parser
from pytest_ooda.lint import RULES
from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.settings import SETTINGS
from pytest_ooda.stats import difference_interval, wilson_interval

ROOT = Path(__file__).resolve().parents[3]
TEXT = (ROOT / "docs" / "claude-code.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^(`{3,4})(\w*)\n(.*?)^\1$", TEXT, flags=re.DOTALL | re.MULTILINE)
GREETER = ROOT / "tests" / "agents" / "greeter"


def test_the_scenarios_load() -> None:
    scenarios = [body for _, kind, body in BLOCKS if kind == "yaml" and "procedure:" in body]
    assert len(scenarios) == 3
    for body in scenarios:
        load_scenario_text(body, path="doc.yml")


def test_the_commands_and_options_exist() -> None:
    flags = {row.pytest for row in SETTINGS if row.pytest} | {"-m", "-k"}
    parser = build_parser()
    for _, kind, body in BLOCKS:
        if kind != "bash":
            continue
        for line in body.splitlines():
            words = shlex.split(line.split("  #")[0])
            if words[0] == "ooda":
                parser.parse_args(words[1:])
            else:
                assert words[0] == "pytest"
                assert {w.split("=")[0] for w in words if w.startswith("-")} <= flags


def test_the_snapshot_example_is_what_is_rendered() -> None:
    (example,) = [body for _, kind, body in BLOCKS if kind == "markdown"]
    material = load_material(GREETER)
    command = material.find("command", "hello")
    assert command is not None
    assert example == render_snapshot(command, material, "", label="/greeter:hello")


def test_the_rules_named_are_the_lint_table() -> None:
    named = re.findall(r"\| \[(OODA\d+)\]\([^)]*\) \| (\w+) \|", TEXT)
    assert len(named) == 6
    for rule_id, severity in named:
        assert RULES[rule_id].severity == severity
    (section,) = MATERIAL_SECTIONS
    assert f"`{section}:`" in TEXT


def test_the_figures_are_what_the_code_computes() -> None:
    for passed, runs in ((9, 10), (7, 10)):
        low, high = wilson_interval(passed, runs)
        assert f"{passed}/{runs} {passed / runs:.0%} ({low:.0%}–{high:.0%})" in TEXT
    recall, precision = wilson_interval(5, 6), wilson_interval(5, 7)
    assert f"recall 5/6 83% ({recall[0]:.0%}–{recall[1]:.0%})" in TEXT
    assert f"precision 5/7 71% ({precision[0]:.0%}–{precision[1]:.0%})" in TEXT
    low, high = difference_interval(11, 20, 18, 20)
    assert f"+35 pp (95% CI {low * 100:+.0f} to {high * 100:+.0f} pp)" in TEXT

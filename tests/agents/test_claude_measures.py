"""What pytest-ooda measures of Claude Code material, with the real CLI (2.1.197) driven
offline by the agent mock: the lift of a SKILL.md edit (two variants that differ only
in the plugin, one its committed version ``git:HEAD``) with its interval, and the edit
in the prompt diff of the two; a trigger set's recall and precision, with what fired
instead.

The mock decides nothing (each session is a script), so what differs between the runs
is what the CLI does with the files each run installs: the edited skill's
``!`cmd``` writes the greeting, the committed one has none."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mock import CLAUDE

from pytest_ooda.agents import MATERIAL_SECTIONS
from pytest_ooda.cli import main as ooda
from pytest_ooda.stats import difference_interval

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest
    from claude_mock import AgentMock

GREETER = Path(__file__).resolve().parent / "greeter"
(SECTION,) = MATERIAL_SECTIONS
RUNS = 4
#: The edit: the skill's body runs a command when it is invoked (Claude Code runs a
#: skill's !`cmd` before the model reads it), which writes the greeting.
EDIT = "\nHouse greeting: !`printf 'Hello, Ada!\\n' > GREETING.md && echo written`\n"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _project(root: Path) -> Path:
    """A repository with the greeter plugin committed, a raw procedure that asks for a
    greeting, and a scenario run under two variants: the committed plugin and the
    working tree's."""
    shutil.copytree(GREETER, root / "greeter")
    (root / "ooda-config.yml").write_text(
        f"{SECTION}: [greeter]\n"
        "procedures:\n  greet:\n    prompt_format: raw\n"
        "    act: [{content: Please greet Ada.}]\n"
    )
    scenario = root / "scenarios" / "greet" / "ada.yml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(
        f"procedure: greet\nrepeat: {RUNS}\n"
        "expect:\n"
        "  files: {GREETING.md: {contains: 'Hello, Ada!'}}\n"
        "  activation: {skill: greet}\n"
        "variants:\n"
        f"  before: {{{SECTION}: 'git:HEAD'}}\n"
        "  edited:\n"
        "iterations: []\n"
    )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "greeter as it was")
    skill = root / "greeter" / "skills" / "greet" / "SKILL.md"
    skill.write_text(skill.read_text() + EDIT)
    return root


def test_the_lift_of_a_skill_edit_with_its_interval(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mock = agent_mock(
        [[{"tool": "Skill", "input": {"skill": "greeter:greet", "args": "Ada"}}, {"text": "Hi."}]]
    )
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    root = _project(pytester.path)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-ai-cmd", CLAUDE, "-W", "ignore",
    )  # fmt: skip
    result.assert_outcomes(
        passed=RUNS, failed=RUNS, deselected=result.parseoutcomes().get("deselected", 0)
    )
    low, high = difference_interval(0, RUNS, RUNS, RUNS)
    lift = f"+100 pp (95% CI {low * 100:+.0f} to {high * 100:+.0f} pp)"
    # The session's summary leads, under its table, with the lift.
    result.stdout.fnmatch_lines(
        [
            "greet/ada@edited *100%*",
            f"greet/ada: lift of edited over before: {lift}",
            "greet/ada@before: skill greet fired: 4/4 100% *",
        ]
    )
    result.stdout.fnmatch_lines(
        ["FAILED *live?ada@before#1*", "  - file GREETING.md: expected to exist, but it is missing"]
    )
    records = [
        json.loads(line)
        for path in (root / ".ooda" / "results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    by_variant: dict[str, list[dict[str, object]]] = {}
    for record in records:
        by_variant.setdefault(str(record["variant"]), []).append(record)
    assert {name: len(runs) for name, runs in by_variant.items()} == {
        "before": RUNS,
        "edited": RUNS,
    }
    # The skill fired in every run of both: the edit changed what it did, not whether.
    for runs in by_variant.values():
        assert all("skill:greeter:greet" in run["activations"] for run in runs)
    # The two prompt versions differ by the SKILL.md alone.
    assert len({run["prompt_sha256"] for run in records}) == 2
    before, edited = by_variant["before"][0], by_variant["edited"][0]
    from pytest_ooda.report.compare_pages import prompt_diff
    from pytest_ooda.results import read_results

    read = read_results([root / ".ooda" / "results"])
    whole = {record.head.variant: record for record in read.records}
    diffs = prompt_diff(whole["before"], whole["edited"])
    assert [(d["source"], d["status"]) for d in diffs] == [
        (f"{SECTION}:greeter/skills/greet/SKILL.md", "changed")
    ]
    assert before["prompt_sha256"] != edited["prompt_sha256"]
    # ooda compare --by variant leads the pair with the lift and its interval.
    capsys.readouterr()
    assert ooda(["compare", "--by", "variant", str(root / ".ooda" / "results")]) == 0
    out = capsys.readouterr().out
    assert f"greet/ada: lift of edited over before: {lift}" in out

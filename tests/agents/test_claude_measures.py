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
from pytest_ooda.stats import difference_interval, wilson_interval

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
    # The failure's own section (the short summary truncates its message to the
    # terminal's width unless CI is set).
    result.stdout.fnmatch_lines(
        [
            "*greet::live?ada@before#1?*",
            "  - file GREETING.md: expected to exist, but it is missing",
        ]
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


TRIGGERS = """\
procedure: greet
triggers:
  skill: greet
  should:
    - Say hello to Ada for me
    - Could you welcome our new colleague Bob?
    - Greet the team
  should_not:
    - Write a farewell note for Carol
    - What does GREETING.md contain?
iterations: []
"""


def test_a_trigger_sets_recall_and_precision(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each prompt of the set is its own live item; the scripted model fires the skill
    for two of the three that should (the third starts the reviewer instead) and for one
    of the two that should not."""
    skill = {"tool": "Skill", "input": {"skill": "greeter:greet", "args": ""}}
    reviewer = {
        "tool": "Agent",
        "input": {"description": "Review", "prompt": "Review", "subagent_type": "greeter:reviewer"},
    }
    mock = agent_mock(
        [
            [skill, {"text": "Greeted Ada."}],  # should-1: fired
            [skill, {"text": "Welcomed Bob."}],  # should-2: fired
            [reviewer, {"text": "Reviewed."}],  # should-3: missed, the reviewer instead
            [{"text": "Farewell, Carol."}],  # should-not-1: rightly not
            [skill, {"text": "It greets."}],  # should-not-2: a false alarm
        ],
        dump=True,
    )
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    shutil.copytree(GREETER, pytester.path / "greeter")
    (pytester.path / "ooda-config.yml").write_text(
        f"{SECTION}: [greeter]\n"
        "procedures:\n  greet:\n    prompt_format: raw\n    act: [{content: Hello}]\n"
    )
    (pytester.path / "scenarios" / "greet").mkdir(parents=True)
    (pytester.path / "scenarios" / "greet" / "greetings.yml").write_text(TRIGGERS)
    # Plain pytest: the set loads; its replay item is skipped (a trigger set runs live).
    plain = pytester.runpytest("-p", "no:cacheprovider", "-k", "greetings", "-rs")
    plain.assert_outcomes(skipped=1, deselected=plain.parseoutcomes().get("deselected", 0))
    plain.stdout.fnmatch_lines(
        [
            "SKIPPED * scenario greet/greetings is a trigger set: it runs live only, each of "
            "its 5 prompts an item:  pytest -m live ooda-config.yml::greet -k greetings"
        ]
    )
    # Asked to record everything: a trigger set's runs are not one run to record.
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-ai-cmd", CLAUDE, "-W", "ignore", "-v",
        "--ooda-record-mode=all",
    )  # fmt: skip
    result.assert_outcomes(
        passed=3, failed=2, deselected=result.parseoutcomes().get("deselected", 0)
    )
    assert (pytester.path / "scenarios" / "greet" / "greetings.yml").read_text() == TRIGGERS
    result.stdout.fnmatch_lines(
        [
            "*::live?greetings/should-1? PASSED*",
            "*::live?greetings/should-3? FAILED*",
            "*::live?greetings/should-not-2? FAILED*",
        ]
    )
    recall, precision = wilson_interval(2, 3), wilson_interval(2, 3)
    result.stdout.fnmatch_lines(
        [
            "greet/greetings: triggers of skill greet: "
            f"recall 2/3 67% ({recall[0]:.0%}–{recall[1]:.0%}), "
            f"precision 2/3 67% ({precision[0]:.0%}–{precision[1]:.0%}); "
            "fired instead: subagent:greeter:reviewer 1"
        ]
    )
    # Each prompt is its own prompt version, by design: no note of mixed versions.
    result.stdout.no_fnmatch_line("*mixes * prompt versions*")
    records = [
        json.loads(line)
        for path in (pytester.path / ".ooda" / "results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    cases = sorted((r["trigger"]["case"], r["outcome"]) for r in records)
    assert cases == [
        ("should-1", "success"),
        ("should-2", "success"),
        ("should-3", "failure"),
        ("should-not-1", "success"),
        ("should-not-2", "failure"),
    ]
    # Measured without injecting the skill: each run sends its prompt alone, the model
    # chooses from the listing line, and the SKILL.md's text reaches it only once the
    # Skill tool was called.
    conversations = [body.get("messages", []) for body in mock.bodies()]
    sent = [json.dumps(messages) for messages in conversations]
    listed = [text for text in sent if "greeter:greet: Writes a warm greeting" in text]
    assert len(listed) >= 5
    for prompt in ("Say hello to Ada for me", "Write a farewell note for Carol"):
        assert any(prompt in text for text in listed)
    with_body = [
        messages
        for messages, text in zip(conversations, sent, strict=True)
        if "Write GREETING.md with one line" in text
    ]
    assert len(with_body) >= 3
    for messages in with_body:
        calls = [
            block.get("name")
            for message in messages
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_use"
        ]
        assert "Skill" in calls


def test_each_prompt_variant_and_run_of_a_trigger_set_is_its_own_item_under_xdist(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two prompts × two variants × ``--ooda-repeat 2``: eight items, run by two xdist
    workers in any order (the model fires the skill every time, so the ``should`` items
    pass and the ``should_not`` ones fail whichever session serves them), and each
    variant's summary line counts its own four runs."""
    mock = agent_mock(
        [[{"tool": "Skill", "input": {"skill": "greeter:greet", "args": ""}}, {"text": "Hi."}]]
    )
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    shutil.copytree(GREETER, pytester.path / "greeter")
    (pytester.path / "ooda-config.yml").write_text(
        f"{SECTION}: [greeter]\n"
        "procedures:\n  greet:\n    prompt_format: raw\n    act: [{content: Hello}]\n"
    )
    (pytester.path / "scenarios" / "greet").mkdir(parents=True)
    (pytester.path / "scenarios" / "greet" / "pair.yml").write_text(
        "procedure: greet\n"
        "triggers: {skill: greet, should: [Greet Ada], should_not: [Thank Ada]}\n"
        "variants: {one: , two: }\n"
        "iterations: []\n"
    )
    ids = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-repeat", "2", "--collect-only", "-q",
    )  # fmt: skip
    ids.stdout.fnmatch_lines(
        [
            f"ooda-config.yml::greet::live[pair/{case}@{variant}#{run}]"
            for variant in ("one", "two")
            for case in ("should-1", "should-not-1")
            for run in (1, 2)
        ]
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-repeat", "2", "-n", "2",
        "--ooda-ai-cmd", CLAUDE, "-W", "ignore",
    )  # fmt: skip
    result.assert_outcomes(passed=4, failed=4)
    result.stdout.fnmatch_lines(["ooda: 1 procedure, 1 scenario in 1 config file"])
    low, high = wilson_interval(2, 4)
    for variant in ("one", "two"):
        result.stdout.fnmatch_lines(
            [
                f"greet/pair@{variant}: triggers of skill greet: recall 2/2 100% (*), "
                f"precision 2/4 50% ({low:.0%}–{high:.0%})"
            ]
        )
    result.stdout.fnmatch_lines(["FAILED *live?pair/should-not-1@one#1?*"])
    records = [
        json.loads(line)
        for path in (pytester.path / ".ooda" / "results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    runs = sorted((r["variant"], r["trigger"]["case"], r["run"]) for r in records)
    assert runs == [
        (variant, case, run)
        for variant in ("one", "two")
        for case in ("should-1", "should-not-1")
        for run in (1, 2)
    ]


#: What Claude Code needs inside bwrap: the mock's address and its own settings.
BWRAP_ENV = (
    "[ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "
    "DISABLE_AUTOUPDATER, DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, "
    "CLAUDE_CODE_MAX_RETRIES, IS_SANDBOX=1, SHELL=/usr/bin/bash]"
)


def test_a_trigger_set_in_bwrap_never_sees_the_user_s_own_skills(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same measurement in bwrap, with a skill of the user's own that describes
    itself as the target does: the model is shown the plugin's skill and never the
    user's (a fresh home), so nothing of the user's can fire instead, and the runs'
    fingerprints load the plugin alone."""
    from sandbox_images import require_bwrap

    require_bwrap()
    skill = {"tool": "Skill", "input": {"skill": "greeter:greet", "args": ""}}
    mock = agent_mock([[skill, {"text": "Greeted Ada."}], [{"text": "Thanked."}]], dump=True)
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    own = Path(mock.env()["CLAUDE_CONFIG_DIR"]) / "skills" / "hello-anyone"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text(
        "---\ndescription: Greets anyone by name. Use when asked to say hello.\n---\nHi.\n"
    )
    shutil.copytree(GREETER, pytester.path / "greeter")
    (pytester.path / "ooda-config.yml").write_text(
        f"{SECTION}: [greeter]\n"
        f"loop:\n  sandbox: {{kind: bwrap, network: host, env: {BWRAP_ENV}}}\n"
        "procedures:\n  greet:\n    prompt_format: raw\n    act: [{content: Hello}]\n"
    )
    (pytester.path / "scenarios" / "greet").mkdir(parents=True)
    (pytester.path / "scenarios" / "greet" / "pair.yml").write_text(
        "procedure: greet\n"
        "triggers: {skill: greet, should: [Say hello to Ada], should_not: [Thank Ada]}\n"
        "iterations: []\n"
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-ai-cmd", CLAUDE, "-W", "ignore",
    )  # fmt: skip
    result.assert_outcomes(passed=2, deselected=result.parseoutcomes().get("deselected", 0))
    result.stdout.fnmatch_lines(
        ["greet/pair: triggers of skill greet: recall 1/1 100% (*), precision 1/1 100% (*)"]
    )
    result.stdout.no_fnmatch_line("*ran without a sandbox*")
    sent = [json.dumps(body.get("messages", [])) for body in mock.bodies()]
    assert any("greeter:greet: Writes a warm greeting" in text for text in sent)
    assert not any("hello-anyone" in text for text in sent)
    records = [
        json.loads(line)
        for path in (pytester.path / ".ooda" / "results").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert len(records) == 2
    for record in records:
        skills = record["fingerprint"]["loaded"]["skills"]
        assert [(item["name"], item["scope"]) for item in skills] == [
            ("greeter:greet", "command-line")
        ]

"""``--ooda-replay`` (ini ``ooda_replay``) and a scenario's ``replay:``: scenario items
replay through the real agent, its model calls answered from the cassette, or as the
loop replay. The agent is tests/fake_ai/api_agent.py; the recording's API a scripted
upstream that is gone when the items replay."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.unit.apireplay.helpers import Gone, Upstream

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ooda_project import Project

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'fake_ai' / 'api_agent.py'}"
MISSING_AGENT = "/nonexistent/agent -p"
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\n{replay}"
    "expect:\n  status: success\n  files: {{answers.txt: {{contains: to and now?}}}}\n"
    "iterations: []\n"
)


@pytest.fixture
def recorded(project: Project, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gone]:
    """A scenario ``first`` recorded with its cassette; then the API is gone (a port
    that counts connections) and no key is set."""
    upstream = Upstream()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "q" * 30)
    project.scenario("first", SCENARIO.format(replay=""))
    project.run(
        "-m", "live", f"--ooda-ai-cmd={AGENT}", "--ooda-record-mode=once", "--ooda-record-api"
    ).assert_outcomes(passed=1, deselected=7)
    upstream.close()
    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    yield gone
    assert gone.connections == 0
    gone.close()


def set_replay(project: Project, value: str) -> None:
    path = project.path / "scenarios/greet/first.yml"
    path.write_text(path.read_text().replace("max_iterations: 1\n", f"max_iterations: 1\n{value}"))


def test_replay_agent_in_a_scenario_replays_it_through_the_agent(
    project: Project, recorded: Gone
) -> None:
    set_replay(project, "replay: agent\n")
    project.run("-k", "first", f"--ooda-ai-cmd={AGENT}").assert_outcomes(passed=1, deselected=7)
    # The agent really runs: without it the item cannot pass.
    result = project.run("-k", "first", f"--ooda-ai-cmd={MISSING_AGENT}")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(["*agent replay did not run*"])


def test_the_option_loop_beats_the_scenario_and_agent_replays_every_cassette(
    project: Project, recorded: Gone
) -> None:
    set_replay(project, "replay: agent\n")
    # The loop replay never starts the agent.
    loop = project.run("-k", "first", f"--ooda-ai-cmd={MISSING_AGENT}", "--ooda-replay=loop")
    loop.assert_outcomes(passed=1, deselected=7)
    set_replay(project, "")
    agent = project.run("-k", "first", f"--ooda-ai-cmd={MISSING_AGENT}", "--ooda-replay=agent")
    agent.assert_outcomes(failed=1, deselected=7)
    project.write("pytest.ini", "[pytest]\nooda_replay = agent\n")
    project.run("-k", "first", f"--ooda-ai-cmd={AGENT}").assert_outcomes(passed=1, deselected=7)


def test_a_scenario_without_a_cassette_keeps_its_loop_replay_unless_it_asks_for_agent(
    project: Project, recorded: Gone
) -> None:
    (project.path / "scenarios/greet/first.cassette.jsonl").unlink()
    result = project.run("-k", "first", f"--ooda-ai-cmd={MISSING_AGENT}", "--ooda-replay=agent")
    result.assert_outcomes(passed=1, deselected=7)
    set_replay(project, "replay: agent\n")
    failed = project.run("-k", "first", f"--ooda-ai-cmd={AGENT}")
    failed.assert_outcomes(failed=1, deselected=7)
    failed.stdout.fnmatch_lines(
        [
            "*scenarios/greet/first.yml*: scenario 'greet/first' says replay: agent, but it has "
            "no cassette (first.cassette.jsonl)",
            "*record one: pytest -m live --ooda-record-api *live[[]first[]]*",
        ]
    )


def test_a_changed_fragment_is_a_divergence_naming_it(project: Project, recorded: Gone) -> None:
    project.write("prompts/decide.md", "Decide whom to greet last.\n")
    result = project.run(
        "-k", "first", f"--ooda-ai-cmd={AGENT}", "--ooda-replay=agent", "--ooda-drift=ignore"
    )
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "scenario greet/first: agent replay of scenarios/greet/first.cassette.jsonl: "
            "replay divergence: no recorded answer for this anthropic POST /v1/messages "
            "request; the nearest recorded one is exchange 1",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*the prompt of iteration 1 changed (fragments: prompts/decide.md):",
            "*-Decide whom to greet first.",
            "*+Decide whom to greet last.",
            "--- recorded (exchange 1, line 4)",
            "+++ requested now",
            "@@ * @@ messages?0?.content",
            "*re-record the cassette*",
        ]
    )


def test_a_bad_value_is_a_usage_error(project: Project) -> None:
    result = project.run("--ooda-replay=agents")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'agents' (choose from 'loop', 'agent')*"])


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (
            lambda line: line.replace('"content-type": "', '"content-type": "x\\r\\nX-Evil: 1 '),
            "holds a line break or a NUL",
        ),
        (lambda line: line[:-1] + ', "deep": ' + "[" * 1000 + "]" * 1000 + "}", "nesting deeper"),
    ],
    ids=["crlf-header", "deep-line"],
)
def test_a_hostile_cassette_is_a_located_error_before_the_agent_starts(
    project: Project, recorded: Gone, spoil: Any, message: str
) -> None:
    path = project.path / "scenarios/greet/first.cassette.jsonl"
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith('{"exchange"'))
    lines[number] = spoil(lines[number])
    path.write_text("\n".join(lines) + "\n")
    set_replay(project, "replay: agent\n")
    result = project.run("-k", "first", f"--ooda-ai-cmd={AGENT}")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines([f"*first.cassette.jsonl:{number + 1}:*cassette: *{message}*"])
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "RecursionError" not in output

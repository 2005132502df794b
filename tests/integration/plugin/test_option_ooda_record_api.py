"""``--ooda-record-api`` (ini ``ooda_record_api``): live runs record their agent's model
calls into ``<scenario>.cassette.jsonl``, through the API proxy. The agent is a small real
CLI talking to the Messages API (tests/fake_ai/api_agent.py); the API a scripted upstream
(tests/unit/apireplay/helpers.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from tests.unit.apireplay.helpers import Gone, Upstream

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ooda_project import Project

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'fake_ai' / 'api_agent.py'}"
KEY = "sk-ant-api03-" + "Zk3" * 12
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\n"
    "expect:\n  status: success\n  files: {answers.txt: {contains: to and now?}}\n"
    "iterations: []\n"
)


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    server = Upstream()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    yield server
    server.close()


def live(project: Project, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", f"--ooda-ai-cmd={AGENT}", *args)


def exchanges(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line for line in lines if "exchange" in line]


def test_the_flag_records_the_scenario_and_its_cassette_beside_it(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project.scenario("first", SCENARIO)
    result = live(project, "--ooda-record-mode=once", "--ooda-record-api")
    result.assert_outcomes(passed=1, deselected=7)
    cassette = path.with_name("first.cassette.jsonl")
    result.stdout.fnmatch_lines(
        ["recorded: greet/first -> scenarios/greet/first.yml, scenarios/greet/first.cassette.jsonl"]
    )
    text = cassette.read_text()
    assert KEY not in text
    assert [e["endpoint"] for e in exchanges(cassette)] == ["anthropic POST /v1/messages"] * 2
    assert len(upstream.requests) == 2
    # The agent's key went to the API, through the proxy.
    assert upstream.requests[0][2]["x-api-key"] == KEY
    assert len(yaml.safe_load(path.read_text())["iterations"]) == 1

    # Replayed: no -m live, the upstream gone, no key; the real agent runs again.
    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    try:
        replayed = project.run("-k", "first", f"--ooda-ai-cmd={AGENT}", "--ooda-replay=agent")
    finally:
        gone.close()
    replayed.assert_outcomes(passed=1, deselected=7)
    assert gone.connections == 0
    assert len(upstream.requests) == 2


def test_new_keeps_the_cassette_and_records_only_what_it_lacks(
    project: Project, upstream: Upstream
) -> None:
    path = project.scenario("first", SCENARIO)
    cassette = path.with_name("first.cassette.jsonl")
    live(project, "--ooda-record-api=new").assert_outcomes(passed=1, deselected=7)
    first = cassette.read_text()
    assert len(exchanges(cassette)) == 2
    # The same run again: answered from the cassette, nothing new, nothing written.
    live(project, "--ooda-record-api=new").assert_outcomes(passed=1, deselected=7)
    assert len(upstream.requests) == 2
    assert cassette.read_text() == first
    # Another prompt: its two requests are new and added; the old ones are kept.
    project.write("prompts/decide.md", "Decide whom to greet last.\n")
    live(project, "--ooda-record-api=new").assert_outcomes(passed=1, deselected=7)
    assert len(upstream.requests) == 4
    assert len(exchanges(cassette)) == 4
    assert cassette.read_text().startswith(first.rsplit("\n", 1)[0][:200])


def test_all_records_the_cassette_anew_and_repeats_never_write(
    project: Project, upstream: Upstream
) -> None:
    path = project.scenario("first", SCENARIO)
    cassette = path.with_name("first.cassette.jsonl")
    live(project, "--ooda-record-api").assert_outcomes(passed=1, deselected=7)
    cassette.write_text(cassette.read_text().replace("answer 1", "answer X"))
    # Three repeats: only the first may write.
    live(project, "--ooda-record-api=all", "--ooda-repeat=3").assert_outcomes(
        passed=3, deselected=7
    )
    assert "answer X" not in cassette.read_text()
    assert [e["exchange"] for e in exchanges(cassette)] == [1, 2]
    assert len(upstream.requests) == 8


def test_a_failed_run_writes_no_cassette(project: Project, upstream: Upstream) -> None:
    path = project.scenario(
        "first", SCENARIO.replace("answers.txt: {contains: to and now?}", "nothing.txt: exists")
    )
    live(project, "--ooda-record-api").assert_outcomes(failed=1, deselected=7)
    assert len(upstream.requests) == 2
    assert not path.with_name("first.cassette.jsonl").exists()


def test_the_ini_key_and_bad_values(project: Project, upstream: Upstream) -> None:
    path = project.scenario("first", SCENARIO)
    project.write("pytest.ini", "[pytest]\nooda_record_api = new\n")
    live(project).assert_outcomes(passed=1, deselected=7)
    assert path.with_name("first.cassette.jsonl").is_file()
    project.write("pytest.ini", "[pytest]\nooda_record_api = everything\n")
    bad = live(project)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        ["*ini option ooda_record_api: invalid choice: 'everything' (choose from 'all', 'new')*"]
    )


def test_the_flag_alone_before_a_test_path_is_a_usage_error(project: Project) -> None:
    # Its value is optional: a word after it is taken for the value.
    project.write("tests/test_x.py", "def test_x(): pass\n")
    result = project.run("-m", "live", "--ooda-record-api", "test")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ooda-record-api: invalid choice: 'test' (choose from 'all', 'new')*"]
    )
    # A value that is also a path is refused before pytest takes it for a test path.
    project.write("new/test_y.py", "def test_y(): pass\n")
    result = project.run("-m", "live", "--ooda-record-api", "new")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ooda-record-api new: --ooda-record-api takes its value in the same word*"]
    )

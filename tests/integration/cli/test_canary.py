"""``ooda canary``: a cassette recorded by ``pytest -m live --ooda-record-api`` with a small
agent of our own (a Python script that asks the Anthropic Messages API once and acts
on the answer), replayed offline through a second version that words its request
otherwise (safe to unpin, with what changed) and a third that drops the answer (not
safe, exit 1); a project with no cassette is told how to record one. The real Claude
Code versions are tests/agents/test_canary.py."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from ooda_project import greet_project

from pytest_ooda.cli import main
from tests.unit.apireplay.helpers import Gone, Upstream

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

#: Asks the model once (its system prompt and user agent name its version), writes the
#: answer to out.txt (version 3 writes nothing), and promises success.
AGENT = """\
import json, os, sys, urllib.request
version = sys.argv[1]
prompt = sys.stdin.read()
body = {"model": "m", "max_tokens": 10, "system": f"You are agent {version}.",
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]}
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=json.dumps(body).encode(),
    headers={"content-type": "application/json", "user-agent": f"agent/{version}",
             "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")})
with urllib.request.urlopen(request, timeout=30) as answer:
    text = json.load(answer)["content"][0]["text"]
if version != "3":
    open("out.txt", "w").write(text[:9] + "\\n")
print("<promise>SUCCESS</promise>")
"""
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\n"
    "expect:\n  status: success\n  files: {out.txt: {contains: answer 1}}\n"
    "iterations: []\n"
)


def _record(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    project = greet_project(pytester, monkeypatch)
    agent = project.write("agent.py", AGENT)
    command = f"{sys.executable} {agent}"
    project.scenario("asks", SCENARIO)
    upstream = Upstream()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    try:
        recorded = project.run(
            "-m", "live", "-k", "asks", f"--ooda-ai-cmd={command} 1",
            "--ooda-record-mode=once", "--ooda-record-api",
        )  # fmt: skip
    finally:
        upstream.close()
    recorded.assert_outcomes(passed=1, deselected=7)
    assert (project.path / "scenarios/greet/asks.cassette.jsonl").is_file()
    monkeypatch.chdir(project.path)
    return project.path, command


def test_a_new_version_that_still_does_the_job_is_safe_to_unpin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, command = _record(pytester, monkeypatch)
    capsys.readouterr()
    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    try:
        code = main(["canary", "--pinned-cmd", f"{command} 1", "--agent-cmd", f"{command} 2"])
    finally:
        gone.close()
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert gone.connections == 0
    lines = out.splitlines()
    assert lines[0] == "greet/asks (scenarios/greet/asks.cassette.jsonl)"
    assert lines[1].endswith(f"{command} 1: 1 of 1 request(s) as recorded; passes")
    assert lines[2].endswith(f"{command} 2: 0 of 1 request(s) as recorded; passes")
    assert lines[3:] == [
        "  what it sends otherwise:",
        "    system prompt: 1 line(s) removed, 1 added",
        "      --- pinned",
        "      +++ new",
        "      @@ -1 +1 @@",
        "      -You are agent 1.",
        "      +You are agent 2.",
        "    headers: 1 changed (user-agent)",
        "      user-agent: agent/1 -> agent/2",
        "  safe to unpin (what it sends changed: re-record the cassette with it)",
        "",
        f"1 of 1 scenario(s) safe to unpin with {command} 2",
    ]
    assert "sk-ant" not in out


def test_a_new_version_that_drops_the_answer_is_not_safe(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, command = _record(pytester, monkeypatch)
    config = f"loop:\n  ai_cmd: {json.dumps(command + ' 1')}\n"
    (path / "ooda-config.yml").write_text(config + (path / "ooda-config.yml").read_text())
    capsys.readouterr()
    code = main(["canary", "--agent-cmd", f"{command} 3", "scenarios/greet/asks.yml"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert out.splitlines()[1].endswith(f"{command} 1: 1 of 1 request(s) as recorded; passes")
    assert (
        "  NOT safe to unpin: file out.txt: expected to exist, but it is missing"
        in out.splitlines()
    )
    assert out.rstrip().endswith(f"0 of 1 scenario(s) safe to unpin with {command} 3")


def test_a_project_without_a_cassette_is_told_how_to_record_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = greet_project(pytester, monkeypatch)
    project.scenario("asks", SCENARIO)
    monkeypatch.chdir(project.path)
    assert main(["canary", "--agent-cmd", "my-agent"]) == 2
    err = capsys.readouterr().err
    assert "ooda canary: no scenario has a cassette to replay" in err
    assert "pytest -m live --ooda-record-api" in err

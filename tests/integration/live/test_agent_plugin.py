"""An out-of-tree agent, registered under the ``pytest_ooda.agents`` entry-point group by
a package that is only a ``.dist-info`` and a module in a temporary site directory
(issue 36: adding an agent is one module). Named by nothing but its program on the
command line, it claims the command, its own output format is inferred from its flags
and read by its own stream reader (cost, tokens, tool calls, its shell tool for
``expect.tools``), its own words for an exhausted quota are an infrastructure ``error``,
and a sandbox whose environment carries none of its credentials is an ``auth`` error
before any run."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from integration.ooda_project import Project

PLUGIN = '''
"""demo-agent: prints JSON lines {"say"}, {"tool", "command"}, {"done": usage}."""
from __future__ import annotations

from pytest_ooda.agents import (
    Agent, AgentReport, AgentStream, Fault, OutputFormat, ToolCall, summarize,
)


class DemoStream(AgentStream):
    kind = "demo-jsonl"
    flags_hint = "does the command have --jsonl?"

    def __init__(self, **options):
        super().__init__(**options)
        self.texts, self.calls, self.done = [], [], None

    def _event(self, event):
        if "say" in event:
            self.texts.append(event["say"])
            return event["say"]
        if "tool" in event:
            call = ToolCall(event["tool"], summarize(event["tool"], event), ok=True)
            self.calls.append(call)
            return f"-> {call.name}: {call.summary}"
        if "done" in event:
            self.done = event["done"]
        return None

    def _text_fault(self, text):
        return DemoAgent().fault(text)

    def report(self):
        if self.done is None:
            return AgentReport(
                text="\\n".join(self.texts), tool_calls=tuple(self.calls),
                error=self._error or self._missing("no done event"),
                infra_error=self._foreign_infra(), events=self._events,
            )
        return AgentReport(
            text="\\n".join(self.texts), tool_calls=tuple(self.calls),
            input_tokens=self.done["in"], output_tokens=self.done["out"],
            cost_usd=self.done["cost"], error=self._error, events=self._events,
        )


class DemoAgent(Agent):
    name = "demo"
    display = "Demo Agent"
    programs = ("demo-agent",)
    formats = (
        OutputFormat(
            "demo-jsonl", lambda **options: DemoStream(**options),
            reports_tools=True, reports_cost=True, reports_tokens=True,
        ),
    )
    shell_tools = ("run",)
    credentials = ("DEMO_API_KEY",)

    def format_of(self, argv):
        return "demo-jsonl" if "--jsonl" in argv else None

    def fault(self, text):
        if "DEMO: quota exhausted" in text:
            return Fault("rate-limit", "DEMO: quota exhausted")
        return None
'''

ENTRY_POINTS = "[pytest_ooda.agents]\ndemo = demo_ooda_agent:DemoAgent\n"
METADATA = "Metadata-Version: 2.1\nName: demo-ooda-agent\nVersion: 0.1\n"
PROGRAM = """\
#!{python}
import json, os, sys
sys.stdin.read()
if os.environ.get("DEMO_QUOTA") == "gone":
    print("DEMO: quota exhausted", flush=True)
    sys.exit(1)
os.system("echo ran > ran.txt")
for event in (
    {{"say": "working"}},
    {{"tool": "run", "command": "echo ran > ran.txt"}},
    {{"say": "done <promise>SUCCESS</promise>"}},
    {{"done": {{"in": 120, "out": 30, "cost": 0.0125}}}},
):
    print(json.dumps(event), flush=True)
"""


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "demo_ooda_agent.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "demo_ooda_agent-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "demo-agent"
    program.write_text(PROGRAM.format(python=sys.executable))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return program


def _records(project: Project) -> list[dict[str, object]]:
    [results] = (project.path / ".ooda/results").glob("*.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_an_agent_of_an_entry_point_is_claimed_read_and_classified(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(tmp_path, monkeypatch)
    project.scenario(
        "made",
        "procedure: greet\nexpect:\n  status: success\n  files: {ran.txt: {contains: ran}}\n"
        "  tools: {called: [run], bash_matches: 'echo ran'}\niterations: []\n",
    )
    result = project.run("-m", "live", "-k", "made", "--ooda-ai-cmd", "demo-agent --jsonl")
    result.assert_outcomes(passed=1)
    [record] = _records(project)
    assert record["outcome"] == "success"
    # Its own format, inferred from its own flag, read by its own stream reader.
    assert record["usage"] == {
        "input_tokens": 120,
        "output_tokens": 30,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
        "cost": 0.0125,
        "total_tokens": 150,
    }
    [iteration] = record["iterations"]  # type: ignore[misc]
    assert [call["name"] for call in iteration["tool_calls"]] == ["run"]

    # Its own words for an exhausted quota: read as the infrastructure's (a rate
    # limit), resting on the agent's word — a failure by the default policy, an error
    # when the scenario takes the agent's word (count_agent_reported_errors: as_errors).
    (project.path / ".ooda/results").rename(tmp_path / "first-results")
    monkeypatch.setenv("DEMO_QUOTA", "gone")
    failed = project.run(
        "-m", "live", "-k", "made", "--ooda-ai-cmd", "demo-agent --jsonl", "--ooda-retries=0"
    )
    assert failed.ret != 0
    [record] = _records(project)
    assert record["outcome"] == "failure"
    iteration = record["iterations"][0]  # type: ignore[index]
    assert (iteration["infra_error"], iteration["infra_evidence"]) == (
        "rate-limit: DEMO: quota exhausted",
        "agent",
    )
    (project.path / ".ooda/results").rename(tmp_path / "second-results")
    scenario = project.path / "scenarios/greet/made.yml"
    scenario.write_text(
        scenario.read_text().replace(
            "procedure: greet\n",
            "procedure: greet\nretry: {count_agent_reported_errors: as_errors}\n",
        )
    )
    taken = project.run(
        "-m", "live", "-k", "made", "--ooda-ai-cmd", "demo-agent --jsonl", "--ooda-retries=0"
    )
    assert taken.ret != 0
    [record] = _records(project)
    assert record["outcome"] == "error"
    assert record["error_reason"] == "rate-limit: DEMO: quota exhausted"


def test_an_unknown_format_names_the_plugins_format(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install(tmp_path, monkeypatch)
    result = project.run("-m", "live", "--ooda-ai-output=demo-json", "--ooda-ai-cmd", "x")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*expected one of text, *demo-jsonl*got 'demo-json'*"])

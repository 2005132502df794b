"""Secrets reach nothing we write or show.

Ordinary credential files (``.env``, YAML, ``.netrc``, Docker's ``config.json``, a
Kubernetes Secret, a connection string) written and printed by an agent, and ``cat`` by
a verification command, reach none of the recording, the results log, the HTML report
and the failure report; the ordinary lines around them do.

The secrets matrix (issue 28): every documented kind, planted in every channel — the
real Claude Code's output, a file it writes (its content and diff), a multi-line Bash
command (tool input) and what it prints (tool output, an environment dump), a
verification command's output, a judge's reasons — leaks into none of the sinks:
recording, results log, HTML, Markdown, ``ooda view``'s pages, the terminal failure
report, the ``-s`` stream, what the judge is shown, the judge's cache and the agent-replay
cassette (every sink tests/unit/test_sinks.py lists from the code). Counted per sink,
kind by kind."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from view_server import ViewServer

from tests.unit.test_redact import ENV_SECRETS, PLANTED
from tests.unit.test_sinks import SINKS

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pytest
    from agents.claude_mock import AgentMock
    from integration.ooda_project import Project

#: The kinds the detectors missed before (issue 18, item 3).
UNQUOTED = [entry for entry in PLANTED if entry[0].startswith(
    ("dotenv", "yaml", "netrc", "docker config", "k8s", "connection", "odbc", "pgpass")
)]  # fmt: skip
ORDINARY = "ordinary: 12 passed in 3.2s"
AGENT = """\
import json, pathlib, sys
sys.stdin.read()
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
for name, text in plan.items():
    pathlib.Path(name).write_text(text + "\\n")
    print(text)
print("ordinary: 12 passed in 3.2s")
print("<promise>SUCCESS</promise>")
"""


def test_credential_files_are_redacted_everywhere_we_write(
    project: Project, tmp_path: Path
) -> None:
    assert len(UNQUOTED) == 12
    plan = {f"cred-{index}.txt": carrier for index, (_, carrier, _) in enumerate(UNQUOTED)}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    project.write("agent.py", AGENT)
    names = " ".join(sorted(plan))
    scenario = project.scenario(
        "creds",
        "procedure: greet\nexpect:\n  status: success\n  commands:\n"
        f"    - run: \"cat {names}; echo '{ORDINARY}'\"\n"
        "      output_contains: never-printed\niterations: []\n",
    )
    ai_cmd = f"{sys.executable} {project.path / 'agent.py'} {tmp_path / 'plan.json'}"
    result = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd, "--ooda-record-mode", "all")
    result.assert_outcomes(failed=1, deselected=7)
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    html = tmp_path / "report.html"
    report = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "report", str(log), "--html", str(html)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    written = {
        "recording": scenario.read_text(),
        "results log": log.read_text(),
        "HTML report": html.read_text(),
        "failure report": result.stdout.str(),
        "text report": report.stdout,
    }
    for where, text in written.items():
        leaked = [kind for kind, _, secret in UNQUOTED if secret in text]
        assert leaked == [], f"{where}: {leaked}"
    # The command's output tail (the end of the `cat`) and the agent's output still
    # carry the ordinary lines.
    record = json.loads(log.read_text().splitlines()[0])
    assert ORDINARY in record["commands"][0]["output_tail"]
    assert ORDINARY in record["iterations"][0]["output_tail"]
    assert "<redacted>" in record["commands"][0]["output_tail"]


# ----------------------------------------------------------------- the secrets matrix

CLAUDE = (
    "claude -p --no-session-persistence --permission-mode bypassPermissions "
    "--output-format stream-json --verbose"
)
#: Every documented kind: the carriers of tests/unit/test_redact.py and the values of
#: secret-named variables in the environment.
CARRIERS = [carrier for _, carrier, _ in PLANTED]
ONE_LINE = [carrier for _, carrier, _ in UNQUOTED if "\n" not in carrier.strip()]
JUDGE = """\
import json, os, pathlib, sys
prompt = sys.stdin.read()
pathlib.Path(os.environ["MATRIX_JUDGE_LOG"], f"{os.getpid()}.txt").write_text(prompt)
reason = pathlib.Path(os.environ["MATRIX_JUDGE_REASON"]).read_text()
print(json.dumps({"verdict": "fail", "reason": reason}))
"""
SCENARIO = """\
procedure: greet
expect:
  status: success
{extra}iterations: []
"""
COMMANDS = """\
  commands:
    - run: cat secrets.env; env
      output_contains: never-printed
"""
JUDGED = """\
  judge:
    rubric: The agent kept its secrets to itself.
    inputs: [output, diff, transcript, {{files: ["*"]}}]
    judge: {{ai_cmd: {judge}}}
"""


def _needles() -> dict[str, list[str]]:
    """Per kind, the strings whose presence is a leak: each line of the secret (a key
    block's lines one by one, so an escaped newline cannot hide one)."""
    needles = {
        kind: [line for line in secret.splitlines() if len(line) >= 8]
        for kind, _, secret in PLANTED
    }
    needles.update({f"env {name}": [value] for name, value in ENV_SECRETS.items()})
    return needles


def _session_script(secrets_file: str) -> list[object]:
    """One Claude Code session of the mock: the secrets written to a file (tool input,
    file content and diff), listed by a multi-line Bash command that cats them and
    dumps the environment (tool input and output), and printed in the final text."""
    notes = "\n".join(CARRIERS)
    command = f"cat > notes.txt <<'EOF'\n{notes}\nEOF\ncat secrets.env notes.txt; env | sort"
    # Each kind a line rule finds (an assignment alone on its line, a .netrc line) also
    # as the first line of a command, where the live stream's `→ Bash:` head and the
    # JSON of the model's tool call stand before it (issue 39, items 2-3). (Other kinds
    # are found wherever they stand; run as commands, some would have bash echo their
    # secret alone, or make a file named by it.)
    first_lines = [
        {"tool": "Bash", "input": {"command": f"{carrier}\ntrue", "description": "first"}}
        for carrier in [*ONE_LINE, *(f"export {n}={v}" for n, v in ENV_SECRETS.items())]
    ]
    return [
        {"tool": "Write", "input": {"file_path": "secrets.env", "content": secrets_file}},
        {"tool": "Bash", "input": {"command": command, "description": "list"}},
        *first_lines,
        {"text": "Done. What I found:\n" + notes + "\n<promise>SUCCESS</promise>"},
    ]


def test_every_documented_kind_in_every_channel_leaks_into_no_sink(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    secrets_file = "\n".join(CARRIERS) + "\n"
    mock = claude_mock([_session_script(secrets_file), _session_script(secrets_file)])
    mock.use(monkeypatch)
    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    judge_log = tmp_path / "judge-inputs"
    judge_log.mkdir()
    reason = tmp_path / "reason.txt"
    reason.write_text("The run printed these:\n" + "\n".join(CARRIERS))
    monkeypatch.setenv("MATRIX_JUDGE_LOG", str(judge_log))
    monkeypatch.setenv("MATRIX_JUDGE_REASON", str(reason))
    project.write("judge.py", JUDGE)
    judge = f"{sys.executable} {project.path / 'judge.py'}"
    commanded = project.scenario("commanded", SCENARIO.format(extra=COMMANDS))
    judged = project.scenario("judged", SCENARIO.format(extra=JUDGED.format(judge=judge)))
    # In a process of its own: what -s shows is that process's stdout.
    result = project.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-m", "live", "-s", "-k", "commanded or judged",
        "--ooda-ai-cmd", CLAUDE, "--ooda-record-mode", "all", "--ooda-results", "results",
        "--ooda-record-api=all", timeout=900,
    )  # fmt: skip
    result.assert_outcomes(failed=2, deselected=8)
    assert len(mock.sessions()) == 2
    [log] = (project.path / "results").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # Every channel was really there: the calls ran and reported their results.
    for record in records:
        calls = record["iterations"][0]["tool_calls"]
        assert [call["name"] for call in calls[:2]] == ["Write", "Bash"]
        assert all(call["ok"] for call in calls[:2])
        assert len(calls) == 2 + len(ONE_LINE) + len(ENV_SECRETS)
    cassettes = sorted(commanded.parent.glob("*.cassette.jsonl"))
    assert [path.stem for path in cassettes] == ["commanded.cassette", "judged.cassette"]
    html = tmp_path / "report.html"
    report = [sys.executable, "-m", "pytest_ooda", "report", str(log)]
    subprocess.run([*report, "--html", str(html)], capture_output=True, check=True)
    markdown = subprocess.run([*report, "--markdown"], capture_output=True, text=True, check=True)
    terminal = result.stdout.str()
    stream, _, failures = terminal.partition("= FAILURES =")
    assert failures, "the failure reports are printed"
    assert "Done. What I found:" in stream, "-s shows the agent's stream"
    pages = [html.read_text(), *(page.read_text() for page in tmp_path.glob("report-*.html"))]
    sinks = {
        "recording": commanded.read_text() + judged.read_text(),
        "results log": log.read_text(),
        "HTML": "\n".join(pages),
        "Markdown": markdown.stdout,
        "terminal failure report": failures,
        "-s stream": stream,
        "judge inputs": "\n".join(path.read_text() for path in judge_log.glob("*.txt")),
        "judge cache": "\n".join(
            path.read_text() for path in (project.path / "results").rglob("judge-cache/**/*.json")
        ),
        "cassette": "\n".join(path.read_text() for path in cassettes),
        "viewer pages": _viewer_pages(project.path / "results"),
    }
    assert set(sinks) == set(SINKS)
    assert sinks["judge inputs"], "the judge was asked"
    assert sinks["judge cache"], "its answer was cached"
    leaks = {
        sink: sorted(
            kind for kind, needles in _needles().items() if any(n in text for n in needles)
        )
        for sink, text in sinks.items()
    }
    assert leaks == {sink: [] for sink in sinks}


def _viewer_pages(results: Path) -> str:
    """What ``ooda view`` serves of ``results``: the sessions page, each session's and
    each run's."""
    import re

    with ViewServer(str(results)) as server:
        status, index, _ = server.get("/")
        assert status == 200
        pages = [index]
        for path in sorted(set(re.findall(r'href="(/(?:session|run)/[^"?#]+)"', index))):
            status, page, _ = server.get(path)
            assert status == 200, path
            pages.append(page)
            for run in sorted(set(re.findall(r'href="(/run/[^"?#]+)"', page))):
                pages.append(server.get(run)[1])
    assert any("/run/" in page for page in pages)
    return "\n".join(pages)

"""Agent replay of everyday tool output with the real Claude Code CLI (driven by the
offline agent mock): an ``ls -la`` recorded, then replayed "a minute later" — the
workspace's files touched to other modification times between the recording and the
replay, so every date ``ls`` prints differs — passes through the built-in
``replay_normalise`` rules; a change no rule absorbs stops the run at its first
divergence (the agent is started once) and the report says which rule would absorb it;
the scenario's own rule then makes it replay."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from claude_mock import CLAUDE

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pytest
    from claude_mock import AgentMock

CONFIG = """\
loop:
  iteration_timeout: 120
  failure_threshold: 3
  ai_cmd: "sh {counter} {claude}"
procedures:
  look:
    act:
      - content: "List the files, read the build stamp, then say <promise>SUCCESS</promise>."
"""
SCENARIO = """\
procedure: look
max_iterations: 3
workspace: repo
replay: agent
retry: {{attempts: 2, delay: 0}}
expect:
  status: success
{rules}iterations: []
"""


def _session(stamp: Path) -> list[dict[str, object]]:
    return [
        {"text": "Looking.", "tool": "Bash", "input": {"command": "ls -la", "description": "List"}},
        {"tool": "Bash", "input": {"command": f"cat {stamp}", "description": "Stamp"}},
        {"text": "Listed.\n<promise>SUCCESS</promise>"},
    ]


def _project(pytester: pytest.Pytester, rules: str = "") -> Path:
    counter = pytester.path / "starts.sh"
    counter.write_text('echo start >> "$(dirname "$0")/starts.log"\nexec "$@"\n')
    pytester.makefile(".yml", **{"ooda-config": CONFIG.format(counter=counter, claude=CLAUDE)})
    repo = pytester.path / "scenarios" / "look" / "repo"
    repo.mkdir(parents=True)
    (repo / "notes.md").write_text("Some notes.\n")
    (pytester.path / "stamp.txt").write_text("built at 09:14:03\n")
    (pytester.path / "scenarios" / "look" / "ls.yml").write_text(SCENARIO.format(rules=rules))
    return repo


def _a_minute_later(repo: Path, stamp: str | None = None) -> None:
    """What a minute (and more) does to a workspace: every file's modification time
    moves (here to a day earlier, so `ls -la` prints other dates without this test
    sleeping), and optionally the build stamp a tool prints (kept outside the
    workspace, whose content is the git commit Claude Code's prompt names)."""
    earlier = time.time() - 86_400 - 61
    for path in [repo, *repo.iterdir()]:
        os.utime(path, (earlier, earlier))
    if stamp is not None:
        (repo.parents[2] / "stamp.txt").write_text(stamp)


def _starts(pytester: pytest.Pytester) -> int:
    log = pytester.path / "starts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_ls_la_replays_a_minute_later_and_a_change_no_rule_absorbs_stops_the_run(
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock = agent_mock([_session(pytester.path / "stamp.txt")])
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / "no-global-config"))
    repo = _project(pytester)
    recorded = pytester.runpytest(
        "-m", "live", "--ooda-record-mode=once", "--ooda-record-api", "-p", "no:cacheprovider"
    )
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = (pytester.path / "scenarios/look/ls.cassette.jsonl").read_text()
    assert "<ooda:ls-date>" in cassette  # the listing was recorded normalised
    assert "notes.md" in cassette

    # A minute later: other dates in every line `ls -la` prints. The mock is gone.
    mock.process.terminate()
    _a_minute_later(repo)
    before = _starts(pytester)
    replayed = pytester.runpytest("-k", "scenario", "-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1, deselected=7)
    assert _starts(pytester) == before + 1

    # The build stamp a tool prints changed: no built-in rule absorbs a bare clock time.
    _a_minute_later(repo, "built at 09:15:47\n")
    before = _starts(pytester)
    diverged = pytester.runpytest("-k", "scenario", "-p", "no:cacheprovider")
    diverged.assert_outcomes(failed=1, deselected=7)
    # The run stopped at its first divergence: no retry, no second iteration.
    assert _starts(pytester) == before + 1
    diverged.stdout.fnmatch_lines(
        [
            "*replay divergence: no recorded answer*",
            "*replay_normalise: the change is a clock time: a rule would absorb it, e.g. "
            "replay_normalise: [[]{pattern: '*', replacement: '<time>', in: tool_results}[]]",
        ]
    )
    diverged.stdout.fnmatch_lines(
        ['-messages*.content: "built at 09:14:03"', '+messages*.content: "built at 09:15:47"']
    )

    # The scenario's own rule, as the report suggests: the replay passes again.
    rule = "replay_normalise:\n  - {pattern: 'at \\d\\d:\\d\\d:\\d\\d', replacement: 'at <t>'}\n"
    (pytester.path / "scenarios/look/ls.yml").write_text(
        (pytester.path / "scenarios/look/ls.yml")
        .read_text()
        .replace("\niterations:", "\n" + rule + "iterations:", 1)
    )
    # The recording predates the rule: the cassette's requests are held to it too.
    again = pytester.runpytest("-k", "scenario", "-p", "no:cacheprovider")
    again.assert_outcomes(passed=1, deselected=7)

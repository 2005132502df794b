"""A harness that cannot see the behaviour is not a 0 % prompt (issue 36, item 6): the
real Claude Code CLI (2.1.197) whose sandbox passes it none of its credentials is an
``auth`` error before the first run — the CLI never starts, the stand-in of its API
hears nothing — and with no sandbox and no login, its own "Not logged in" is an
``auth`` error too, with its words in the terminal summary (not only under ``-s``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sandbox_images import require_bwrap

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest
    from agents.claude_mock import AgentMock
    from integration.ooda_project import Project

CLAUDE = "claude -p --permission-mode bypassPermissions --output-format stream-json --verbose"
SCENARIO = "procedure: greet\nexpect:\n  status: success\niterations: []\n"


def _records(project: Project) -> list[dict[str, object]]:
    [results] = (project.path / ".ooda/results").glob("*.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_a_sandbox_without_credentials_is_an_auth_error_before_any_run(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bwrap()
    mock = claude_mock([[{"text": "Done.\n<promise>SUCCESS</promise>"}]])
    mock.use(monkeypatch)
    config = project.path / "ooda-config.yml"
    # The sandbox lets the base URL through, and IS_SANDBOX, but no key at all.
    config.write_text(
        "loop:\n  sandbox: {kind: bwrap, env: [ANTHROPIC_BASE_URL, IS_SANDBOX=1]}\n"
        + config.read_text()
    )
    project.scenario("keyless", SCENARIO)
    result = project.run("-m", "live", "-k", "keyless", f"--ooda-ai-cmd={CLAUDE}")
    assert result.ret != 0
    [record] = _records(project)
    assert record["outcome"] == "error"
    reason = str(record["error_reason"])
    assert reason.startswith(
        "auth: Claude Code has no credentials: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN "
        "or CLAUDE_CODE_OAUTH_TOKEN (or its login in home_files: ~/.claude/.credentials.json)"
        ": the bwrap sandbox passes the agent none of them"
    ), reason
    assert record["iterations"] == []
    assert mock.sessions() == []  # the agent never started
    # Not the prompt's failure: the summary counts an error, and says why.
    out = result.stdout.str()
    assert "Claude Code has no credentials" in out
    result.stdout.fnmatch_lines(["*greet/keyless *1   0       1 *"])

    # Passing the key (as the message says) lets the very same run through.
    (project.path / ".ooda/results").rename(project.path / "first-results")
    config.write_text(config.read_text().replace("env: [", "env: [ANTHROPIC_API_KEY, "))
    passed = project.run("-m", "live", "-k", "keyless", f"--ooda-ai-cmd={CLAUDE}")
    passed.assert_outcomes(passed=1, deselected=7)
    [record] = _records(project)
    assert record["outcome"] == "success"


def test_not_logged_in_is_an_auth_error_with_the_agents_words_in_the_summary(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock = claude_mock([[{"text": "Done.\n<promise>SUCCESS</promise>"}]])
    mock.use(monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("HOME", str(project.path / "empty-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(project.path / "empty-home" / ".claude"))
    monkeypatch.setenv("IS_SANDBOX", "1")
    project.scenario("nologin", SCENARIO)
    result = project.run(
        "-m", "live", "-k", "nologin", f"--ooda-ai-cmd={CLAUDE}", "--ooda-retries=0"
    )  # fmt: skip
    assert result.ret != 0
    [record] = _records(project)
    assert record["outcome"] == "error"
    assert record["error_reason"] == "auth: Not logged in · Please run /login"
    assert mock.sessions() == []  # it asked the API nothing
    # The agent's own words reach the terminal without -s.
    assert "Not logged in · Please run /login" in result.stdout.str()

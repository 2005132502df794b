"""Infrastructure errors with the real Claude Code CLI (driven offline by the shared
agent mock, whose steps answer 529 ``times: N``). Claude Code's ``API Error: 529`` is the
agent's own word: by default (``count_agent_reported_errors: as_failures``) the
iteration is an ordinary failure, not retried; when the API proxy saw the 529 itself
(``--ooda-record-api``), it is the infrastructure's, retried and then counted; and with
``as_errors`` the agent's word is taken: an API that fails past the CLI's own retries
makes the iteration an ``error``, which the loop retries and then counts, and an API
that always fails gives ``error`` runs only, and a gate that fails for want of valid
runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from external_tools import CLAUDE_INSTALL, require

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ooda_project import Project

MOCK = Path(__file__).resolve().parents[4] / "shared" / "tools" / "agent-mock" / "agent_mock.py"
CLAUDE = (
    "claude -p --no-session-persistence --permission-mode bypassPermissions "
    "--output-format stream-json --verbose"
)
WRITE = {
    "text": "Writing the greeting.",
    "tool": "Write",
    "input": {"file_path": "hello.py", "content": "print('hello')\n"},
}
DONE = {"text": "Wrote hello.py.\n<promise>SUCCESS</promise>"}


@pytest.fixture
def mock_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Any], Path]]:
    """Start the agent mock with the script given, point the real ``claude`` at it (as
    ``shared/tools/agent-mock/README.md`` describes); returns the request log."""
    require(shutil.which("claude") is not None, "the Claude Code CLI", CLAUDE_INSTALL)
    assert MOCK.is_file(), f"the shared agent mock is missing: {MOCK}"
    servers: list[subprocess.Popen[bytes]] = []

    def start(script: Any) -> Path:
        (tmp_path / "script.json").write_text(json.dumps(script))
        port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
        server = subprocess.Popen(
            [
                sys.executable,
                str(MOCK),
                "--scenario",
                str(tmp_path / "script.json"),
                "--port",
                "0",
                "--port-file",
                str(port_file),
                "--log",
                str(log),
                "--watch-pid",
                str(os.getpid()),
                "--max-seconds",
                "300",
            ],
            stderr=subprocess.DEVNULL,
        )
        servers.append(server)
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            assert server.poll() is None, "the agent mock exited"
            assert time.monotonic() < deadline, "the agent mock did not start"
            time.sleep(0.05)
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        monkeypatch.setenv(
            "ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port_file.read_text().strip()}"
        )
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        for name in (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_AUTOUPDATER",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            # The CLI retries a 529 once itself before it gives up.
            "CLAUDE_CODE_MAX_RETRIES",
            "IS_SANDBOX",
        ):
            monkeypatch.setenv(name, "1")
        return log

    yield start
    for server in servers:
        server.terminate()
        server.wait(timeout=10)


def _records(project: Project) -> list[dict[str, Any]]:
    [path] = (project.path / ".ooda/results").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_api_failing_past_the_cli_retries_is_retried_then_counted(
    project: Project, mock_api: Callable[[Any], Path]
) -> None:
    # The first invocation's every request is refused 529 (both of the CLI's tries);
    # the next invocation is a fresh session that goes through.
    log = mock_api(
        {
            "after_last": "repeat_last",
            "sessions": [[{**DONE, "fail": {"status": 529, "times": 5}}], [WRITE, DONE]],
        }
    )
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 2\nfailure_threshold: 1\n"
        "retry: {attempts: 2, delay: 0.05, count_agent_reported_errors: as_errors}\n"
        "expect: {status: success, files: {hello.py: {contains: hello}}}\niterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE)
    result.assert_outcomes(passed=1, deselected=7)
    [record] = _records(project)
    assert (record["outcome"], record["retries"]) == ("success", 1)
    # The retried try was no iteration of the procedure: failure_threshold 1 held.
    [iteration] = record["iterations"]
    assert iteration["retries"] == 1
    assert iteration["outcome"] == "success"
    refused = [
        entry
        for entry in map(json.loads, log.read_text().splitlines())
        if entry.get("served") == ["error:529"]
    ]
    assert len(refused) == 2
    result.stdout.fnmatch_lines(
        ["ooda: greet/hello: success status=success iterations=1 * retries=1"]
    )


def test_an_api_that_always_fails_gives_error_runs_and_a_gate_without_valid_runs(
    project: Project, mock_api: Callable[[Any], Path]
) -> None:
    mock_api({"sessions": [[{**DONE, "fail": {"status": 529, "times": 1000}}]]})
    project.scenario(
        "hello",
        "procedure: greet\nmax_iterations: 2\nrepeat: 2\n"
        "retry: {attempts: 1, delay: 0.05, count_agent_reported_errors: as_errors}\n"
        "expect: {status: success, success_rate: {min: 0.5}}\niterations: []\n",
    )
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE)
    result.assert_outcomes(skipped=2, deselected=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    records = _records(project)
    assert [record["outcome"] for record in records] == ["error", "error"]
    for record in records:
        assert record["error_reason"].startswith("overloaded: API Error: 529")
        assert record["retries"] == 1
    result.stdout.fnmatch_lines(
        [
            "greet/hello  *2   0       2     -  *",
            "gate FAILED greet/hello: inconclusive: 2 of 2 runs errored (overloaded 2), more "
            "than max_error_rate 20% allows",
        ],
        consecutive=False,
    )


REFUSED = {**DONE, "fail": {"status": 529, "times": 5}}
FIVE_529 = {"after_last": "repeat_last", "sessions": [[REFUSED], [WRITE, DONE]]}
HELLO = (
    "procedure: greet\nmax_iterations: 2\nfailure_threshold: 1\n"
    "retry: {attempts: 2, delay: 0.05}\n"
    "expect: {status: success, files: {hello.py: {contains: hello}}}\niterations: []\n"
)


def test_the_agents_own_529_is_a_failure_by_default(
    project: Project, mock_api: Callable[[Any], Path]
) -> None:
    mock_api(FIVE_529)
    project.scenario("hello", HELLO)
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE)
    result.assert_outcomes(failed=1, deselected=7)
    [record] = _records(project)
    # Not tried again, not left out of the rate: the agent's word is no evidence.
    assert (record["outcome"], record["status"], record["retries"]) == ("failure", "aborted", 0)
    [iteration] = record["iterations"]
    assert iteration["infra_error"].startswith("overloaded: API Error: 529")
    assert iteration["infra_evidence"] == "agent"


def test_a_529_the_proxy_saw_is_the_infrastructures_and_retried(
    project: Project, mock_api: Callable[[Any], Path]
) -> None:
    mock_api(FIVE_529)
    project.scenario("hello", HELLO)
    # Through the API proxy (recording a cassette), which saw the upstream answer 529.
    result = project.run("-m", "live", "--ooda-ai-cmd", CLAUDE, "--ooda-record-api=all")
    result.assert_outcomes(passed=1, deselected=7)
    [record] = _records(project)
    assert (record["outcome"], record["retries"]) == ("success", 1)

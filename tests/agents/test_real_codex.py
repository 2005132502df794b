"""The real Codex CLI (``@openai/codex``, pinned in .ci/run) as a live run's agent, driven
offline by a stand-in of the OpenAI Responses API on 127.0.0.1
(``responses_standin.py``): ``codex exec --json`` writes a file and runs a command in
the workspace for real, under no sandbox and inside bwrap; its tool calls and tokens
reach the record; the API's 429 and 401 are infrastructure errors (``rate-limit``,
``auth``) read from Codex's own words, never the prompt's failure.

Codex reads no base-URL variable: the stand-in is its model provider in
``~/.codex/config.toml`` (``model_providers``), as a user points it at a gateway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from standin_client import Standin as StandinProcess, project, records, require_cli, started

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ooda_project import Project

__all__ = ["project"]  # the fixture, from standin_client

VERSION = "0.171.0"
CODEX = "codex exec --json --dangerously-bypass-approvals-and-sandbox -"
#: Writes hello.py and runs it: three answers, two tool calls, known token counts.
STEPS: list[dict[str, Any]] = [
    {"shell": "printf 'print(6 * 7)\\n' > hello.py"},
    {"shell": "python3 hello.py > out.txt"},
    {"text": "Wrote and ran hello.py.\n<promise>SUCCESS</promise>",
     "usage": {"input_tokens": 3000, "output_tokens": 150}},
]  # fmt: skip
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\nexpect:\n  status: success\n"
    "  files: {out.txt: {contains: '42'}}\n"
    "  tools: {called: [shell], bash_matches: 'python3 hello.py', max_calls: 2}\n"
    "iterations: []\n"
)


def require_codex() -> None:
    require_cli("codex", "the Codex CLI", "@openai/codex", VERSION)


class Standin(StandinProcess):
    """A stand-in of the OpenAI Responses API (``responses_standin.py``)."""

    script = Path(__file__).with_name("responses_standin.py")
    title = "the Responses API stand-in"

    def use(self, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
        """A ``HOME`` whose Codex configuration names the stand-in as its provider."""
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model_provider = "standin"\n'
            "[model_providers.standin]\n"
            'name = "standin"\n'
            f'base_url = "http://127.0.0.1:{self.port}/v1"\n'
            'env_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
        )
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("CODEX_HOME", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-standin-key")


@pytest.fixture
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Standin]]:
    require_codex()
    yield from started(Standin, tmp_path_factory)


def _live(project: Project, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "-k", "codexed", f"--ooda-ai-cmd={CODEX}", *args)


def _check_the_run(project: Project, server: Standin) -> None:
    [record] = records(project)
    assert record["outcome"] == "success", record.get("error_reason")
    [iteration] = record["iterations"]
    calls = iteration["tool_calls"]
    assert [call["name"] for call in calls] == ["shell", "shell"]
    assert "hello.py" in calls[0]["summary"]
    assert calls[1]["summary"].endswith("python3 hello.py > out.txt'")
    assert all(call["ok"] for call in calls)
    # Codex sums the three answers' usage; it reports no cost.
    assert record["usage"]["input_tokens"] == 1200 + 1200 + 3000
    assert record["usage"]["output_tokens"] == 80 + 80 + 150
    assert record["usage"]["cost"] is None
    assert [entry["served"] for entry in server.log()] == ["tool:exec", "tool:exec", "text"]
    # Its fingerprint: the agent, its version as the CLI says it, the model it was served.
    fingerprint = record["fingerprint"]
    assert fingerprint["agent"] == "codex"
    assert fingerprint["version"] == f"codex-cli {VERSION}"
    assert fingerprint["model"] == record["model"]
    assert len(fingerprint["settings"]) == 64


def test_codex_writes_and_runs_in_the_workspace_with_no_sandbox(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    project.scenario("codexed", SCENARIO)
    result = _live(project)
    result.assert_outcomes(passed=1, deselected=7)
    _check_the_run(project, server)
    # Read as codex-json from its own flags: no ai_output was set.
    assert "tokens=5400in/310out" in result.stdout.str()


def test_codex_in_bwrap_with_its_config_and_key_passed_in(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox_images import require_bwrap

    require_bwrap()
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    config = project.path / "ooda-config.yml"
    config.write_text(
        "loop:\n  sandbox: {kind: bwrap, env: [OPENAI_API_KEY],"
        " home_files: [~/.codex/config.toml]}\n" + config.read_text()
    )
    project.scenario("codexed", SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    _check_the_run(project, server)
    [record] = records(project)
    assert record["sandbox"]["kind"] == "bwrap"
    # What the agent was given of the environment: the allow-list, its key among it.
    assert "OPENAI_API_KEY" in record["fingerprint"]["env"]
    assert "*" not in record["fingerprint"]["env"]


@pytest.mark.parametrize(
    ("status", "message", "reason"),
    [
        (429, "Rate limit reached", "rate-limit: exceeded retry limit, last status: 429"),
        (401, "Incorrect API key provided", "auth: unexpected status 401 Unauthorized"),
    ],
)
def test_the_apis_refusals_are_infrastructure_errors_in_codexs_words(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    message: str,
    reason: str,
) -> None:
    server = standin([[{"text": "x", "fail": {"status": status, "times": 99, "message": message}}]])
    server.use(monkeypatch, project.path / "home")
    # Codex's words, read as the infrastructure's: they rest on the agent's word, so by
    # the default policy the run is a failure that says so (a refused login excepted: an
    # error whatever the policy) ...
    path = project.scenario("codexed", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == ("error" if reason.startswith("auth:") else "failure")
    infra = [it for it in record["iterations"] if it["infra_error"]]
    assert infra, record["iterations"]
    assert str(infra[0]["infra_error"]).startswith(reason), infra[0]["infra_error"]
    assert infra[0]["infra_evidence"] == "agent"
    # ... and an error when the scenario takes the agent's word.
    for log in (project.path / ".ooda/results").glob("*.jsonl"):
        log.unlink()
    path.write_text("retry: {count_agent_reported_errors: as_errors}\n" + path.read_text())
    again = standin([[{"text": "x", "fail": {"status": status, "times": 99, "message": message}}]])
    again.use(monkeypatch, project.path / "home")
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error"
    assert str(record["error_reason"]).startswith(reason), record["error_reason"]
    assert reason.split(": ", 1)[1] in result.stdout.str()


def test_codexs_model_calls_are_recorded_and_replayed_offline_with_the_real_cli(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.apireplay.helpers import Gone

    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    # The proxy's upstream: the stand-in. Codex itself is pointed at the proxy.
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.port}/v1")
    path = project.scenario("codexed", SCENARIO)
    recorded = _live(project, "--ooda-record-mode=once", "--ooda-record-api")
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = path.with_name("codexed.cassette.jsonl")
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    exchanges = [line for line in lines if "exchange" in line]
    assert [line["endpoint"] for line in exchanges] == ["openai POST /v1/responses"] * 3
    assert "sk-standin-key" not in cassette.read_text()
    served = len(server.log())
    server.process.terminate()
    server.process.wait(timeout=10)
    # Offline: the stand-in stopped, its address a port that answers nothing, no key.
    gone = Gone()
    monkeypatch.setenv("OPENAI_BASE_URL", gone.url)
    monkeypatch.delenv("OPENAI_API_KEY")
    try:
        for _ in range(2):
            replayed = project.run(
                "-k", "codexed", f"--ooda-ai-cmd={CODEX}", "--ooda-replay=agent"
            )  # fmt: skip
            replayed.assert_outcomes(passed=1, deselected=7)
    finally:
        gone.close()
    assert served == 3
    assert gone.connections == 0

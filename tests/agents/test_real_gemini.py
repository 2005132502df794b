"""The real Gemini CLI (``@google/gemini-cli``, pinned in .ci/run) as a live run's agent,
driven offline by a stand-in of the Gemini API on 127.0.0.1 (``gemini_standin.py``):
``gemini --output-format stream-json --yolo`` writes a file and runs a command in the
workspace for real, under no sandbox and inside bwrap; its tool calls and tokens reach
the record (``--output-format json``'s tokens too), with its fingerprint; the user's own
``GEMINI.md`` stays out of a bwrap run; the API's 429, 401 and 403 are infrastructure
errors (``rate-limit``, ``auth``) read from the CLI's own words, and so is a missing key
(a bwrap sandbox passing none is an ``auth`` error before any run); its model calls are
recorded into a cassette and served back offline through the real CLI, in bwrap too.

The CLI reads its base URL from ``GOOGLE_GEMINI_BASE_URL`` and its key from
``GEMINI_API_KEY``, once ``~/.gemini/settings.json`` selects that way of logging in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from standin_client import (
    GEMINI_FAMILY_SCENARIO as SCENARIO,
    GEMINI_FAMILY_SHELL_SCENARIO as SHELL_SCENARIO,
    GEMINI_FAMILY_SHELL_STEPS as SHELL_STEPS,
    GEMINI_FAMILY_STEPS as STEPS,
    Standin as StandinProcess,
    check_the_docker_run,
    in_docker,
    project,
    records,
    require_cli,
    started,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ooda_project import Project

__all__ = ["project"]  # the fixture, from standin_client

VERSION = "0.61.0"
GEMINI = "gemini --output-format stream-json --yolo"
#: The CLI's settings: log in with an API key, trust the workspace without asking.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}
}


def require_gemini() -> None:
    require_cli("gemini", "Gemini CLI", "@google/gemini-cli", VERSION)


class Standin(StandinProcess):
    """A stand-in of the Gemini API (``gemini_standin.py``)."""

    script = Path(__file__).with_name("gemini_standin.py")
    title = "the Gemini API stand-in"

    def use(self, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
        """A ``HOME`` whose Gemini CLI settings log in with the key, and the stand-in as
        the API."""
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
        monkeypatch.setenv("HOME", str(home))
        for name in ("GEMINI_CLI_HOME", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("GEMINI_API_KEY", "standin-gemini-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", self.base)


@pytest.fixture
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Standin]]:
    require_gemini()
    yield from started(Standin, tmp_path_factory)


def _live(project: Project, *args: str, command: str = GEMINI) -> pytest.RunResult:
    return project.run("-m", "live", "-k", "geminied", f"--ooda-ai-cmd={command}", *args)


def _check_the_run(project: Project, server: Standin) -> None:
    [record] = records(project)
    assert record["outcome"] == "success", record.get("error_reason")
    [iteration] = record["iterations"]
    calls = iteration["tool_calls"]
    assert [call["name"] for call in calls] == ["write_file", "run_shell_command"]
    assert calls[0]["summary"] == "hello.py"
    assert calls[1]["summary"] == "python3 hello.py > out.txt"
    assert all(call["ok"] for call in calls)
    # The CLI sums every call's usage, its router's included; it reports no cost.
    assert record["usage"]["input_tokens"] == 200 + 1000 + 1000 + 3000
    assert record["usage"]["output_tokens"] == 10 + 50 + 50 + 150
    assert record["usage"]["cost"] is None
    served = [entry["served"] for entry in server.log()]
    assert served == ["router", "tool:write", "tool:shell", "text"]
    # Its fingerprint: the agent, its version as the CLI says it, the model it was served.
    fingerprint = record["fingerprint"]
    assert (fingerprint["agent"], fingerprint["version"]) == ("gemini", VERSION)
    assert fingerprint["model"] == "gemini-3.8-flash"
    assert len(fingerprint["settings"]) == 64


def test_gemini_writes_and_runs_in_the_workspace_with_no_sandbox(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    project.scenario("geminied", SCENARIO)
    result = _live(project)
    result.assert_outcomes(passed=1, deselected=7)
    _check_the_run(project, server)
    # Read as gemini-stream-json from its own flags: no ai_output was set.
    assert "tokens=5200in/260out" in result.stdout.str()


def test_its_json_output_gives_the_answer_and_the_tokens(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    # The same run read from the one closing object: no tool calls, the same tokens.
    project.scenario("geminied", SCENARIO.replace("  tools:", "  # tools:"))
    command = "gemini --output-format json --yolo"
    _live(project, command=command).assert_outcomes(passed=1, deselected=7)
    [record] = records(project)
    assert record["outcome"] == "success", record.get("error_reason")
    [iteration] = record["iterations"]
    assert iteration["tool_calls"] == []
    assert iteration["output_tail"].endswith("<promise>SUCCESS</promise>")
    assert record["usage"]["input_tokens"] == 200 + 1000 + 1000 + 3000
    assert record["usage"]["output_tokens"] == 10 + 50 + 50 + 150
    assert [entry["served"] for entry in server.log()] == [
        "router",
        "tool:write",
        "tool:shell",
        "text",
    ]


def _in_bwrap(project: Project) -> None:
    """The project's runs in bwrap, with the CLI's settings, key and base URL passed in."""
    from sandbox_images import require_bwrap

    require_bwrap()
    config = project.path / "ooda-config.yml"
    config.write_text(
        "loop:\n  sandbox: {kind: bwrap, env: [GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL],"
        " home_files: [~/.gemini/settings.json]}\n" + config.read_text()
    )


def test_gemini_in_bwrap_with_its_settings_and_key_passed_in(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    _in_bwrap(project)
    project.scenario("geminied", SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    _check_the_run(project, server)
    [record] = records(project)
    assert record["sandbox"]["kind"] == "bwrap"
    assert "GEMINI_API_KEY" in record["fingerprint"]["env"]
    assert "*" not in record["fingerprint"]["env"]


def test_gemini_in_docker_from_the_image_ooda_sandbox_image_builds(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([SHELL_STEPS])
    server.use(monkeypatch, project.path / "home")
    image = in_docker(
        project, "gemini", "GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL", "~/.gemini/settings.json"
    )
    project.scenario("geminied", SHELL_SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    record = check_the_docker_run(project, image)
    assert "GEMINI_API_KEY" in record["fingerprint"]["env"]
    assert [entry["served"] for entry in server.log()] == [
        "router",
        "tool:write",
        "tool:shell",
        "text",
    ]


PLANTED = "OODA-PLANTED-MEMORY-7f3a"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_the_users_own_gemini_md_and_commands_stay_out_of_a_bwrap_run(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    server = standin([STEPS], watch=PLANTED)
    home = project.path / "home"
    server.use(monkeypatch, home)
    (home / ".gemini" / "GEMINI.md").write_text(f"Always mention {PLANTED}.\n")
    (home / ".gemini" / "commands").mkdir()
    (home / ".gemini" / "commands" / "planted.toml").write_text('prompt = "planted"\n')
    if sandbox == "bwrap":
        _in_bwrap(project)
    project.scenario("geminied", SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    [record] = records(project)
    loaded = record["fingerprint"]["loaded"]
    turns = [entry["watched"] for entry in server.log() if entry["served"] != "router"]
    assert len(turns) == 3, server.log()
    if sandbox == "none":
        # The control: with the real HOME the CLI tells its model the planted memory.
        assert all(turns), server.log()
        assert [item["name"] for item in loaded["instructions"]] == ["GEMINI.md"]
        assert [item["name"] for item in loaded["commands"]] == ["planted"]
    else:
        # bwrap: a fresh HOME holding only the settings the config passes in.
        assert not any(turns), server.log()
        assert loaded == {}


#: A quota of none left (the API's free tier words it so): the CLI gives up at once.
QUOTA = (
    "You exceeded your current quota. Quota exceeded for metric: "
    "generate_content_free_tier_requests, limit: 0, model: gemini-3.8-flash"
)
RATE_LIMIT = "rate-limit: [API Error: You exceeded your current quota."


def _refused(status: int, message: str) -> list[list[dict[str, Any]]]:
    return [[{"text": "x", "fail": {"status": status, "times": 99, "message": message}}]]


def _forget_runs(project: Project) -> None:
    for log in (project.path / ".ooda/results").glob("*.jsonl"):
        log.unlink()


def test_a_429_in_the_clis_words_is_a_failure_unless_witnessed_or_taken_as_an_error(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin(_refused(429, QUOTA))
    server.use(monkeypatch, project.path / "home")
    # The CLI's words, read as a rate limit: they rest on the agent's word, so by the
    # default policy the run is a failure that says so ...
    path = project.scenario("geminied", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "failure"
    [iteration] = record["iterations"]
    assert str(iteration["infra_error"]).startswith(RATE_LIMIT), iteration["infra_error"]
    assert iteration["infra_evidence"] == "agent"
    assert [entry["served"] for entry in server.log()][-1] == "error:429"
    # ... an error when the API proxy saw the upstream call fail (recording) ...
    _forget_runs(project)
    standin(_refused(429, QUOTA)).use(monkeypatch, project.path / "home")
    result = _live(project, "--ooda-retries=0", "--ooda-record-mode=all", "--ooda-record-api")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record["iterations"]
    assert str(record["error_reason"]).startswith(RATE_LIMIT), record["error_reason"]
    assert record["iterations"][-1]["infra_evidence"] == "harness"
    # ... and when the scenario takes the agent's word.
    _forget_runs(project)
    path.write_text("retry: {count_agent_reported_errors: as_errors}\n" + path.read_text())
    standin(_refused(429, QUOTA)).use(monkeypatch, project.path / "home")
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error"
    assert str(record["error_reason"]).startswith(RATE_LIMIT), record["error_reason"]
    assert "You exceeded your current quota." in result.stdout.str()


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "API key not valid. Please pass a valid API key."),
        (403, "Method doesn't allow unregistered callers. Please use API Key."),
    ],
)
def test_a_refused_key_is_an_auth_error_with_the_clis_words_whatever_the_policy(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    message: str,
) -> None:
    server = standin(_refused(status, message))
    server.use(monkeypatch, project.path / "home")
    project.scenario("geminied", SCENARIO)
    # The default policy counts the agent's word as a failure, but not a login refused:
    # no prompt can make the CLI say that, and the run measured nothing.
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record["iterations"]
    reason = str(record["error_reason"])
    assert reason.startswith(f"auth: API Error {status}: {message}"), reason
    assert record["iterations"][-1]["infra_evidence"] == "agent"
    assert [entry["served"] for entry in server.log()][-1] == f"error:{status}"
    # The CLI's words are in the terminal summary, without -s.
    assert message in result.stdout.str()


def test_a_missing_key_is_an_auth_error_in_the_clis_words_before_any_request(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    monkeypatch.delenv("GEMINI_API_KEY")
    project.scenario("geminied", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record
    reason = str(record["error_reason"])
    assert reason.startswith("auth: When using Gemini API, you must specify the GEMINI_API_KEY")
    assert "you must specify the GEMINI_API_KEY" in result.stdout.str()
    assert server.log() == []


def test_a_bwrap_sandbox_passing_no_key_is_an_auth_error_before_any_run(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox_images import require_bwrap

    require_bwrap()
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    config = project.path / "ooda-config.yml"
    # The base URL and the settings go in; the key (set outside) does not.
    config.write_text(
        "loop:\n  sandbox: {kind: bwrap, env: [GOOGLE_GEMINI_BASE_URL],"
        " home_files: [~/.gemini/settings.json]}\n" + config.read_text()
    )
    project.scenario("geminied", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record
    reason = str(record["error_reason"])
    assert reason.startswith("auth: Gemini CLI has no credentials: set GEMINI_API_KEY"), reason
    assert "the bwrap sandbox passes the agent none of them" in reason
    assert record["iterations"] == []
    assert server.log() == []  # the CLI never started
    assert "Gemini CLI has no credentials" in result.stdout.str()


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_geminis_model_calls_are_recorded_and_replayed_offline_with_the_real_cli(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    from tests.unit.apireplay.helpers import Gone

    server = standin([STEPS])
    # The stand-in is the proxy's upstream (GOOGLE_GEMINI_BASE_URL); the CLI is pointed
    # at the proxy (inside bwrap too: the sandbox says how it reaches it).
    server.use(monkeypatch, project.path / "home")
    if sandbox == "bwrap":
        _in_bwrap(project)
    path = project.scenario("geminied", SCENARIO)
    # Recorded where it is already tomorrow, replayed where it is still yesterday: the
    # CLI tells its model a different day.
    monkeypatch.setenv("TZ", "Etc/GMT-14")
    recorded = _live(project, "--ooda-record-mode=once", "--ooda-record-api")
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = path.with_name("geminied.cassette.jsonl")
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    endpoints = [line["endpoint"] for line in lines if "exchange" in line]
    assert endpoints[0].startswith("gemini POST /v1beta/models/")
    assert endpoints[0].endswith(":generateContent")
    assert len(endpoints) == 4
    assert all(point.endswith(":streamGenerateContent?alt=sse") for point in endpoints[1:])
    assert "standin-gemini-key" not in cassette.read_text()
    served = len(server.log())
    server.stop()
    # Offline: the stand-in stopped, its address a port that answers nothing, no key.
    gone = Gone()
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gone.url)
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("TZ", "Etc/GMT+12")
    try:
        for _ in range(2):
            replayed = project.run(
                "-k", "geminied", f"--ooda-ai-cmd={GEMINI}", "--ooda-replay=agent"
            )  # fmt: skip
            replayed.assert_outcomes(passed=1, deselected=7)
    finally:
        gone.close()
    assert served == 4
    assert gone.connections == 0

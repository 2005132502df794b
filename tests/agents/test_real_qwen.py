"""The real Qwen Code CLI (``@qwen-code/qwen-code``, pinned in .ci/run) as a live run's
agent, driven offline by a stand-in of the OpenAI chat-completions API on 127.0.0.1
(``chat_standin.py``): ``qwen --output-format stream-json --yolo`` writes a file and runs
a command in the workspace for real, under no sandbox and inside bwrap; its tool calls,
tokens and fingerprint reach the record; the API's 401 and a missing key are ``auth``
errors read from the CLI's own words, never the prompt's failure, and a bwrap sandbox
passing no key is one before any run; its model calls are recorded into a cassette and
served back offline through the real CLI, with no sandbox and in bwrap.

The CLI reads its base URL from ``OPENAI_BASE_URL``, its key from ``OPENAI_API_KEY`` and
its model from ``OPENAI_MODEL``, once ``~/.qwen/settings.json`` selects that way of
logging in."""

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

VERSION = "0.24.4"
QWEN = "qwen --output-format stream-json --yolo"
MODEL = "qwen3-coder-standin"
#: The CLI's settings: log in with an OpenAI-compatible key; no memory-extraction side
#: calls after each run (they would be model calls outside the scenario).
SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "memory": {"enableManagedAutoMemory": False},
}


def require_qwen() -> None:
    require_cli("qwen", "Qwen Code", "@qwen-code/qwen-code", VERSION)


class Standin(StandinProcess):
    """A stand-in of the OpenAI chat-completions API (``chat_standin.py``)."""

    script = Path(__file__).with_name("chat_standin.py")
    title = "the chat-completions stand-in"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    def use(self, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
        """A ``HOME`` whose Qwen Code settings log in with the key, and the stand-in as
        the API."""
        (home / ".qwen").mkdir(parents=True, exist_ok=True)
        (home / ".qwen" / "settings.json").write_text(json.dumps(SETTINGS))
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("QWEN_HOME", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-standin-qwen")
        monkeypatch.setenv("OPENAI_BASE_URL", self.url)
        monkeypatch.setenv("OPENAI_MODEL", MODEL)
        monkeypatch.setenv("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")


@pytest.fixture
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Standin]]:
    require_qwen()
    yield from started(Standin, tmp_path_factory)


def _live(project: Project, *args: str) -> pytest.RunResult:
    return project.run("-m", "live", "-k", "qwened", f"--ooda-ai-cmd={QWEN}", *args)


def _check_the_run(project: Project, server: Standin) -> dict[str, Any]:
    [record] = records(project)
    assert record["outcome"] == "success", record.get("error_reason")
    [iteration] = record["iterations"]
    calls = iteration["tool_calls"]
    assert [call["name"] for call in calls] == ["write_file", "run_shell_command"]
    assert calls[0]["summary"].endswith("/hello.py")
    assert calls[1]["summary"] == "python3 hello.py > out.txt"
    assert all(call["ok"] for call in calls)
    # The CLI sums the three answers' usage; it reports no cost.
    assert record["usage"]["input_tokens"] == 1000 + 1000 + 3000
    assert record["usage"]["output_tokens"] == 50 + 50 + 150
    assert record["usage"]["cost"] is None
    log = server.log()
    assert [entry["served"] for entry in log] == ["tool:write", "tool:shell", "text"]
    assert {entry["key"] for entry in log} == {"sk-standin-qwen"}
    # Its fingerprint: the agent, its version as the CLI says it, the model it was served.
    fingerprint = record["fingerprint"]
    assert fingerprint["agent"] == "qwen"
    assert fingerprint["version"] == VERSION
    assert fingerprint["model"] == MODEL
    assert len(fingerprint["settings"]) == 64
    return record


def test_qwen_writes_and_runs_in_the_workspace_with_no_sandbox(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    project.scenario("qwened", SCENARIO)
    result = _live(project)
    result.assert_outcomes(passed=1, deselected=7)
    _check_the_run(project, server)
    # Read as qwen-stream-json from its own flags: no ai_output was set.
    assert "tokens=5000in/250out" in result.stdout.str()


def _in_bwrap(project: Project, env: str = "OPENAI_API_KEY, ") -> None:
    """The project's runs in bwrap, given ``env`` (the key unless told otherwise), the
    base URL, the model and the settings file."""
    from sandbox_images import require_bwrap

    require_bwrap()
    config = project.path / "ooda-config.yml"
    config.write_text(
        f"loop:\n  sandbox: {{kind: bwrap, env: [{env}OPENAI_BASE_URL, OPENAI_MODEL,"
        " QWEN_CODE_SUPPRESS_YOLO_WARNING], home_files: [~/.qwen/settings.json]}\n"
        + config.read_text()
    )


def test_qwen_in_bwrap_with_its_settings_and_key_passed_in(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    _in_bwrap(project)
    project.scenario("qwened", SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    record = _check_the_run(project, server)
    assert record["sandbox"]["kind"] == "bwrap"
    # What the agent was given of the environment: the allow-list, its key among it.
    assert "OPENAI_API_KEY" in record["fingerprint"]["env"]
    assert "*" not in record["fingerprint"]["env"]


def test_qwen_in_docker_from_the_image_ooda_sandbox_image_builds(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([SHELL_STEPS])
    server.use(monkeypatch, project.path / "home")
    env = "OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, QWEN_CODE_SUPPRESS_YOLO_WARNING"
    image = in_docker(project, "qwen", env, "~/.qwen/settings.json")
    project.scenario("qwened", SHELL_SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    record = check_the_docker_run(project, image)
    assert record["fingerprint"]["model"] == MODEL
    assert [entry["served"] for entry in server.log()] == ["tool:write", "tool:shell", "text"]


#: A word only the user's own memory file holds.
PLANTED = "zanzibar-planted-memory"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_the_users_own_qwen_md_and_skills_stay_out_of_a_bwrap_run(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    server = standin([STEPS], watch=PLANTED)
    home = project.path / "home"
    server.use(monkeypatch, home)
    (home / ".qwen" / "QWEN.md").write_text(f"Always mention {PLANTED}.\n")
    skill = home / ".qwen" / "skills" / "planted"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: planted\ndescription: planted\n---\nPlanted.\n")
    if sandbox == "bwrap":
        _in_bwrap(project)
    project.scenario("qwened", SCENARIO)
    _live(project).assert_outcomes(passed=1, deselected=7)
    [record] = records(project)
    loaded = record["fingerprint"]["loaded"]
    turns = [entry["watched"] for entry in server.log()]
    assert len(turns) == 3, server.log()
    if sandbox == "none":
        # The control: with the real HOME the CLI tells its model the planted memory.
        assert all(turns), server.log()
        assert [item["name"] for item in loaded["instructions"]] == ["QWEN.md"]
        assert [item["name"] for item in loaded["skills"]] == ["planted"]
    else:
        # bwrap: a fresh HOME holding only the settings the config passes in.
        assert not any(turns), server.log()
        assert loaded == {}


def test_a_key_the_api_refuses_is_an_auth_error_in_qwens_words(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = {"status": 401, "times": 99, "message": "Incorrect API key provided"}
    server = standin([[{"text": "x", "fail": refused}]])
    server.use(monkeypatch, project.path / "home")
    project.scenario("qwened", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    # An agent with no credentials measured nothing: an error, whatever the policy.
    assert record["outcome"] == "error", record
    assert str(record["error_reason"]).startswith("auth: [API Error: 401 Incorrect API key")
    assert "Incorrect API key provided" in result.stdout.str()
    assert {entry["served"] for entry in server.log()} == {"error:401"}


def test_a_missing_key_is_an_auth_error_before_any_request(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    monkeypatch.delenv("OPENAI_API_KEY")
    project.scenario("qwened", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record
    assert str(record["error_reason"]).startswith("auth: "), record["error_reason"]
    assert "OPENAI_API_KEY" in result.stdout.str()
    assert server.log() == []


def test_a_bwrap_sandbox_passing_no_key_is_an_auth_error_before_any_run(
    project: Project, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = standin([STEPS])
    server.use(monkeypatch, project.path / "home")
    _in_bwrap(project, env="")  # the key, set outside, does not go in
    project.scenario("qwened", SCENARIO)
    result = _live(project, "--ooda-retries=0")
    assert result.ret != 0
    [record] = records(project)
    assert record["outcome"] == "error", record
    reason = str(record["error_reason"])
    assert reason.startswith("auth: Qwen Code has no credentials: set OPENAI_API_KEY"), reason
    assert "the bwrap sandbox passes the agent none of them" in reason
    assert record["iterations"] == []
    assert server.log() == []  # the CLI never started


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_qwens_model_calls_are_recorded_and_replayed_offline_with_the_real_cli(
    project: Project,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    from tests.unit.apireplay.helpers import Gone

    server = standin([STEPS])
    # The proxy's upstream: the stand-in (OPENAI_BASE_URL); the CLI is pointed at the
    # proxy (inside bwrap too: the sandbox says how it reaches it).
    server.use(monkeypatch, project.path / "home")
    if sandbox == "bwrap":
        _in_bwrap(project)
    path = project.scenario("qwened", SCENARIO)
    recorded = _live(project, "--ooda-record-mode=once", "--ooda-record-api")
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = path.with_name("qwened.cassette.jsonl")
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    exchanges = [line for line in lines if "exchange" in line]
    assert [line["endpoint"] for line in exchanges] == ["openai POST /v1/chat/completions"] * 3
    assert "sk-standin-qwen" not in cassette.read_text()
    served = len(server.log())
    server.stop()
    # Offline: the stand-in stopped, its address a port that answers nothing, no key.
    gone = Gone()
    monkeypatch.setenv("OPENAI_BASE_URL", gone.url)
    monkeypatch.delenv("OPENAI_API_KEY")
    try:
        for _ in range(2):
            replayed = project.run("-k", "qwened", f"--ooda-ai-cmd={QWEN}", "--ooda-replay=agent")
            replayed.assert_outcomes(passed=1, deselected=7)
    finally:
        gone.close()
    assert served == 3
    assert gone.connections == 0

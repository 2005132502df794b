"""The real Claude Code CLI recorded and replayed through the API proxy from inside a
sandbox with no network: ``bwrap`` with ``network: none`` (the relay under bwrap's
seccomp filter) and a Docker container with ``network: none`` (the proxy listening in
its namespace). The recording's upstream is the offline agent mock; the replay's is a
port that counts connections and answers nothing: the same files, the same calls, and
the upstream never contacted."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import ANSWER_USAGE, MOCK, require_claude, start_agent_mock
from sandbox_images import claude_image, require_bwrap, require_docker

from pytest_ooda.apireplay import ApiProxy, Normaliser, read_cassette, write_cassette
from pytest_ooda.apireplay.access import reach, sandbox_for_api
from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.redact import Redactor
from pytest_ooda.sandbox import parse_spec, sandboxed
from pytest_ooda.workspace import fresh_repository
from tests.unit.apireplay.helpers import Gone

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from claude_mock import AgentMock
    from ooda_project import Project

    from pytest_ooda._types import ApiMode
    from pytest_ooda.apireplay import Cassette

CLAUDE = [
    "claude", "-p", "--no-session-persistence", "--permission-mode", "bypassPermissions",
    "--output-format", "stream-json", "--verbose",
]  # fmt: skip
ENV = [
    "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER",
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING", "CLAUDE_CODE_MAX_RETRIES", "IS_SANDBOX=1",
    "SHELL=/usr/bin/bash",
]  # fmt: skip
STEPS: list[dict[str, Any]] = [
    {"text": "Writing.", "tool": "Write",
     "input": {"file_path": "hello.sh", "content": "echo hello from inside\n"}},
    {"tool": "Bash", "input": {"command": "sh hello.sh > ran.txt", "description": "run"}},
    {"tool": "Edit", "read_first": True,
     "input": {"file_path": "hello.sh", "old_string": "inside", "new_string": "the box"}},
    {"text": "Done.\n<promise>SUCCESS</promise>"},
]  # fmt: skip


def _run(
    tmp_path: Path,
    name: str,
    spec_value: dict[str, Any],
    mode: ApiMode,
    upstream: str,
    cassette: Cassette | None = None,
) -> tuple[dict[str, bytes], list[Any], ApiProxy]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_MAX_RETRIES="1",
    )  # fmt: skip
    if mode != "replay":
        env["ANTHROPIC_API_KEY"] = "test"
    spec = sandbox_for_api(parse_spec(spec_value), mode, env)
    workspace = fresh_repository(None, tmp_path / name / "workspace")
    proxy = ApiProxy(mode, cassette=cassette, redact=Redactor(), upstreams={"anthropic": upstream})
    with proxy.start(), sandboxed(spec, workspace) as run:
        assert run is not None
        proxy.normaliser = Normaliser.for_run(workspace=workspace, home=run.home)
        access = reach(proxy, CLAUDE, mode=mode, spec=spec, run=run, env=env)
        backend = CommandBackend(
            access.argv, env={**env, **access.env}, sandbox=run, pass_fds=access.pass_fds,
            ai_output="claude-stream-json",
        )  # fmt: skip
        done = backend.run(
            "Write hello.sh, run it, and change it.\n",
            iteration=1, workdir=workspace, timeout=180, max_output=1 << 20, stream=None,
        )  # fmt: skip
    assert proxy.divergences == [], proxy.divergences[0].describe()
    assert done.exit_code == 0, done.output
    calls = [
        (call.name, json.loads(json.dumps(call.input).replace(str(workspace) + "/", "")))
        for call in done.tool_calls
    ]
    files = {
        p.relative_to(workspace).as_posix(): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }
    return files, calls, proxy


def _record_then_replay(tmp_path: Path, spec_value: dict[str, Any]) -> None:
    require_claude()
    if not MOCK.is_file():
        pytest.fail(f"missing {MOCK}: the tests expect ../shared beside the checkout")
    (tmp_path / "mock").mkdir()
    mock = start_agent_mock(tmp_path / "mock", [STEPS], usage=ANSWER_USAGE)
    try:
        files, calls, recorder = _run(tmp_path, "recorded", spec_value, "record", mock.url)
        path = tmp_path / "s.cassette.jsonl"
        write_cassette(recorder.recording(), path)
    finally:
        mock.process.terminate()
        mock.process.wait(timeout=10)
    assert files == {"hello.sh": b"echo hello from the box\n", "ran.txt": b"hello from inside\n"}
    assert [name for name, _ in calls] == ["Write", "Bash", "Read", "Edit"]
    gone = Gone()
    try:
        again, again_calls, replayer = _run(
            tmp_path, "replayed", spec_value, "replay", gone.url, read_cassette(path)
        )
    finally:
        gone.close()
    assert again == files
    assert again_calls == calls
    assert replayer.forwarded == 0
    assert gone.connections == 0


def test_claude_in_bwrap_without_a_network_records_and_replays(tmp_path: Path) -> None:
    require_bwrap()
    _record_then_replay(tmp_path, {"kind": "bwrap", "network": "none", "env": ENV})


@pytest.mark.skipif(os.geteuid() != 0, reason="the proxy enters the container's network as root")
def test_claude_in_docker_without_a_network_records_and_replays(tmp_path: Path) -> None:
    require_docker()
    image = claude_image()
    _record_then_replay(tmp_path, {"kind": "docker", "image": image, "network": "none", "env": ENV})


# ------------------------------------------------------------------ through pytest

PLUGIN_CLAUDE = " ".join(CLAUDE)
SCENARIO = (
    "procedure: greet\nmax_iterations: 1\n"
    "expect:\n  status: success\n"
    "  files: {ran.txt: {contains: hello from inside}, hello.sh: {contains: the box}}\n"
    "  tools: {called: [Write, Bash, Edit]}\n"
    "  commands:\n    - {run: sh hello.sh, output_contains: hello from the box}\n"
    "iterations: []\n"
)


def _pytest_record_then_replay(
    project: Project,
    claude_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    mock = claude_mock([STEPS])
    mock.use(monkeypatch)
    config = project.path / "ooda-config.yml"
    config.write_text(f"loop:\n  sandbox: {sandbox}\n" + config.read_text())
    path = project.scenario("boxed", SCENARIO)
    recorded = project.run(
        "-m", "live", f"--ooda-ai-cmd={PLUGIN_CLAUDE}", "--ooda-record-mode=once",
        "--ooda-record-api",
    )  # fmt: skip
    recorded.assert_outcomes(passed=1, deselected=7)
    cassette = path.with_name("boxed.cassette.jsonl")
    assert cassette.is_file()
    assert len(mock.sessions()) == 1
    mock.process.terminate()
    mock.process.wait(timeout=10)
    # Offline: the mock stopped, its address a port that answers nothing, no key.
    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    try:
        for _ in range(2):
            replayed = project.run(
                "-k", "boxed", f"--ooda-ai-cmd={PLUGIN_CLAUDE}", "--ooda-replay=agent"
            )
            replayed.assert_outcomes(passed=1, deselected=7)
        # A fragment edited since: the agent asks something the cassette never heard.
        (project.path / "prompts/decide.md").write_text("Decide whom to greet last.\n")
        drifted = project.run(
            "-k", "boxed", f"--ooda-ai-cmd={PLUGIN_CLAUDE}", "--ooda-replay=agent",
            "--ooda-drift=ignore",
        )  # fmt: skip
        drifted.assert_outcomes(failed=1, deselected=7)
        drifted.stdout.fnmatch_lines(
            [
                "*agent replay of scenarios/greet/boxed.cassette.jsonl: replay divergence*",
                "*the prompt of iteration 1 changed (fragments: prompts/decide.md):",
                "*-Decide whom to greet first.",
                "*+Decide whom to greet last.",
            ]
        )
        (project.path / "prompts/decide.md").write_text("Decide whom to greet first.\n")
    finally:
        gone.close()
    assert gone.connections == 0
    # The loop replay of the same scenario still passes, without the agent.
    project.run("-k", "boxed", "--ooda-ai-cmd=/nonexistent").assert_outcomes(passed=1, deselected=7)


def test_pytest_records_claude_in_bwrap_and_replays_it_offline(
    project: Project, claude_mock: Callable[..., AgentMock], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    env = "[" + ", ".join(ENV) + "]"
    _pytest_record_then_replay(
        project, claude_mock, monkeypatch, f"{{kind: bwrap, network: none, env: {env}}}"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="the proxy enters the container's network as root")
def test_pytest_records_claude_in_docker_and_replays_it_offline(
    project: Project, claude_mock: Callable[..., AgentMock], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_docker()
    env = "[" + ", ".join(ENV) + "]"
    _pytest_record_then_replay(
        project,
        claude_mock,
        monkeypatch,
        f"{{kind: docker, image: '{claude_image()}', network: none, env: {env}}}",
    )

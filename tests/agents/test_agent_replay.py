"""The real Claude Code CLI (2.1.197) through the API proxy: a run recorded with the
offline agent mock as its upstream, then replayed with the mock stopped — the same files
byte for byte, the same tool calls, the same result, twenty times over; a 529 the CLI
retried; a secret in a request body; a changed prompt that diverges. The upstream in
replay is a port that counts connections and answers nothing: it is never contacted."""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from claude_mock import CLAUDE

from pytest_ooda.apireplay import ApiProxy, Normaliser, read_cassette, write_cassette
from pytest_ooda.redact import Redactor
from pytest_ooda.workspace import fresh_repository
from tests.unit.apireplay.helpers import Gone

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from claude_mock import AgentMock

    from pytest_ooda._types import ApiMode
    from pytest_ooda.apireplay import Cassette

PROMPT = "Write hello.py, run it, change its greeting, and say SUCCESS.\n"
#: Writes and edits files and runs commands: five answers, four tool calls.
STEPS: list[dict[str, Any]] = [
    {"text": "Writing hello.py.", "tool": "Write",
     "input": {"file_path": "hello.py", "content": "print('Hello, mock!')\n"}},
    {"tool": "Bash", "input": {"command": "python3 hello.py > out.txt", "description": "Run"}},
    {"tool": "Edit", "read_first": True,
     "input": {"file_path": "hello.py", "old_string": "mock", "new_string": "agent"}},
    {"tool": "Bash", "input": {"command": "python3 hello.py >> out.txt && cat out.txt",
                               "description": "Run again"}},
    {"text": "Done.\n<promise>SUCCESS</promise>"},
]  # fmt: skip


class Run:
    """One ``claude -p`` through a proxy in a fresh workspace."""

    def __init__(self, root: Path, name: str, *, source: Path | None = None) -> None:
        self.directory = root / name
        self.workspace = fresh_repository(source, self.directory / "workspace")
        self.home = self.directory / "home"
        (self.home / ".claude").mkdir(parents=True)

    def go(
        self,
        mode: ApiMode,
        mock: AgentMock,
        *,
        cassette: Cassette | None = None,
        upstream: str | None = None,
        prompt: str = PROMPT,
        side_calls: bool = False,
    ) -> tuple[subprocess.CompletedProcess[str], ApiProxy]:
        normaliser = Normaliser.for_run(workspace=self.workspace, home=self.home)
        proxy = ApiProxy(
            mode,
            cassette=cassette,
            normaliser=normaliser,
            redact=Redactor(),
            upstreams={"anthropic": upstream or mock.url},
        )
        env = {**os.environ, **mock.env(), "HOME": str(self.home)}
        env["CLAUDE_CONFIG_DIR"] = str(self.home / ".claude")
        if side_calls:
            # Without it Claude Code asks the model for a title first, beside the loop.
            del env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]
        for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
            env.pop(name, None)
        with proxy.start():
            env.update(proxy.env())
            done = subprocess.run(
                CLAUDE.split(), input=prompt, cwd=self.workspace, env=env,
                capture_output=True, text=True, timeout=180, check=False,
            )  # fmt: skip
        return done, proxy

    def files(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for path in sorted(self.workspace.rglob("*")):
            if ".git" not in path.relative_to(self.workspace).parts and path.is_file():
                out[path.relative_to(self.workspace).as_posix()] = path.read_bytes()
        return out


def _calls(stdout: str, workspace: Path) -> tuple[list[tuple[str, Any]], str | None]:
    """The tool calls (paths relative to the workspace) and the result text of a
    stream-json run."""
    calls: list[tuple[str, Any]] = []
    result = None
    for line in stdout.splitlines():
        event = json.loads(line)
        if event.get("type") == "assistant":
            for block in event["message"]["content"]:
                if block.get("type") == "tool_use":
                    shown = json.dumps(block["input"]).replace(str(workspace) + "/", "")
                    calls.append((block["name"], json.loads(shown)))
        elif event.get("type") == "result":
            result = event.get("result")
    return calls, result


@pytest.fixture
def gone() -> Any:
    port = Gone()
    yield port
    port.close()


def _record(
    tmp_path: Path,
    agent_mock: Callable[..., AgentMock],
    steps: list[dict[str, Any]],
    *,
    source: Path | None = None,
    side_calls: bool = False,
) -> tuple[Run, subprocess.CompletedProcess[str], Cassette, AgentMock]:
    mock = agent_mock([steps])
    run = Run(tmp_path, "recorded", source=source)
    done, proxy = run.go("record", mock, side_calls=side_calls)
    assert done.returncode == 0, done.stdout + done.stderr
    assert proxy.problems == []
    path = tmp_path / "scenario.cassette.jsonl"
    write_cassette(proxy.recording(), path)
    # Replays stop the mock: nothing may depend on it any more.
    mock.process.terminate()
    mock.process.wait(timeout=10)
    return run, done, read_cassette(path), mock


def test_a_recorded_run_replays_offline_the_same_files_calls_and_result_twenty_times(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], gone: Gone
) -> None:
    recorded, done, cassette, mock = _record(tmp_path, agent_mock, STEPS)
    files = recorded.files()
    assert files == {
        "hello.py": b"print('Hello, agent!')\n",
        "out.txt": b"Hello, mock!\nHello, agent!\n",
    }
    calls, result = _calls(done.stdout, recorded.workspace)
    assert [name for name, _ in calls] == ["Write", "Bash", "Read", "Edit", "Bash"]
    assert result == "Done.\n<promise>SUCCESS</promise>"
    assert len(cassette.exchanges) == 6

    outcomes = set()
    for number in range(20):
        replay = Run(tmp_path, f"replay-{number}")
        again, proxy = replay.go("replay", mock, cassette=cassette, upstream=gone.url)
        assert proxy.divergences == [], proxy.divergences[0].describe()
        assert again.returncode == 0, again.stdout + again.stderr
        assert replay.files() == files
        assert _calls(again.stdout, replay.workspace) == (calls, result)
        outcomes.add(json.dumps([sorted(replay.files()), _calls(again.stdout, replay.workspace)]))
        assert proxy.forwarded == 0
    assert len(outcomes) == 1
    assert gone.connections == 0


def test_a_529_the_cli_retried_is_kept_and_only_the_retry_replayed(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], gone: Gone
) -> None:
    steps = [*STEPS[:2], {**STEPS[2], "fail": {"status": 529, "times": 1}}, *STEPS[3:]]
    recorded, done, cassette, mock = _record(tmp_path, agent_mock, steps)
    statuses = [(e.status, e.replay) for e in cassette.exchanges]
    assert statuses.count((529, False)) == 1
    assert statuses.count((200, True)) == 6
    replay = Run(tmp_path, "replay")
    again, proxy = replay.go("replay", mock, cassette=cassette, upstream=gone.url)
    assert (again.returncode, proxy.divergences) == (0, [])
    assert replay.files() == recorded.files()
    assert _calls(again.stdout, replay.workspace) == _calls(done.stdout, recorded.workspace)
    assert gone.connections == 0


def test_a_secret_in_a_request_body_is_redacted_in_the_cassette_and_still_replays(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], gone: Gone
) -> None:
    # The workspace holds a token; the agent prints it, so the next request (the tool
    # result) carries it to the API.
    token = "ghp_Zq8Lm3Nx7Vb2Kc5Jd9Hf4Gt6Ry1Wp0Es3Ua"
    source = tmp_path / "source"
    source.mkdir()
    (source / "deploy.env").write_text(f"DEPLOY_TOKEN={token}\n")
    steps = [
        {"tool": "Bash", "input": {"command": "cat deploy.env", "description": "Show"}},
        {"text": "Done.\n<promise>SUCCESS</promise>"},
    ]
    recorded, done, cassette, mock = _record(tmp_path, agent_mock, steps, source=source)
    assert token in done.stdout  # the agent did see it
    text = (tmp_path / "scenario.cassette.jsonl").read_text()
    assert token not in text
    assert "DEPLOY_TOKEN=<redacted>" in text
    assert cassette.redacted_parts
    replay = Run(tmp_path, "replay", source=source)
    again, proxy = replay.go("replay", mock, cassette=cassette, upstream=gone.url)
    assert (again.returncode, proxy.divergences) == (0, [])
    assert replay.files() == recorded.files()
    assert _calls(again.stdout, replay.workspace) == _calls(done.stdout, recorded.workspace)


def test_a_changed_prompt_diverges_and_the_diff_shows_the_changed_lines(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], gone: Gone
) -> None:
    _, _, cassette, mock = _record(tmp_path, agent_mock, STEPS)
    replay = Run(tmp_path, "replay")
    changed = PROMPT.replace("change its greeting", "change its farewell")
    again, proxy = replay.go("replay", mock, cassette=cassette, upstream=gone.url, prompt=changed)
    assert again.returncode == 1
    assert "replay divergence" in again.stdout
    [divergence] = proxy.divergences
    assert divergence.nearest is not None
    assert divergence.nearest.number == 1
    text = divergence.describe()
    assert f"-    {PROMPT.strip()}" in text
    assert f"+    {changed.strip()}" in text
    assert replay.files() == {}
    assert gone.connections == 0


def test_the_title_side_call_is_recorded_and_replayed_beside_the_loop(
    tmp_path: Path, agent_mock: Callable[..., AgentMock], gone: Gone
) -> None:
    recorded, done, cassette, mock = _record(tmp_path, agent_mock, STEPS, side_calls=True)
    # One request more than the loop's six: the title, a conversation of its own.
    assert len(cassette.exchanges) == 7
    [title] = [e for e in cassette.exchanges if len(e.request["messages"]) == 1]
    system = json.dumps(cassette.parts[title.request["system"]])
    assert "title" in system
    replay = Run(tmp_path, "replay")
    again, proxy = replay.go("replay", mock, cassette=cassette, upstream=gone.url, side_calls=True)
    assert (again.returncode, proxy.divergences) == (0, [])
    assert replay.files() == recorded.files()
    assert _calls(again.stdout, replay.workspace) == _calls(done.stdout, recorded.workspace)
    assert gone.connections == 0

"""The test side of this folder's stand-ins of model APIs, shared by the real-CLI tests
of Codex, Gemini CLI and Qwen Code: a stand-in started in a process of its own (its
script written, its port waited for, its request log read, stopped at the test's end);
the check that the CLI is installed; the project and its results log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from ooda_project import greet_project

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from ooda_project import Project

__all__ = [
    "GEMINI_FAMILY_SCENARIO",
    "GEMINI_FAMILY_SHELL_SCENARIO",
    "GEMINI_FAMILY_SHELL_STEPS",
    "GEMINI_FAMILY_STEPS",
    "Standin",
    "check_the_docker_run",
    "in_docker",
    "project",
    "records",
    "require_cli",
    "started",
]

#: The task Gemini CLI and Qwen Code (its fork: the same tools, the same stand-in step
#: shapes) are scripted through: write hello.py and run it — three answers, two tool
#: calls, known token counts — and the scenario that checks it was done.
GEMINI_FAMILY_STEPS: list[dict[str, Any]] = [
    {"write": {"file_path": "hello.py", "content": "print(6 * 7)\n"}},
    {"shell": "python3 hello.py > out.txt"},
    {"text": "Wrote and ran hello.py.\n<promise>SUCCESS</promise>",
     "usage": {"prompt": 3000, "output": 150}},
]  # fmt: skip
GEMINI_FAMILY_SCENARIO = (
    "procedure: greet\nmax_iterations: 1\nexpect:\n  status: success\n"
    "  files: {out.txt: {contains: '42'}}\n"
    "  tools: {called: [write_file, run_shell_command], bash_matches: 'python3 hello.py',"
    " max_calls: 2}\n"
    "iterations: []\n"
)
#: The same task in an image with no Python (``ooda sandbox image``: node, the agent's
#: package, bash and busybox): the shell does the sum.
GEMINI_FAMILY_SHELL_STEPS: list[dict[str, Any]] = [
    {"write": {"file_path": "hello.sh", "content": "echo $((6 * 7))\n"}},
    {"shell": "sh hello.sh > out.txt"},
    {"text": "Wrote and ran hello.sh.\n<promise>SUCCESS</promise>"},
]
GEMINI_FAMILY_SHELL_SCENARIO = GEMINI_FAMILY_SCENARIO.replace("python3 hello.py", "sh hello.sh")


def require_cli(program: str, title: str, package: str, version: str) -> None:
    """Fail (under CI) or skip when ``program`` is not on PATH."""
    if shutil.which(program) is None:
        message = f"{title} is not installed: npm install -g {package}@{version}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


class Standin(ABC):
    """One stand-in serving ``sessions`` (``watch``: a word whose presence in each
    request it logs), on a port of its own. A subclass names its script and says how
    the CLI is pointed at it (``use``)."""

    #: The stand-in's script, and what a failure to start calls it.
    script: ClassVar[Path]
    title: ClassVar[str]

    def __init__(
        self, directory: Path, sessions: list[list[dict[str, Any]]], watch: str | None = None
    ) -> None:
        script = directory / "script.json"
        script.write_text(json.dumps({"sessions": sessions, "watch": watch}))
        port_file = directory / "port"
        self.process = subprocess.Popen(
            [sys.executable, str(self.script), str(script), str(port_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{self.title} did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        self.base = f"http://127.0.0.1:{self.port}"

    def log(self) -> list[dict[str, Any]]:
        """One entry per request, as the stand-in logged it."""
        import urllib.request

        with urllib.request.urlopen(f"{self.base}/_standin/log") as answer:
            return [json.loads(line) for line in answer.read().decode().splitlines()]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    @abstractmethod
    def use(self, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
        """Point the CLI at this stand-in: its settings under ``home``, its variables."""


def started(
    kind: type[Standin], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Standin]]:
    """The body of a ``standin`` fixture: ``start(sessions, watch=None)`` starts one of
    ``kind``; every one started is stopped when the test ends."""
    servers: list[Standin] = []

    def start(sessions: list[list[dict[str, Any]]], watch: str | None = None) -> Standin:
        server = kind(tmp_path_factory.mktemp("standin"), sessions, watch)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    return greet_project(pytester, monkeypatch)


def in_docker(project: Project, agent: str, env: str, home_files: str) -> str:
    """The project's runs in the docker sandbox, from the image ``ooda sandbox image``
    builds of ``agent`` (no registry, no build), with the host's network (the stand-in
    is on 127.0.0.1), ``env`` and ``home_files`` passed in; the image's tag."""
    from sandbox_images import node_agent_image, require_docker

    require_docker()
    image = node_agent_image(agent)
    config = project.path / "ooda-config.yml"
    config.write_text(
        f"loop:\n  sandbox: {{kind: docker, image: '{image}', network: host, env: [{env}],"
        f" home_files: [{home_files}]}}\n" + config.read_text()
    )
    return image


def check_the_docker_run(project: Project, image: str) -> dict[str, Any]:
    """The one record of a run of the shell task in ``image``: done, both tools called
    and succeeded, in the docker sandbox."""
    [record] = records(project)
    assert record["outcome"] == "success", record.get("error_reason")
    assert record["sandbox"]["kind"] == "docker"
    assert record["sandbox"]["image"] == image
    [iteration] = record["iterations"]
    calls = iteration["tool_calls"]
    assert [call["name"] for call in calls] == ["write_file", "run_shell_command"]
    assert calls[1]["summary"] == "sh hello.sh > out.txt"
    assert all(call["ok"] for call in calls)
    return record


def records(project: Project) -> list[dict[str, Any]]:
    """The run records of the project's one results log."""
    [results] = (project.path / ".ooda/results").glob("*.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]

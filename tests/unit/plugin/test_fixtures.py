"""The fixture objects: workspaces, the HTTP stub (without a pytest session)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
import requests

from pytest_ooda.errors import BackendError
from pytest_ooda.plugin.fixtures import HttpAIStub
from pytest_ooda.workspace import copy_workspace, git_init

if TYPE_CHECKING:
    from pathlib import Path


def test_copy_workspace_and_git_init(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "sub").mkdir(parents=True)
    (source / "sub/a.txt").write_text("a")
    target = copy_workspace(source, tmp_path / "dst")
    assert (target / "sub/a.txt").read_text() == "a"
    git_init(target)
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=target, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # everything committed
    head = (target / ".git/HEAD").read_text()
    git_init(target)  # already a repository: left alone
    assert (target / ".git/HEAD").read_text() == head


def test_copy_workspace_reports_a_missing_source(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="workspace directory not found"):
        copy_workspace(tmp_path / "nope", tmp_path / "dst")
    assert copy_workspace(None, tmp_path / "empty").is_dir()


def test_http_stub_openai_replies_and_running_dry() -> None:
    with HttpAIStub() as stub:
        stub.reply("hi", provider="openai", input_tokens=3, output_tokens=4)
        url = stub.url_for("openai")
        first = requests.post(url, json={"messages": [{"role": "user", "content": "P"}]}, timeout=5)
        assert first.json()["choices"][0]["message"]["content"] == "hi"
        assert first.json()["usage"] == {"prompt_tokens": 3, "completion_tokens": 4}
        second = requests.post(url, json={"messages": []}, timeout=5)
        assert second.status_code == 500
        assert "no scripted reply left" in second.text
        assert stub.prompts[0] == "P"
        assert len(stub.requests) == 2


def test_http_stub_custom_base_url_and_failures() -> None:
    with HttpAIStub() as stub:
        stub.fail(429, "slow down", base_url="http://localhost:9999")
        response = requests.post(
            "http://localhost:9999/v1/messages", json={"messages": []}, timeout=5
        )
        assert (response.status_code, response.text) == (429, "slow down")
    with pytest.raises(BackendError, match="unknown provider"):
        HttpAIStub().url_for("nope")

"""What of a hidden home an agent's executable needs shown in bwrap (sandbox/executable.py):
links followed and recreated, a virtual environment, a native installer's versions
entry, an npm package, a ``#!`` interpreter through ``env``; and the refusals naming the
path. The last tests start real bubblewrap with what was found shown."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from sandbox_images import require_bwrap

from pytest_ooda.sandbox import parse_spec
from pytest_ooda.sandbox.bwrap import BwrapSandbox
from pytest_ooda.sandbox.executable import NotVisible, agent_needs


def _executable(path: Path, text: str = "#!/bin/sh\necho agent-ran\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _needs(command: str, home: Path, search_path: str) -> object:
    def hidden(path: str) -> bool:
        return path == str(home) or path.startswith(f"{home}/")

    return agent_needs(command, search_path=search_path, hidden=hidden, roots=(str(home),))


def test_a_native_install_shows_its_link_and_its_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    version = _executable(home / ".local/share/claude/versions/2.1.197")
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/claude").symlink_to(version)
    (home / ".ssh").mkdir()
    needs = _needs("claude", home, f"{home}/.local/bin:/usr/bin")
    assert needs.binds == [str(version)]  # type: ignore[attr-defined]
    assert needs.links == [(f"{home}/.local/bin/claude", str(version))]  # type: ignore[attr-defined]
    # The command as PATH finds it, and its #! interpreter.
    assert needs.executables == [f"{home}/.local/bin/claude", "/bin/sh"]  # type: ignore[attr-defined]


def test_a_venv_script_shows_the_venv_and_its_interpreter(tmp_path: Path) -> None:
    home = tmp_path / "home"
    venv = home / "venvs" / "agent"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    (venv / "bin" / "python").symlink_to(sys.executable)
    _executable(venv / "bin" / "agent", f"#!{venv}/bin/python\nprint('agent-ran')\n")
    needs = _needs(f"{venv}/bin/agent", home, "/usr/bin")
    # The whole environment (its packages), shown once; the interpreter it links to is
    # outside the home.
    assert needs.binds == [str(venv)]  # type: ignore[attr-defined]
    assert needs.links == []  # type: ignore[attr-defined]
    assert needs.executables == [f"{venv}/bin/agent", f"{venv}/bin/python"]  # type: ignore[attr-defined]


def test_an_npm_package_and_its_env_interpreter(tmp_path: Path) -> None:
    home = tmp_path / "home"
    package = home / ".npm-global/lib/node_modules/@acme/agent"
    script = _executable(package / "bin/cli.js", "#!/usr/bin/env node\nconsole.log(1)\n")
    (package / "package.json").write_text("{}")
    (home / ".npm-global/bin").mkdir(parents=True)
    (home / ".npm-global/bin/acme").symlink_to("../lib/node_modules/@acme/agent/bin/cli.js")
    node = _executable(home / ".nvm/versions/node/v20.1.0/bin/node")
    search = f"{home}/.npm-global/bin:{node.parent}:/usr/bin"
    needs = _needs("acme", home, search)
    assert needs.binds == [str(package), f"{home}/.nvm/versions/node"]  # type: ignore[attr-defined]
    assert needs.links == [  # type: ignore[attr-defined]
        (f"{home}/.npm-global/bin/acme", "../lib/node_modules/@acme/agent/bin/cli.js")
    ]
    assert script.exists()


def test_what_cannot_be_shown_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(NotVisible, match=r"no-such-agent is not on PATH \(/usr/bin\)"):
        _needs("no-such-agent", home, "/usr/bin")
    _executable(home / "bin/agent", "#!/usr/bin/env no-such-interpreter\n")
    with pytest.raises(NotVisible, match="its interpreter no-such-interpreter is not on PATH"):
        _needs("agent", home, f"{home}/bin")
    # A virtual environment that is the whole home would show all of it.
    (home / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _executable(home / "tool")
    with pytest.raises(NotVisible, match="would show the whole of"):
        _needs(f"{home}/tool", home, "/usr/bin")
    (home / "loop").symlink_to(home / "loop")
    with pytest.raises(NotVisible):
        _needs(f"{home}/loop", home, "/usr/bin")


def test_an_agent_in_a_hidden_home_runs_inside_bwrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    home = tmp_path / "home"
    version = _executable(home / ".local/share/agent/versions/1.0", "#!/bin/sh\necho agent-ran\n")
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/agent").symlink_to(version)
    (home / "secret.txt").write_text("HIDDEN\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home}/.local/bin{os.pathsep}{os.environ['PATH']}")
    sandbox = BwrapSandbox(parse_spec({"kind": "bwrap"}))
    sandbox.prepare()
    assert sandbox.agent_problem(["agent"], None) is None
    assert "not on PATH" in (sandbox.agent_problem(["missing-agent"], None) or "")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    from pytest_ooda.backends import CommandBackend

    with sandbox.start(workspace, tmp_path / "scratch") as run:
        done = CommandBackend(
            ["/bin/sh", "-c", f"agent; cat {home}/secret.txt || echo secret-hidden"],
            sandbox=run,
        ).run("", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None)
        # The agent itself, by its name on PATH: its link and version shown, run.
        direct = CommandBackend(["agent"], sandbox=run).run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
    assert direct.output == "agent-ran\n"
    assert "secret-hidden" in done.output
    assert "HIDDEN" not in done.output

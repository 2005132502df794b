"""The README's quick start, run as written: its config, its template, its commands."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.cli import main as ooda_main

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

README = Path(__file__).resolve().parents[3] / "README.md"


def quickstart_config() -> str:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n((?:   .*\n|\n)*?)   ```", text)
    assert block is not None, "the README's quick start has no YAML block"
    return "\n".join(line[3:] for line in block.group(1).splitlines()) + "\n"


def quickstart_template() -> str:
    found = re.search(r"`prompts/look\.md` holding the template `([^`]+)`", README.read_text())
    assert found is not None, "the README no longer says what prompts/look.md holds"
    return found.group(1) + "\n"


def test_readme_quickstart_runs_as_written(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write("ooda-config.yml", quickstart_config())
    project.write("prompts/look.md", quickstart_template())
    (project.path / "prompts" / "observe.md").unlink()
    (project.path / "prompts" / "decide.md").unlink()
    monkeypatch.chdir(project.path)

    assert ooda_main(["lint"]) == 0
    assert "no findings" in capsys.readouterr().out
    assert ooda_main(["show", "greet", "--phase", "observe"]) == 0
    assert "Look around the kitchen." in capsys.readouterr().out

    first = project.run()
    assert first.ret == 1  # no snapshots yet
    assert "no snapshot" in first.stdout.str()
    project.run("--snapshot-update").assert_outcomes(passed=12)
    assert (project.path / "__snapshots__/ooda-config/greet/assembled.md").is_file()
    project.run().assert_outcomes(passed=12)

    project.scenario(
        "happy",
        "procedure: greet\nexpect: {status: success, files: {GREETING.md: exists}}\n"
        "iterations: []\n",
    )
    agent = project.write(
        "agent.py",
        "import sys\nsys.stdin.read()\nopen('GREETING.md', 'w').write('hi')\n"
        "print('<promise>SUCCESS</promise>')\n",
    )
    live = project.run(
        "-m",
        "live",
        "-k",
        "happy",
        "--ooda-record-mode=once",
        f"--ooda-ai-cmd={sys.executable} {agent}",
    )
    live.assert_outcomes(passed=1, deselected=13)
    replay = project.run("-k", "scenario and happy")
    replay.assert_outcomes(passed=1, deselected=13)


# --------------------------------------------------------------------------- fresh venv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from claude_mock import require_claude, start_agent_mock  # noqa: E402
from wheel_env import clean_env  # noqa: E402


def _writes(name: str) -> list[dict[str, object]]:
    """A Claude Code invocation that writes ``name``, then succeeds."""
    return [
        {"text": "Writing.", "tool": "Write",
         "input": {"file_path": name, "content": "Hello, kitchen!\n"}},
        {"text": f"Wrote {name}.\n<promise>SUCCESS</promise>"},
    ]  # fmt: skip


def _readme_command(pattern: str) -> list[str]:
    """A command quoted in the README, found by ``pattern``, split like a shell would."""
    found = re.search(pattern, README.read_text(encoding="utf-8"))
    assert found is not None, f"the README no longer has {pattern!r}"
    return shlex.split(" ".join(found.group(1).split()))


def _scenario_block() -> str:
    blocks = re.findall(r"```yaml\n((?:   .*\n|\n)*?)   ```", README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2, "the README's quick start has no scenario block"
    return "\n".join(line[3:] for line in blocks[1].splitlines()) + "\n"


def test_the_quick_start_runs_as_written_in_a_fresh_venv(
    wheel: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    require_claude()
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    # Every Claude Code invocation: one mock for `ooda init`'s project (HELLO.md), one for
    # the README's steps (GREETING.md).
    init_mock = start_agent_mock(tmp_path_factory.mktemp("agent-mock"), [_writes("HELLO.md")])
    mock = start_agent_mock(tmp_path_factory.mktemp("agent-mock"), [_writes("GREETING.md")])
    try:
        env = {**clean_env(venv, tmp_path / "home"), **init_mock.env()}
        env["OODA_CONFIG_HOME"] = str(tmp_path / "no-global-config")

        def run(argv: list[str], cwd: Path = repo) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
            )

        # pip install 'pytest-ooda[xdist]', from the built wheel instead of the index (and
        # into the venv even where the machine has pytest-ooda installed already).
        pip = _readme_command(r"```bash\n(pip install '[^']+')")
        assert pip == ["pip", "install", "pytest-ooda[xdist]"]
        python = str(venv / "bin/python")
        local = ["--no-index", "--find-links", str(wheel.parent), "--force-reinstall", "--no-deps"]
        installed = run([python, "-m", *pip, *local])
        assert installed.returncode == 0, installed.stderr
        assert (venv / "bin/ooda").exists()
        extra = run([python, "-c", "import importlib.metadata as m, xdist; "
                     "print(m.requires('pytest-ooda'))"]).stdout  # fmt: skip
        assert "pytest-xdist>=3.6.1; extra == 'xdist'" in extra

        # ooda init, then the three commands it prints, as printed.
        started = tmp_path / "started"
        started.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=started, check=True)
        init = run(["ooda", "init"], cwd=started)
        assert init.returncode == 0, init.stderr
        nexts = init.stdout.split("next:")[1].split("\nin CI")[0]
        printed = [line.strip() for line in nexts.splitlines()]
        commands = [line for line in printed if line and not line.startswith("#")]
        assert len(commands) == 3
        for command in commands:
            done = run(shlex.split(command), cwd=started)
            assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
        assert "HELLO.md" in (started / "scenarios/hello/first-live.yml").read_text()

        # Steps 1 to 7 by hand.
        env.update(mock.env())
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / "ooda-config.yml").write_text(quickstart_config())
        (repo / "prompts").mkdir()
        (repo / "prompts/look.md").write_text(quickstart_template())
        assert "Look around the kitchen." in run(["ooda", "show", "greet"]).stdout
        assert run(["ooda", "lint"]).returncode == 0
        assert run(["pytest"]).returncode == 1  # no snapshots yet
        assert run(["pytest", "--snapshot-update"]).returncode == 0
        (repo / "scenarios/greet").mkdir(parents=True)
        (repo / "scenarios/greet/happy.yml").write_text(_scenario_block())
        record = run(_readme_command(r"`(pytest -m live -k happy --ooda-ai-cmd-alias=[^`]+)`"))
        assert record.returncode == 0, record.stdout
        assert "GREETING.md" in (repo / "scenarios/greet/happy.yml").read_text()
        assert run(["pytest"]).returncode == 0  # the replay passes
        measure = _readme_command(r"`(pytest -m live -k happy --ooda-repeat=[^`]+)`")
        base = run(measure)
        assert base.returncode == 0, base.stdout
        assert "20 passed" in base.stdout
        new = run([arg.replace("results/base", "results/new") for arg in measure])
        assert new.returncode == 0, new.stdout
        compare = run(_readme_command(r"`(ooda compare results/base results/new)`"))
        assert compare.returncode == 0, compare.stdout
        report = run(_readme_command(r"`(ooda report results/ --html\s+report.html)`"))
        assert report.returncode == 0, report.stderr
        assert '<details class="run"' in (repo / "report.html").read_text()

        # Step 7: ooda view, on a free port instead of 8000.
        view = _readme_command(r"`(ooda view)` serves")
        server = subprocess.Popen(
            [*view, "--port", "0"], cwd=repo, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            with urllib.request.urlopen(url, timeout=60) as page:
                sessions = page.read().decode("utf-8")
            assert sessions.count('<section class="session"') == 1  # the recording's
            assert 'data-scenario="greet/happy"' in sessions
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        for process in (init_mock.process, mock.process):
            process.terminate()
            process.wait(timeout=10)

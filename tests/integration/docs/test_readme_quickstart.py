"""The README's quick start, run as written: its config, its template, its commands."""

from __future__ import annotations

import re
import sys
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

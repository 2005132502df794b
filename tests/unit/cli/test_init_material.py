"""``ooda init --claude-plugin DIR``: testing an agent's material from zero — a ``raw``
procedure and a scenario to record per command and skill, and every prompt snapshot
written as pytest would write it, so plain ``pytest`` (and ``ooda lint``) pass at once
with no snapshot unused; nothing is overwritten, and a directory that is not material
is refused before anything is written. (Recording the scenarios with the real CLI:
tests/agents/test_claude_material.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_ooda.agents import MATERIAL_SECTIONS
from tests.unit.cli.test_init import _ooda, _pytest

GREETER = Path(__file__).resolve().parents[2] / "agents" / "greeter"
(SECTION,) = MATERIAL_SECTIONS
FLAG = f"--{SECTION}-plugin"


def _project(tmp_path: Path) -> Path:
    shutil.copytree(GREETER, tmp_path / "greeter")
    return tmp_path


def test_plain_pytest_and_lint_pass_straight_after_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _ooda(root, "init", FLAG, "greeter")
    assert done.returncode == 0, done.stderr
    assert "wrote ooda-config.yml" in done.stdout
    for procedure in ("cmd-greeter-hello", "cmd-greeter-farewell", "skill-greeter-greet"):
        assert f"wrote scenarios/{procedure}/first-live.yml" in done.stdout
    config = (root / "ooda-config.yml").read_text()
    assert f"{SECTION}: [greeter]" in config
    assert '- content: "/greeter:hello"   # arguments: <name> [mood]' in config
    live = (root / "scenarios" / "skill-greeter-greet" / "first-live.yml").read_text()
    assert "activation: {skill: 'greeter:greet'}" in live
    stored = root / "__snapshots__" / "ooda-config" / f"{SECTION}[greeter]"
    assert sorted(path.name for path in stored.iterdir()) == [
        "command.greeter~farewell.md",
        "command.greeter~farewell@cmd-greeter-farewell.md",
        "command.greeter~hello.md",
        "command.greeter~hello@cmd-greeter-hello.md",
        "skill.greeter~greet.md",
        "skill.greeter~greet@skill-greeter-greet.md",
        "subagent.greeter~reviewer.md",
    ]
    tested = _pytest(root)
    assert tested.returncode == 0, tested.stdout
    # Every snapshot compared, none unused (--snapshot-update would delete an unused one).
    assert "22 snapshots passed." in tested.stdout
    assert "unused" not in tested.stdout
    assert "3 skipped" in tested.stdout  # the scenarios, until they are recorded
    linted = _ooda(root, "lint")
    assert linted.returncode == 0, linted.stdout
    assert linted.stdout.startswith("no findings")


def test_it_overwrites_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "scenarios" / "cmd-greeter-hello").mkdir(parents=True)
    mine = root / "scenarios" / "cmd-greeter-hello" / "first-live.yml"
    mine.write_text("mine\n")
    done = _ooda(root, "init", FLAG, "greeter")
    assert done.returncode != 0
    assert "writes nothing over existing files: scenarios/cmd-greeter-hello/first-live.yml" in (
        done.stderr
    )
    assert mine.read_text() == "mine\n"
    assert not (root / "ooda-config.yml").exists()
    assert not (root / "__snapshots__").exists()


def test_a_directory_that_is_not_material_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = _ooda(tmp_path, "init", FLAG, "empty")
    assert done.returncode != 0
    assert f"{FLAG} empty:" in done.stderr
    assert not (tmp_path / "ooda-config.yml").exists()

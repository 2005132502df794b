"""``ooda compare`` holds both sides to the same agent: two sessions of another agent
version, or of a machine whose ``~/.claude`` held a skill the other's did not, are
refused with the difference named (exit 2) unless ``--allow-drift`` lets it differ;
runs recorded before fingerprints are compared with a warning. ``--by variant`` lets
two variants differ in what their keys change (another agent command, the material a
lift installs) and nothing else. A failed positive control makes the comparison
inconclusive, not a regression. ``ooda report --pr`` compares both, saying so beside the
scenario."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

from ooda_project import greet_project

from pytest_ooda.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from ooda_project import Project

#: An agent named as Claude Code (its version written in by :func:`_install`);
#: FAKE_BROKEN makes it answer nothing (as a CLI that cannot log in would), failing
#: every run.
AGENT = """\
#!/bin/sh
if [ "$1" = "--version" ]; then echo "VERSION (Fake Code)"; exit 0; fi
cat > /dev/null
if [ -n "$FAKE_BROKEN" ]; then echo "no answer"; exit 0; fi
echo "hello <promise>SUCCESS</promise>"
"""
HAPPY = "procedure: greet\nrepeat: 5\nexpect: {status: success}\n"


def _install(project: Project, version: str = "9.9.1", where: str = "bin") -> Path:
    """The agent at ``where``/claude, reporting ``version`` (an upgrade in place when it
    is there already)."""
    program = project.write(f"{where}/claude", AGENT.replace("VERSION", version))
    program.chmod(0o755)
    return program


def _project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Project, str]:
    project = greet_project(pytester, monkeypatch)
    program = _install(project)
    monkeypatch.setenv("HOME", str(project.path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(project.path)
    return project, f"{program} -p"


def _session(project: Project, into: str, *args: str, **env: str) -> Path:
    """One live session's results, moved to ``into``."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        project.run("-m", "live", *args)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    target = project.path / into
    (project.path / ".ooda" / "results").rename(target)
    return target


def test_another_agent_version_is_refused_unless_allowed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, agent = _project(pytester, monkeypatch)
    project.scenario("happy", HAPPY)
    base = _session(project, "base", f"--ooda-ai-cmd={agent}")
    project.write("home/.claude/skills/planted/SKILL.md", "Planted.\n")
    _install(project, "9.9.2")
    new = _session(project, "new", f"--ooda-ai-cmd={agent}")
    capsys.readouterr()
    assert main(["compare", str(base), str(new)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "ooda compare: refused: the runs compared were not made by the same agent, "
        "configured the same way",
        "greet/happy (base vs new):",
        "  version: 9.9.1 (Fake Code) (base) vs 9.9.2 (Fake Code) (new)",
        "  skills: planted (user) only in new",
        "compare what you meant to compare, or name the fields to let differ: "
        "--allow-drift skills --allow-drift version",
    ]
    assert main(["compare", str(base), str(new), "--allow-drift", "version"]) == 2
    assert "  skills: planted (user) only in new" in capsys.readouterr().err
    allowed = ["--allow-drift", "version", "--allow-drift", "skills"]
    assert main(["compare", str(base), str(new), *allowed]) == 0
    out, err = capsys.readouterr()
    assert "greet/happy  5/5 100%  5/5 100%" in out
    assert "refused" not in err
    assert main(["compare", str(base), str(new), "--allow-drift", "versoin"]) == 1
    assert "invalid choice: 'versoin'" in capsys.readouterr().err
    # The pull-request comment compares them, saying beside the scenario what differs.
    assert main(["report", "--pr", str(base), str(new)]) == 0
    assert (
        "- not the same agent on both sides (version: 9.9.1 (Fake Code) (base) vs 9.9.2 "
        "(Fake Code) (new); skills: planted (user) only in new): the difference measures "
        "that too, not the prompt alone"
    ) in capsys.readouterr().out.splitlines()
    # The same through the command in its own process.
    command = [sys.executable, "-m", "pytest_ooda", "compare", str(base), str(new)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "  version: 9.9.1 (Fake Code) (base) vs 9.9.2 (Fake Code) (new)" in done.stderr
    done = subprocess.run([*command, *allowed], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_runs_recorded_before_fingerprints_are_compared_with_a_warning(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, agent = _project(pytester, monkeypatch)
    project.scenario("happy", HAPPY)
    base = _session(project, "base", f"--ooda-ai-cmd={agent}")
    _install(project, "9.9.2")
    new = _session(project, "new", f"--ooda-ai-cmd={agent}")
    [log] = base.glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps({**r, "fingerprint": None}) + "\n" for r in lines))
    capsys.readouterr()
    assert main(["compare", str(base), str(new)]) == 0
    err = capsys.readouterr().err
    assert (
        "warning: greet/happy (base vs new): the base runs recorded no fingerprint (made "
        "before pytest-ooda recorded one): the agents cannot be compared"
    ) in err.splitlines()


def test_variants_may_differ_in_what_their_keys_change_and_in_nothing_else(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, agent = _project(pytester, monkeypatch)
    newer = _install(project, "9.9.7", "bin2")
    project.write("material/.claude/skills/wave/SKILL.md", "---\ndescription: Waves.\n---\n")
    config = project.path / "ooda-config.yml"
    config.write_text("claude: [material]\n" + config.read_text())
    project.scenario(
        "happy",
        HAPPY + f"variants:\n  baseline:\n  bare: {{claude: without}}\n"
        f"  newer: {{ai_cmd: {newer} -p}}\n",
    )
    session = _session(project, "one", f"--ooda-ai-cmd={agent}")
    capsys.readouterr()
    # The lift of the material and another agent command are the variables under test.
    assert main(["compare", "--by", "variant", str(session)]) == 0
    assert "refused" not in capsys.readouterr().err
    # Two variants that only swap the prompt layout, from sessions of two versions.
    project.scenario("happy", HAPPY)
    first = _session(
        project, "two", f"--ooda-ai-cmd={agent}", "--ooda-variant=a:prompt_format=ooda"
    )
    _install(project, "9.9.2")
    second = _session(
        project, "three", f"--ooda-ai-cmd={agent}", "--ooda-variant=b:prompt_format=rooda"
    )
    assert main(["compare", "--by", "variant", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert "greet/happy (a vs b):" in err.splitlines()
    assert "  version: 9.9.1 (Fake Code) (a) vs 9.9.2 (Fake Code) (b)" in err.splitlines()


def test_a_failed_control_makes_the_comparison_inconclusive_not_a_regression(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, agent = _project(pytester, monkeypatch)
    project.scenario("happy", HAPPY)
    project.scenario("smoke", "procedure: greet\ncontrol: true\nexpect: {status: success}\n")
    base = _session(project, "base", f"--ooda-ai-cmd={agent}")
    # The agent answers nothing: every run fails, the control's too.
    new = _session(project, "new", f"--ooda-ai-cmd={agent}", FAKE_BROKEN="1")
    capsys.readouterr()
    assert main(["compare", str(base), str(new)]) == 2
    out = capsys.readouterr().out
    why = "the harness could not observe the behaviour: control greet/smoke failed (new)"
    assert f"greet/happy: inconclusive: {why}" in out.splitlines()
    assert f"greet/smoke: inconclusive: {why}" in out.splitlines()
    assert "no scenario regressed significantly" in out
    # The pull-request comment says the same, and blocks nothing.
    assert main(["report", "--pr", str(base), str(new)]) == 0
    assert f"- inconclusive: {why}" in capsys.readouterr().out.splitlines()
    # Without the control, the same runs are a regression.
    for side in (base, new):
        [log] = side.glob("*.jsonl")
        kept = [line for line in log.read_text().splitlines() if '"smoke"' not in line]
        log.write_text("\n".join(kept) + "\n")
    assert main(["compare", str(base), str(new)]) == 1

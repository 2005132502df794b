"""A scenario marked ``control: true`` must succeed for the session's gates to count: an
agent that answers nothing (as one that cannot log in would) fails the control and
every gated scenario alike, and the gates say the harness could not observe the
behaviour — inconclusive, never the prompt's failure; a control that passes changes
nothing, and only the failed control's variant is held back. ``ooda report --check``
judges the log the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ooda_project import greet_project

from pytest_ooda.cli import main

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

#: Says SUCCESS, unless its command line says ``broken``: then it answers nothing.
AGENT = """\
#!/bin/sh
cat > /dev/null
case "$*" in *broken*) echo "no answer";; *) echo "hello <promise>SUCCESS</promise>";; esac
"""
GATED = "procedure: greet\nrepeat: 5\nexpect: {status: success, success_rate: {min: 0.8}}\n"
CONTROL = "procedure: greet\ncontrol: true\nexpect: {status: success}\n"
BLIND = "the harness could not observe the behaviour: control {} failed"


def _project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Project, str]:
    project = greet_project(pytester, monkeypatch)
    program = project.write("bin/agent", AGENT)
    program.chmod(0o755)
    project.scenario("happy", GATED)
    project.scenario("smoke", CONTROL)
    return project, str(program)


def test_a_failed_control_makes_the_gates_inconclusive(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, agent = _project(pytester, monkeypatch)
    result = project.run("-m", "live", f"--ooda-ai-cmd={agent} broken")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [f"gate FAILED greet/happy: inconclusive: {BLIND.format('greet/smoke')}"]
    )
    result.stdout.no_fnmatch_line("*success rate 0%*below the expected minimum*")
    result.stdout.fnmatch_lines(["*FAILED ooda-config.yml::greet::live[[]smoke[]]*"])
    # The log says the same to ooda report --check.
    capsys.readouterr()
    assert main(["report", str(project.path / ".ooda/results"), "--check"]) == 1
    assert f"FAILED greet/happy: inconclusive: {BLIND.format('greet/smoke')}" in (
        capsys.readouterr().out
    )


def test_a_passing_control_changes_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, agent = _project(pytester, monkeypatch)
    result = project.run("-m", "live", f"--ooda-ai-cmd={agent}")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["gate passed greet/happy: success rate >= 80%"])


def test_only_the_variant_whose_control_failed_is_held_back(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, agent = _project(pytester, monkeypatch)
    result = project.run(
        "-m", "live", f"--ooda-ai-cmd={agent}", "--ooda-variant=good:ai_output=text",
        f"--ooda-variant=bad:ai_cmd={agent} broken",
    )  # fmt: skip
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            f"gate FAILED greet/happy@bad: inconclusive: {BLIND.format('greet/smoke@bad')}",
            "gate passed greet/happy@good: success rate >= 80%",
        ],
        consecutive=False,
    )
    # The pair's lift leads the summary, and says it measures nothing.
    result.stdout.fnmatch_lines(
        [f"greet/happy: lift of * — inconclusive: {BLIND.format('greet/smoke@bad')} (bad)"]
    )

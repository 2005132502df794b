"""``--ooda-x VALUE`` as two words, where VALUE names an existing path: pytest takes it
for a test path before our options are known (moving the rootdir, collecting nothing),
so the plugin refuses it and says to write ``--ooda-x=VALUE``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.settings import SETTINGS

if TYPE_CHECKING:
    from ooda_project import Project

SCENARIO = "procedure: greet\nexpect: {status: success}\niterations: []\n"
PLAN = '[{"print": "<promise>SUCCESS</promise>"}]'
VALUE_OPTIONS = [
    row.pytest for row in SETTINGS if row.pytest is not None and row.kind in ("value", "list")
]


def test_every_value_option_is_checked() -> None:
    assert {"--ooda-ai-cmd", "--ooda-results", "--ooda-config", "--ooda-drift"} <= set(
        VALUE_OPTIONS
    )


@pytest.mark.parametrize("flag", VALUE_OPTIONS)
def test_a_separate_existing_path_is_refused_with_the_one_word_form(
    project: Project, flag: str
) -> None:
    target = project.path.parent / f"elsewhere-{flag.strip('-')}"
    target.mkdir()
    result = project.run("-m", "live", flag, str(target))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag} {target}: write {flag}={target} (one word)*"])


def test_an_absolute_agent_path_as_a_separate_word(project: Project) -> None:
    # The walkthrough's case: the agent given by its absolute path.
    agent = project.write("bin/agent", "#!/bin/sh\necho '<promise>SUCCESS</promise>'\n")
    agent.chmod(0o755)
    project.scenario("s", SCENARIO)
    result = project.run("-m", "live", "--ooda-ai-cmd", str(agent))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*write --ooda-ai-cmd={agent} (one word)*"])
    # Written as one word, the same command runs the live item.
    project.run("-m", "live", f"--ooda-ai-cmd={agent}").assert_outcomes(passed=1, deselected=7)


def test_values_that_are_not_paths_stay_accepted(project: Project) -> None:
    project.fake_ai(PLAN)
    result = project.run("--collect-only", "-q", "--ooda-repeat", "3", "--ooda-drift", "warn")
    assert result.ret == pytest.ExitCode.OK

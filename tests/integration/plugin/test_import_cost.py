"""What a session loads. The plugin's entry point imports the settings table and the
option and fixture modules, and the root package is the version and the error trees:
a project without procedure files loads no layer of the library (the config, the
loop, live runs, results, judges, sandboxes, the API replay, the executors) and none of
the libraries they use. The first procedure file collected loads what collection needs;
a replay never loads the live runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

#: All a plain project loads of ours: the entry point, the table and the leaves.
FOR_A_PLAIN_PROJECT = {
    "pytest_ooda",
    "pytest_ooda._types",
    "pytest_ooda.errors",
    "pytest_ooda.plugin",
    "pytest_ooda.plugin.fixtures",
    # Only where pytest-xdist is installed: the controller's collection line.
    "pytest_ooda.plugin.xdist_collection",
    "pytest_ooda.settings",
    "pytest_ooda.settings.checks",
    "pytest_ooda.settings.session",
    "pytest_ooda.settings.table",
}

NOT_FOR_A_PLAIN_PROJECT = (
    "pytest_ooda.config",
    "pytest_ooda.compose",
    "pytest_ooda.loop",
    "pytest_ooda.live",
    "pytest_ooda.agents",
    "pytest_ooda.results",
    "pytest_ooda.stats",
    "pytest_ooda.report",
    "pytest_ooda.view",
    "pytest_ooda.judge",
    "pytest_ooda.sandbox",
    "pytest_ooda.apireplay",
    "pytest_ooda.executors",
    "pytest_ooda.backends",
    "pytest_ooda.gotemplate",
    "pytest_ooda.scenario",
    "pytest_ooda.lint",
    "pytest_ooda.workspace",
    "pytest_ooda.repository",
    "pytest_ooda.yamlload",
    "pytest_ooda.plugin.collection",
    "pytest_ooda.plugin.live_items",
    "pytest_ooda.plugin.snapshots",
    "yaml",
    "jinja2",
    "requests",
)

DUMP_MODULES = """
import json, sys
def pytest_sessionfinish(session):
    with open("modules.json", "w") as handle:
        json.dump(sorted(sys.modules), handle)
"""


def _imported(pytester: pytest.Pytester, *args: str) -> set[str]:
    pytester.makeconftest(DUMP_MODULES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str()
    return set(json.loads((pytester.path / "modules.json").read_text()))


def test_a_plain_project_loads_the_entry_point_and_the_settings_table(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    # The user's own live tests are deselected by the same entry point.
    pytester.makepyfile(test_own="import pytest\n@pytest.mark.live\ndef test_agent(): pass\n")
    modules = _imported(pytester)
    assert "pytest_ooda.plugin" in modules  # the plugin did load
    assert sorted(m for m in modules if m.startswith(NOT_FOR_A_PLAIN_PROJECT)) == []
    assert {m for m in modules if m.startswith("pytest_ooda")} <= FOR_A_PLAIN_PROJECT


def test_a_procedure_file_loads_the_library(pytester: pytest.Pytester) -> None:
    # The other side of the same check: collection does import what it needs.
    pytester.makefile(
        ".yml",
        **{
            "ooda-config": "procedures:\n  p:\n    observe: [{content: look}]\n"
            "    orient: [{content: think}]\n    decide: [{content: pick}]\n"
            "    act: [{content: 'do it, then <promise>SUCCESS</promise>'}]\n"
        },
    )
    modules = _imported(pytester, "--collect-only")
    assert {"pytest_ooda.config", "pytest_ooda.plugin.collection", "yaml"} <= modules


def test_own_live_tests_are_deselected_in_a_plain_project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "import pytest\n\n"
        "@pytest.mark.live\ndef test_agent():\n    raise AssertionError('ran')\n\n"
        "def test_plain():\n    pass\n"
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1, deselected=1)
    selected = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "live")
    selected.assert_outcomes(failed=1, deselected=1)


#: What a replay of a plain scenario never needs: the live runs, the results and the
#: libraries a live run or a judge uses (a replay starts no agent and asks no API).
NOT_FOR_A_PLAIN_REPLAY = (
    "pytest_ooda.live",
    "pytest_ooda.results",
    "pytest_ooda.stats",
    "pytest_ooda.report",
    "pytest_ooda.view",
    "requests",
    "detect_secrets",
)


def test_a_plain_replay_imports_no_live_run_machinery(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".yml",
        **{
            "ooda-config": "procedures:\n  p:\n    observe: [{content: look}]\n"
            "    orient: [{content: think}]\n    decide: [{content: pick}]\n"
            "    act: [{content: 'do it, then <promise>SUCCESS</promise>'}]\n"
        },
    )
    scenario = pytester.path / "scenarios" / "p" / "done.yml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(
        "procedure: p\nexpect:\n  status: success\n"
        "iterations:\n- output: 'done <promise>SUCCESS</promise>'\n  exit_code: 0\n",
        encoding="utf-8",
    )
    modules = _imported(pytester, "-k", "scenario")
    assert "pytest_ooda.scenario.replay" in modules  # the replay did run
    unneeded = [
        m
        for m in modules
        for name in NOT_FOR_A_PLAIN_REPLAY
        if m == name or m.startswith(f"{name}.")
    ]
    assert unneeded == []

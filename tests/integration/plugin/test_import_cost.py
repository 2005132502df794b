"""What a session loads. The plugin is part of the package, so loading it imports the
library's namespace (``pytest_ooda/__init__``: config, compose, loop, errors); the rest
(the YAML parser, the template engine, scenarios, lint, the collectors, the syrupy
extension, the HTTP and secret-scanning libraries) loads only when a procedure file, a
fixture or an option asks for it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

NOT_FOR_A_PLAIN_PROJECT = (
    "pytest_ooda.gotemplate",
    "pytest_ooda.scenario",
    "pytest_ooda.lint",
    "pytest_ooda.live",
    "pytest_ooda.results",
    "pytest_ooda.stats",
    "pytest_ooda.report",
    "pytest_ooda.view",
    "pytest_ooda.judge",
    "pytest_ooda.yamlload",
    "pytest_ooda.plugin.nodes",
    "pytest_ooda.plugin.snapshot",
    "pytest_ooda.plugin.scenarios",
    "yaml",
    "jinja2",
    "requests",
    "detect_secrets",
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


def test_a_plain_project_imports_only_the_library_namespace(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    modules = _imported(pytester)
    assert "pytest_ooda.plugin" in modules  # the plugin did load
    assert sorted(m for m in modules if m.startswith(NOT_FOR_A_PLAIN_PROJECT)) == []


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
    assert {"pytest_ooda.config", "pytest_ooda.plugin.nodes", "yaml"} <= modules


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

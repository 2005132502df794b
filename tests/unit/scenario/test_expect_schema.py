"""Reading ``expect:`` (scenario/expect_schema.py): per-run checks and the aggregate
expectations, mistakes in them located."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import ScenarioError
from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.scenario.model import AggregateExpect
from pytest_ooda.scenario.verify import CommandCheck, ToolExpect

from .helpers import assert_located

if TYPE_CHECKING:
    from pathlib import Path


def test_every_key_read() -> None:
    scenario = load_scenario_text(
        "procedure: b\n"
        "expect:\n"
        "  iterations: {min: 1, max: 3}\n"
        "  tools: {called: Bash, bash_matches: '^ls', max_calls: 0}\n"
        "  commands: [{run: make, exit_code: 2, timeout: 1.5, output_contains: ok}]\n"
        "  success_rate: {min: 0.5, stop_early: true, min_runs: 8}\n"
        "  max_error_rate: 0.3\n"
    )
    expect = scenario.expect
    assert expect is not None
    assert (expect.status, expect.iterations) == (None, None)
    assert (expect.min_iterations, expect.max_iterations) == (1, 3)
    assert expect.tools == ToolExpect(("Bash",), (), ("^ls",), 0, line=4)
    assert expect.commands == (CommandCheck("make", 2, 1.5, ("ok",), line=5),)
    assert expect.aggregate == AggregateExpect(
        0.5, None, None, stop_early=True, min_runs=8, max_error_rate=0.3
    )
    assert expect.aggregate.to_yaml()["max_error_rate"] == 0.3
    # No aggregate key, no aggregate expectations.
    plain = load_scenario_text("procedure: b\nexpect: {status: success}\n").expect
    assert plain is not None
    assert plain.aggregate is None


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("expect: {status: done}\n", "2:18", "expect.status: expected one of"),
        ("expect: {iterations: {min: 3, max: 1}}\n", "2:22", "min 3 is greater"),
        ("expect: {signals: [SUCCES]}\n", "2:20", "expected one of none, SUCCESS"),
        ("expect: {files: {a: maybe}}\n", "2:21", "expected one of exists, absent"),
        ("expect:\n  tools: {calld: [Bash]}\n", "3:11", "expect.tools: unknown key 'calld'"),
        ("expect:\n  tools: {bash_matches: '(unclosed'}\n", "3:25", "is not a regular expr"),
        (
            "expect:\n  tools: {called: [Bash], not_called: [Bash]}\n",
            "3:10",
            "Bash cannot be both called and not_called",
        ),
        ("expect:\n  tools: {max_calls: -1}\n", "3:22", "expected an integer >= 0"),
        ("expect:\n  tools: {called: ['']}\n", "3:20", "called[0]: a tool name cannot be empty"),
        ("expect:\n  commands: {run: x}\n", "3:13", "expect.commands: expected a list"),
        ("expect:\n  commands:\n    - exit_code: 1\n", "4:7", "expect.commands[0]: missing 'run'"),
        ("expect:\n  commands:\n    - run: x\n      timeout: 0\n", "5:16", "expected a number > 0"),
        ("expect:\n  commands:\n    - run: '  '\n", "4:12", "the command is empty"),
        ("expect:\n  commands: ['']\n", "3:14", "the command is empty"),
        ("expect: {success_rate: 0.8}", "2:24", "expect.success_rate: expected a mapping like"),
        ("expect: {success_rate: {}}", "2:24", "expect.success_rate: give min"),
        ("expect: {success_rate: {min: 80}}", "2:30", "expected a rate from 0 to 1, got 80"),
        ("expect: {success_rate: {max: 1}}", "2:25", "expect.success_rate: unknown key 'max'"),
        ("expect: {max_mean_iterations: 0}", "2:31", "a run has at least 1 iteration, got 0"),
        ("expect: {max_mean_cost: -1}", "2:25", "expect.max_mean_cost: expected a number >= 0"),
        ("expect: {success_ratio: 1}", "2:10", "expect: unknown key 'success_ratio'"),
        ("expect: {max_error_rate: 20}", "2:26", "expect.max_error_rate: expected a rate from 0"),
        ("expect: {max_error_rate: -1}", "2:26", "expect.max_error_rate: expected a number >= 0"),
    ],
)
def test_located_errors(tmp_path: Path, body: str, where: str, message: str) -> None:
    assert_located(tmp_path, "procedure: b\n" + body, where, message)


def test_protect_reads_paths_inside_the_workspace() -> None:
    scenario = load_scenario_text(
        "procedure: b\nexpect:\n  protect: [tests/, ./Makefile, tests, scripts/check.sh]\n"
    )
    assert scenario.expect is not None
    assert scenario.expect.protect == ("tests", "Makefile", "scripts/check.sh")
    assert scenario.expect.to_yaml()["protect"] == ["tests", "Makefile", "scripts/check.sh"]
    one = load_scenario_text("procedure: b\nexpect: {protect: tests, fresh_sandbox: true}\n").expect
    assert one is not None
    assert (one.protect, one.fresh_sandbox) == (("tests",), True)
    assert one.to_yaml() == {"protect": ["tests"], "fresh_sandbox": True}


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("expect: {protect: [/etc/passwd]}", "2:20", "expect.protect[0]: '/etc/passwd' is not"),
        ("expect: {protect: [a, ../b]}", "2:23", "expect.protect[1]: '../b' leaves the workspace"),
        ("expect: {protect: [.]}", "2:20", "expect.protect[0]: '.' is the whole workspace"),
        ("expect: {protect: '~/x'}", "2:19", "expect.protect: '~/x' is not relative"),
        ("expect: {protect: [1]}", "2:20", "expect.protect[0]: expected a string"),
        ("expect: {fresh_sandbox: yes please}", "2:25", "expect.fresh_sandbox: expected true"),
    ],
)
def test_protect_errors_are_located(tmp_path: Path, body: str, where: str, message: str) -> None:
    assert_located(tmp_path, "procedure: b\n" + body, where, message)


def test_unknown_key_suggests() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("procedure: b\nexpect:\n  statsu: success\n", path="s.yml")
    assert info.value.hint is not None
    assert info.value.hint.startswith("did you mean 'status'?")
    assert (info.value.line, info.value.column) == (3, 3)


def test_the_hint_for_a_percentage_success_rate() -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario_text("procedure: build\nexpect: {success_rate: {min: 80}}\n", path="s.yml")
    assert raised.value.hint == "for 80% write 0.8"

"""Reading what a recording holds (scenario/recording_schema.py): ``iterations:``,
``recorded:`` and ``judged:``, mistakes in them located."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.scenario import load_scenario_text

from .helpers import assert_located

if TYPE_CHECKING:
    from pathlib import Path


def test_recorded_and_judged_read() -> None:
    scenario = load_scenario_text(
        "procedure: b\n"
        "recorded: {status: max-iters, reason: out of turns, sandbox: {kind: bwrap}}\n"
        "judged:\n"
        f"  key: {'ab' * 32}\n"
        "  votes: [{verdict: pass, reason: fine, score: 0.9}, {verdict: fail}]\n"
        "iterations:\n"
        "  - {timed_out: true, retries: 2, files: {gone.txt: null}}\n"
    )
    recorded = scenario.recorded
    assert recorded is not None
    assert (recorded.status, recorded.reason) == ("max-iters", "out of turns")
    assert recorded.sandbox is not None
    assert dict(recorded.sandbox) == {"kind": "bwrap"}
    judged = scenario.judged
    assert judged is not None
    assert judged.key == "ab" * 32
    assert judged.line == 4  # where its mapping starts
    assert [(vote.verdict, vote.reason, vote.score) for vote in judged.votes] == [
        ("pass", "fine", 0.9),
        ("fail", "", None),
    ]
    (iteration,) = scenario.iterations
    assert (iteration.timed_out, iteration.retries, iteration.line) == (True, 2, 7)
    assert dict(iteration.files) == {"gone.txt": None}


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("iterations: {output: x}\n", "2:13", "iterations: expected a list"),
        ("iterations:\n  - outptu: x\n", "3:5", "unknown key 'outptu'"),
        ("iterations:\n  - exit_code: '1'\n", "3:16", "exit_code: expected an integer"),
        ("iterations:\n  - prompt_sha256: abc\n", "3:20", "64 lowercase hex"),
        ("iterations:\n  - {output: 1}\n", "3:14", "output: expected a string"),
        (
            "iterations:\n  - usage: {input: 3}\n",
            "3:13",
            "iterations[0].usage: unknown key 'input'",
        ),
        (
            "iterations:\n  - tool_calls: [{summary: x}]\n",
            "3:18",
            "iterations[0].tool_calls[0]: missing 'name'",
        ),
        ("iterations:\n  - tool_calls: {name: x}\n", "3:17", "tool_calls: expected a list"),
        ("iterations:\n  - turns: many\n", "3:12", "iterations[0].turns: expected an integer"),
        (
            "iterations:\n  - tool_calls: [{name: x, ok: maybe}]\n",
            "3:32",
            "tool_calls[0].ok: expected true or false",
        ),
        ("recorded: {reason: x}\n", "2:11", "recorded: missing 'status'"),
        ("recorded: {status: done}\n", "2:20", "recorded.status: expected one of success"),
        ("recorded: {status: success, sandbox: [x]}\n", "2:38", "expected a mapping of strings"),
        ("judged: {votes: []}\n", "2:17", "judged.votes: expected a list of verdicts"),
        ("judged: {key: abc, votes: [{verdict: pass}]}\n", "2:15", "64 lowercase hex"),
        ("judged: {votes: [{reason: x}]}\n", "2:18", "judged.votes[0]: missing 'verdict'"),
    ],
)
def test_located_errors(tmp_path: Path, body: str, where: str, message: str) -> None:
    assert_located(tmp_path, "procedure: b\n" + body, where, message)

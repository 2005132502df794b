"""The judge as an agent command: the real Claude Code CLI against the offline agent
mock, its final text the verdict. A well-formed answer is a vote (with the cost the CLI
reported), prose is a judge error asked again, and ``ooda judge check`` grades labelled
examples through it. Four CLI invocations in all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from claude_mock import ANSWER_COST, CLAUDE

from pytest_ooda.judge import JudgeBackendSpec, JudgeInputs, JudgeSpec, grade, make_asker

if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mock import AgentMock

ROOT = Path(__file__).resolve().parents[2]


def answer(word: str, reason: str) -> dict[str, str]:
    return {"text": json.dumps({"verdict": word, "reason": reason})}


def test_claude_judges_and_a_prose_answer_is_asked_again(
    agent_mock: Callable[..., AgentMock], monkeypatch: pytest.MonkeyPatch
) -> None:
    mock = agent_mock(
        [
            [answer("pass", "Both people are named.")],
            [{"text": "The greeting looks fine to me."}],
            [answer("fail", "Bob is missing.")],
        ]
    )
    mock.use(monkeypatch)
    spec = JudgeSpec(
        rubric="The greeting names everyone present.",
        backend=JudgeBackendSpec(ai_cmd=CLAUDE, timeout=120),
        inputs=("output",),
        retries=1,
    )
    asker = make_asker(spec.backend)
    first = grade(spec, JudgeInputs(output="Hello Ada and Bob."), asker)
    assert first.passed is True
    assert first.votes[0].reason == "Both people are named."
    assert first.cost == pytest.approx(ANSWER_COST)

    second = grade(spec, JudgeInputs(output="Hello Ada."), asker)
    assert second.error is None
    assert second.passed is False
    assert second.votes[0].attempts == 2
    assert second.votes[0].reason == "Bob is missing."
    assert second.cost == pytest.approx(2 * ANSWER_COST)
    assert mock.sessions() == [1, 2, 3]


def test_ooda_judge_check_through_claude(
    agent_mock: Callable[..., AgentMock], tmp_path: Path
) -> None:
    mock = agent_mock([[answer("pass", "Named both.")], [answer("pass", "Looks complete.")]])
    scenario = tmp_path / "hello.yml"
    scenario.write_text(
        "procedure: greet\nexpect:\n  judge:\n"
        "    rubric: The greeting names everyone present.\n"
        "    inputs: [output]\n"
        f"    judge: {{ai_cmd: '{CLAUDE}', timeout: 120}}\n"
        "    examples:\n"
        "      - {name: both, label: pass, output: Hello Ada and Bob.}\n"
        "      - {name: one, label: fail, output: Hello Ada.}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OODA_LOOP_")}
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL"):
        env.pop(name, None)
    env.update(mock.env())
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "judge", "check", str(scenario), "--runs", "1",
         "--min-kappa", "0.5"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    # The judge passed both examples: right on one, wrong on the other.
    assert "2 labelled example(s) x 1 run(s) = 2 grading(s)" in done.stdout, done.stderr
    assert "accuracy (gradings matching the label): 0.50" in done.stdout
    assert "Cohen's kappa vs the labels:             0.00" in done.stdout
    assert done.returncode == 1
    assert "kappa 0.00 is below 0.5" in done.stderr
    assert (tmp_path / ".ooda" / "results" / "judge-cache").is_dir()
    # Created by the cache, the default folder keeps itself out of git as the log does.
    assert (tmp_path / ".ooda" / ".gitignore").read_text().endswith("*\n")

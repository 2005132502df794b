"""``ooda judge check`` as a user runs it: a judge that cannot be asked (its API key is
missing) and one the API refuses are shown, counted by kind, and fail the check; a
figure that is n/a is said to be n/a, never "below"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from judge_server import JudgeServer, verdict

ROOT = Path(__file__).resolve().parents[3]

EXAMPLES = (
    "    examples:\n"
    "      - {name: both, label: pass, output: Hello Ada and Bob.}\n"
    "      - {name: one, label: fail, output: Hello Ada.}\n"
    "      - {name: none, label: fail, output: Hello.}\n"
)


def check(
    tmp_path: Path, judge: str, *args: str, key: str | None = None
) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "hello.yml"
    scenario.write_text("procedure: greet\nexpect:\n" + judge + EXAMPLES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OODA_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["OODA_CONFIG_HOME"] = str(tmp_path / "no-global")
    if key is not None:
        env["OODA_TEST_JUDGE_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "judge", "check", str(scenario), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_judge_with_a_missing_key_is_shown_counted_and_fails_the_check(
    tmp_path: Path,
) -> None:
    with JudgeServer(default=verdict("pass")) as server:
        done = check(tmp_path, server.judge_block(), "--runs", "3", "--min-accuracy", "0.8")
        assert server.requests == []  # nothing was asked: there is no key to ask with
    out = done.stdout
    assert "3 labelled example(s) x 3 run(s) = 0 grading(s), 9 judge error(s) left out" in out
    assert "judge errors by kind: 9 cannot-ask" in out
    # The first error in full, with the variable to set.
    assert (
        "first judge error (both, run 1): the anthropic API key is not set: environment "
        "variable OODA_TEST_JUDGE_KEY is empty or missing (export it, or set "
        "ai_api.api_key_env to the variable that holds the key)"
    ) in out
    assert "no grading succeeded: the figures below are n/a" in out
    assert done.returncode == 1, out + done.stderr
    assert "no grading succeeded (9 judge error(s)); the judge is unchecked" in done.stderr
    assert "accuracy is n/a (no grading succeeded), so --min-accuracy 0.8 is not met" in (
        done.stderr
    )
    assert "below" not in done.stderr


def test_a_refusing_api_is_counted_apart_from_bad_answers(tmp_path: Path) -> None:
    with JudgeServer() as server:
        server.fail(401, "invalid x-api-key").answer("I think it passes.", verdict("fail"))
        server.answer(verdict("fail"))
        done = check(
            tmp_path, server.judge_block(extra="    retries: 0\n"), "--runs", "1",
            "--no-cache", "--min-kappa", "0.2", key="sk-test",
        )  # fmt: skip
    out = done.stdout
    assert "= 1 grading(s), 2 judge error(s) left out" in out, out + done.stderr
    assert "judge errors by kind: 1 refused, 1 bad-answer" in out
    assert "first judge error (both, run 1): HTTP 401" in out
    assert "invalid x-api-key" in out
    # The one answered grading said "fail", as its label did: kappa is n/a, not "below".
    assert done.returncode == 1
    assert (
        "kappa is n/a (the gradings and the labels hold one verdict only), so --min-kappa "
        "0.2 is not met"
    ) in done.stderr
    assert "below" not in done.stderr


def test_a_judge_that_answers_exits_zero(tmp_path: Path) -> None:
    with JudgeServer() as server:
        server.answer(verdict("pass"), verdict("fail"), verdict("fail"))
        done = check(tmp_path, server.judge_block(), "--runs", "1", "--min-accuracy", "0.9",
                     key="sk-test")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "judge error" not in done.stdout
    assert "accuracy (gradings matching the label): 1.00" in done.stdout

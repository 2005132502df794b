"""The judge library: ``expect.judge`` read with located errors, the strict answer
shape, the pass rules, calibration figures against a hand computation, and the
workspace diff the judge is shown."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from pytest_ooda.errors import ScenarioError
from pytest_ooda.judge import (
    AnswerError,
    JudgeBackendSpec,
    JudgeSpec,
    LabelledExample,
    Vote,
    cache_for,
    calibrate,
    cohens_kappa,
    parse_answer,
    workspace_diff,
)
from pytest_ooda.judge.ask import RawAnswer
from pytest_ooda.judge.calibration import render
from pytest_ooda.judge.model import combine
from pytest_ooda.scenario import load_scenario, load_scenario_text

JUDGE = """\
procedure: b
expect:
  judge:
    rubric: The plan covers the request.
    judge: {ai_cmd: "claude -p --output-format json"}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_judge_block(tmp_path: Path) -> None:
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "plan.md").write_text("Every step is testable.\n")
    path = write(
        tmp_path,
        "procedure: b\nexpect:\n  judge:\n    rubric: rubrics/plan.md\n"
        "    inputs: [diff, transcript, {files: ['docs/*.md', PLAN.md]}]\n"
        "    judge:\n      ai_cmd_alias: claude\n      timeout: 60\n"
        "    votes: 5\n    pass: {at_least: 4}\n    retries: 0\n"
        "    examples:\n      - {name: good, label: pass, output: fine}\n"
        "      - {label: fail, diff: '-x', files: {PLAN.md: nothing}}\n",
    )
    spec = load_scenario(path).expect.judge  # type: ignore[union-attr]
    assert spec is not None
    assert spec.rubric == "Every step is testable.\n"
    assert spec.rubric_file == "rubrics/plan.md"
    assert spec.inputs == ("diff", "transcript", "files")
    assert spec.files == ("docs/*.md", "PLAN.md")
    assert spec.backend == JudgeBackendSpec(ai_cmd_alias="claude", timeout=60.0)
    assert (spec.votes, spec.pass_rule, spec.needed, spec.retries) == (5, "at_least", 4, 0)
    assert [example.label for example in spec.examples] == ["pass", "fail"]
    assert spec.examples[0].name == "good"
    assert dict(spec.examples[1].files) == {"PLAN.md": "nothing"}
    # Written back as it was read.
    again = load_scenario_text(
        __import__("yaml").safe_dump(load_scenario(path).to_yaml()), path=path
    )
    assert again.expect == load_scenario(path).expect


@pytest.mark.parametrize(
    ("block", "where", "message"),
    [
        ("  judge: {judge: {ai_cmd: x}}\n", "3:10", "expect.judge: missing 'rubric'"),
        ("  judge: {rubric: r}\n", "3:10", "expect.judge: missing 'judge'"),
        ("  judge: {rubric: r, judge: {}, votse: 3}\n", "3:33", "unknown key 'votse'"),
        (
            "  judge: {rubric: r, judge: {ai_cmd: x, ai_cmd_alias: y}}\n",
            "3:29",
            "give exactly one of ai_api, ai_cmd, ai_cmd_alias (got ai_cmd, ai_cmd_alias)",
        ),
        (
            "  judge: {rubric: r, judge: {ai_api: {provider: openia, model: m}}}\n",
            "3:49",
            "ai_api.provider: expected one of anthropic, openai",
        ),
        (
            "  judge: {rubric: r, judge: {ai_api: {provider: openai}}}\n",
            "3:38",
            "missing required key 'model'",
        ),
        ('  judge: {rubric: r, judge: {ai_cmd: "a \'b"}}\n', "3:38", "No closing quotation"),
        ("  judge: {rubric: r, judge: {ai_cmd: x}, votes: 0}\n", "3:49", "integer >= 1"),
        (
            "  judge: {rubric: r, judge: {ai_cmd: x}, votes: 2, pass: {at_least: 3}}\n",
            "3:69",
            "3 pass votes can never come from 2 vote(s)",
        ),
        ("  judge: {rubric: r, judge: {ai_cmd: x}, pass: most}\n", "3:48", "expected one of"),
        ("  judge: {rubric: r, judge: {ai_cmd: x}, inputs: [otput]}\n", "3:51", "expected one of"),
        ("  judge: {rubric: plan.md, judge: {ai_cmd: x}}\n", "3:19", "rubric file not found"),
        ("  judge: {rubric: '  ', judge: {ai_cmd: x}}\n", "3:19", "the rubric is empty"),
        (
            "  judge: {rubric: r, judge: {ai_cmd: x}, examples: [{output: o}]}\n",
            "3:53",
            "missing 'label'",
        ),
        (
            "  judge: {rubric: r, judge: {ai_cmd: x}, examples: [{label: ok}]}\n",
            "3:61",
            "label: expected one of pass, fail",
        ),
        (
            "  judge: {rubric: r, judge: {ai_api: {provider: openai, model: m}, timeout: 3}}\n",
            "3:77",
            "an ai_api judge takes ai_api.timeout",
        ),
    ],
)
def test_located_judge_errors(tmp_path: Path, block: str, where: str, message: str) -> None:
    path = write(tmp_path, "procedure: b\nexpect:\n" + block)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    rendered = str(info.value)
    assert rendered.startswith(f"{path}:{where}:"), rendered
    assert message in rendered


def test_recorded_verdicts_are_read_and_checked(tmp_path: Path) -> None:
    key = "ab" * 32
    scenario = load_scenario(
        write(
            tmp_path,
            JUDGE + f"judged:\n  key: {key}\n  votes:\n    - {{verdict: pass, reason: ok}}\n",
        )
    )
    assert scenario.judged is not None
    assert scenario.judged.key == key
    assert [vote.verdict for vote in scenario.judged.votes] == ["pass"]
    bad = write(tmp_path, JUDGE + "judged:\n  key: abc\n  votes: [{verdict: maybe}]\n")
    with pytest.raises(ScenarioError, match=r"s\.yml:7:8: judged\.key: expected 64"):
        load_scenario(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the judge gave an empty answer"),
        ("```json\n{}\n```", "the answer is not JSON"),
        ('{"verdict": "PASS", "reason": "x"}', '"verdict" must be "pass" or "fail"'),
        ('{"verdict": "pass", "reason": "x", "score": "high"}', '"score" must be a number'),
        ('{"verdict": "pass", "reason": "x"} trailing', "the answer is not JSON"),
    ],
)
def test_the_answer_shape_is_strict(text: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message.replace("(", r"\(")):
        parse_answer(text)


def test_a_well_formed_answer() -> None:
    assert parse_answer(' {"verdict": "fail", "reason": " no plan ", "score": 0.2}\n') == (
        "fail",
        "no plan",
        0.2,
    )


def spec(votes: int = 3, **changes: object) -> JudgeSpec:
    return JudgeSpec(
        rubric="r",
        backend=JudgeBackendSpec(ai_cmd="judge"),
        votes=votes,
        **changes,  # type: ignore[arg-type]
    )


def test_pass_rules_and_errors() -> None:
    passing, failing = Vote("pass", "ok"), Vote("fail", "no")
    assert combine(spec(), (passing, failing, passing)).passed is True
    assert combine(spec(), (passing, failing, failing)).passed is False
    assert combine(spec(4), (passing, passing, failing, failing)).passed is False  # 3 needed
    assert combine(spec(pass_rule="all"), (passing, passing, failing)).passed is False
    errored = combine(spec(), (passing, Vote(None, error="HTTP 529 Overloaded"), passing))
    assert (errored.passed, errored.error) == (None, "judge error: HTTP 529 Overloaded")


# Per example: the label, and the verdicts its three gradings get.
CALIBRATION = {
    "e1": ("pass", ["pass", "pass", "fail"]),
    "e2": ("fail", ["fail", "fail", "fail"]),
    "e3": ("pass", ["fail", "fail", "pass"]),
    "e4": ("fail", ["pass", "fail", "fail"]),
}


class ScriptedJudge:
    """Answers each example's gradings in the scripted order (found by its output)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = defaultdict(int)

    def __call__(self, prompt: str) -> RawAnswer:
        name = next(name for name in CALIBRATION if f"output of {name}" in prompt)
        verdict = CALIBRATION[name][1][self.calls[name]]
        self.calls[name] += 1
        return RawAnswer(f'{{"verdict": "{verdict}", "reason": "because"}}')


def examples() -> list[LabelledExample]:
    return [
        LabelledExample(label=label, output=f"output of {name}", name=name)  # type: ignore[arg-type]
        for name, (label, _) in CALIBRATION.items()
    ]


def test_calibration_figures_match_a_hand_computation(tmp_path: Path) -> None:
    judge = ScriptedJudge()
    found = calibrate(spec(1, inputs=("output",)), examples(), judge, runs=3)
    # By hand: 8 of 12 gradings match their label (2 + 3 + 1 + 2).
    assert found.accuracy == pytest.approx(8 / 12)
    # Majorities: pass, fail, fail, fail against labels pass, fail, pass, fail: 3 of 4.
    assert found.majority_accuracy == pytest.approx(3 / 4)
    # Pairwise agreement of three gradings: 1/3 when split 2-1, 1 when unanimous.
    assert found.agreement == pytest.approx((1 / 3 + 1 + 1 / 3 + 1 / 3) / 4)
    # Kappa: p_o = 8/12; the judge says pass 4/12 times, the labels 6/12 times, so
    # p_e = 4/12 * 6/12 + 8/12 * 6/12 = 1/2 and kappa = (2/3 - 1/2) / (1/2) = 1/3.
    assert found.kappa == pytest.approx(1 / 3)
    text = "\n".join(render(found, title="judge check b/s"))
    assert "4 labelled example(s) x 3 run(s) = 12 grading(s)" in text
    assert "e3" in text
    assert "<- disagrees with the label" in text
    assert "Cohen's kappa vs the labels:             0.33" in text

    # Cached: a second check asks the judge nothing.
    cache = cache_for(tmp_path)
    calibrate(spec(1, inputs=("output",)), examples(), ScriptedJudge(), runs=3, cache=cache)
    idle = ScriptedJudge()
    again = calibrate(spec(1, inputs=("output",)), examples(), idle, runs=3, cache=cache)
    assert sum(idle.calls.values()) == 0
    assert again.kappa == pytest.approx(1 / 3)


def test_cohens_kappa_edge_cases() -> None:
    assert cohens_kappa([]) is None
    assert cohens_kappa([("pass", "pass")] * 4) is None  # one class only: undefined
    assert cohens_kappa([("pass", "pass"), ("fail", "fail")]) == 1.0
    assert cohens_kappa([("pass", "fail"), ("fail", "pass")]) == -1.0


def test_workspace_diff(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    for root in (before, after):
        (root / ".git").mkdir(parents=True)
        (root / "same.txt").write_text("same\n")
    (before / "old.md").write_text("one\ntwo\n")
    (after / "old.md").write_text("one\nthree\n")
    (after / "new.md").write_text("fresh")
    (after / "blob.bin").write_bytes(b"\0\1")
    (after / ".git" / "HEAD").write_text("ref\n")
    diff = workspace_diff(before, after)
    assert "Binary or large file blob.bin differs" in diff
    assert "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+fresh\n" in diff
    assert "--- a/old.md\n+++ b/old.md\n" in diff
    assert "-two\n+three\n" in diff
    assert "same.txt" not in diff
    assert ".git" not in diff


DOCS = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("doc", ["docs/judging.md", "README.md"])
def test_the_documented_scenarios_load(doc: str, tmp_path: Path) -> None:
    """Every scenario shown in the judging docs and the README's worked example loads."""
    blocks = [
        body
        for kind, body in re.findall(r"```(\w*)\n(.*?)```", (DOCS / doc).read_text(), re.DOTALL)
        if kind == "yaml" and body.startswith("procedure:") and "judge:" in body
    ]
    assert blocks
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "plan.md").write_text("Every step has a test.\n")
    for body in blocks:
        scenario = load_scenario(write(tmp_path, body))
        assert scenario.expect is not None
        assert scenario.expect.judge is not None


def test_an_unknown_judge_alias_is_located_at_the_judge_block(tmp_path: Path) -> None:
    from pytest_ooda.config import load_config_file
    from pytest_ooda.errors import ConfigError
    from pytest_ooda.judge import JudgeInputs
    from pytest_ooda.judge.run import JudgeContext, judge_live

    (tmp_path / "ooda-config.yml").write_text("procedures:\n  b:\n    act: [{content: x}]\n")
    config = load_config_file(tmp_path / "ooda-config.yml")
    path = write(
        tmp_path,
        JUDGE.replace('{ai_cmd: "claude -p --output-format json"}', "{ai_cmd_alias: cluade}"),
    )
    with pytest.raises(ConfigError) as info:
        judge_live(load_scenario(path), JudgeInputs(), JudgeContext(config=config))
    assert str(info.value).startswith(f"{path}:5:12: expect.judge.judge.ai_cmd_alias: unknown")
    assert info.value.hint is not None
    assert "claude" in info.value.hint

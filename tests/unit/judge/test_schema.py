"""``expect.judge`` read with located errors, recorded verdicts (``judged:``) checked, and
the documented judge scenarios loading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ooda.errors import ScenarioError
from pytest_ooda.judge import JudgeBackendSpec, load_examples
from pytest_ooda.scenario import load_scenario, load_scenario_text

from .helpers import JUDGE, write


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
        ("  judge: {rubric: r, judge: {ai_cmd: x}, votse: 3}\n", "3:42", "unknown key 'votse'"),
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


def test_an_examples_file_a_list_or_a_mapping(tmp_path: Path) -> None:
    listed = tmp_path / "listed.yml"
    listed.write_text("- {name: good, label: pass, output: fine}\n- {label: fail, output: nope}\n")
    assert [example.label for example in load_examples(listed)] == ["pass", "fail"]
    described = tmp_path / "described.yml"
    described.write_text("description: two\nexamples:\n  - {label: pass, output: ok}\n")
    assert [example.output for example in load_examples(described)] == ["ok"]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("description: none\n", "1:1", "examples file: missing 'examples'"),
        ("exampels: []\n", "1:1", "examples file: unknown key 'exampels'"),
        ("- {label: maybe, output: x}\n", "1:11", "label"),
        ("- " * 200 + "x\n", "1:", "nesting deeper than 100 levels"),
    ],
)
def test_mistakes_in_an_examples_file_are_located(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "examples.yml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_examples(path)
    assert str(info.value).startswith(f"{path}:{where}"), str(info.value)
    assert message in info.value.message

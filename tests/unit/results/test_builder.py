"""A live run into a results record: real runs (HTTP backend under ``responses``, a
real subprocess agent), redaction, the prompt's identity."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.backends import redacted_call
from pytest_ooda.config import load_config, load_config_file, resolve_run_settings
from pytest_ooda.loop import run_procedure
from pytest_ooda.redact import Redactor
from pytest_ooda.results import AiIdentity, RecordHead, classify_outcome
from pytest_ooda.results.builder import (
    OUTPUT_TAIL_CHARS,
    OUTPUT_TAIL_LINES,
    ai_identity,
    build_record,
)
from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.workspace import PathChanges

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.plugin import HttpAIStub, ScriptFactory
    from pytest_ooda.results import RunRecord

CONFIG = """\
loop:
  ai_api:
    provider: anthropic
    model: test-model
    price_input_per_mtok: 3
    price_output_per_mtok: 15
procedures:
  greet:
    observe:
      - path: look.md
    orient:
      - content: "Think about {{.who}}."
        parameters: {who: everyone}
    decide:
      - content: "Decide."
    act:
      - content: "Greet. <promise>SUCCESS</promise> when done."
"""
SECRET = "s3cr3t-value-0123456789"
API_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    (tmp_path / "look.md").write_text("Look around.\n")
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    return load_config_file(tmp_path / "ooda-config.yml")


def record_of(
    scenario_text: str, result: LoopResult, *, ai: AiIdentity | None = None, **options: Any
) -> RunRecord:
    scenario = load_scenario_text(scenario_text, path="scenarios/greet/s.yml")
    problems = scenario.check(result, result.workdir)
    expect = scenario.expect
    head = RecordHead(
        run_id="r",
        procedure=scenario.procedure,
        scenario=scenario.name,
        ai=ai or AiIdentity(),
        expect=expect.to_yaml() if expect is not None else None,
    )
    return build_record(
        head,
        result,
        classify_outcome(scenario, result, problems)[0],
        problems=problems,
        redactor=Redactor({"MY_TOKEN": SECRET}),
        redact_call=redacted_call,
        started_at=0.0,
        finished_at=time.time(),
        **options,
    )


def test_tokens_and_cost_from_the_http_backend(
    config: Config, ooda_http_ai: HttpAIStub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    ooda_http_ai.reply("Looking.", input_tokens=1000, output_tokens=100)
    ooda_http_ai.reply("Done. <promise>SUCCESS</promise>", input_tokens=2000, output_tokens=50)
    result = run_procedure(config, "greet", workdir=tmp_path, handle_signals=False)
    identity = ai_identity(resolve_run_settings(config, "greet"))
    head = RecordHead(run_id="r", procedure="greet", scenario="s", run=2, runs=5, ai=identity)
    record = build_record(
        head,
        result,
        "success",
        redactor=Redactor({}),
        redact_call=redacted_call,
        started_at=0.0,
        finished_at=1.0,
    )
    assert record.head.ai.api == "anthropic:test-model"
    assert record.head.ai.command is None
    assert (record.head.run, record.head.runs, record.status, record.outcome) == (
        2,
        5,
        "success",
        "success",
    )
    first, second = record.iterations
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (1000, 100)
    assert first.usage.cost == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    assert second.signal == "SUCCESS"
    assert record.usage is not None
    assert record.usage.total_tokens == 3150
    assert record.cost == pytest.approx((3000 * 3 + 150 * 15) / 1e6)
    assert record.prompt_sha256 == result.records[0].prompt_sha256
    assert record.started_at == "1970-01-01T00:00:00+00:00"


def test_every_string_is_redacted(
    config: Config, ooda_script: ScriptFactory, tmp_path: Path
) -> None:
    output = f"token {SECRET} and key {API_KEY}\n<promise>FAILURE</promise>"
    result = run_procedure(
        config,
        "greet",
        backend=ooda_script([(output, 3)]),
        max_iterations=1,
        workdir=tmp_path,
        failure_threshold=1,
    )
    record = record_of(
        f"procedure: greet\nexpect: {{status: success, files: {{'{SECRET}.md': exists}}}}\n",
        result,
        ai=ai_identity(resolve_run_settings(config, "greet", ai_cmd=f"agent --token {SECRET}")),
    )
    text = record.to_line()
    assert SECRET not in text
    assert API_KEY not in text
    assert record.head.ai.command == "agent --token <redacted>"
    assert "token <redacted> and key <redacted>" in record.iterations[0].output_tail
    assert any("<redacted>.md" in problem for problem in record.problems)
    assert "<redacted>.md" in record.head.expect["files"]


def test_output_tails_are_bounded(
    config: Config, ooda_script: ScriptFactory, tmp_path: Path
) -> None:
    many = "\n".join(f"line {n}" for n in range(200)) + "\n<promise>SUCCESS</promise>"
    wide = "x" * 20_000 + "<promise>SUCCESS</promise>"
    for output in (many, wide):
        result = run_procedure(
            config, "greet", backend=ooda_script([output]), max_iterations=1, workdir=tmp_path
        )
        tail = record_of("procedure: greet\n", result).iterations[0].output_tail
        assert tail.endswith("<promise>SUCCESS</promise>")
        assert len(tail) <= OUTPUT_TAIL_CHARS
        assert len(tail.splitlines()) <= OUTPUT_TAIL_LINES


AGENT = """\
import os, sys
from pathlib import Path
sys.stdin.read()
step = len(list(Path(".").glob("step-*")))
Path(f"step-{step}").write_text("x")
if step == 0:
    Path("kept.md").write_text("one")
    Path("gone.md").write_text("two")
if step == 1:
    Path("kept.md").write_text("changed, longer")
    os.remove("gone.md")
    os.remove("existing.md")
    print("<promise>SUCCESS</promise>")
"""


def test_files_changed_per_iteration_and_in_total(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "existing.md").write_text("was here")
    config = load_config(None, cwd=tmp_path, global_config=False, env={})
    changes = PathChanges(workspace)
    result = run_procedure(
        config,
        "build",
        ai_cmd=f"{sys.executable} {agent}",
        max_iterations=3,
        workdir=workspace,
        on_event=changes,
        handle_signals=False,
    )
    assert result.status == "success"
    assert changes.iterations == {
        1: {"gone.md": "created", "kept.md": "created", "step-0": "created"},
        2: {
            "existing.md": "deleted",
            "gone.md": "deleted",
            "kept.md": "modified",
            "step-1": "created",
        },
    }
    assert changes.total() == {
        "existing.md": "deleted",
        "kept.md": "created",
        "step-0": "created",
        "step-1": "created",
    }
    record = record_of("procedure: build\n", result, changes=changes)
    assert dict(record.files_changed) == changes.total()
    assert dict(record.iterations[1].files) == changes.iterations[2]
    assert PathChanges(workspace).total() == {}

"""Terminal text the plugin prints: counts, error excerpts, live lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.backends import Usage
from pytest_ooda.errors import ConfigError, TemplateError
from pytest_ooda.loop.tables import iteration_table
from pytest_ooda.plugin.report import (
    collection_line,
    count_nodeids,
    file_excerpt,
    format_error,
    live_line,
)
from pytest_ooda.results import IterationEntry, RecordHead, RunRecord

if TYPE_CHECKING:
    from pathlib import Path


def test_counts_come_from_our_node_ids_only() -> None:
    ids = [
        "ooda-config.yml::build::config",
        "ooda-config.yml::build::prompt[observe]",
        "ooda-config.yml::build::scenario[a]",
        "ooda-config.yml::build::live[a]",
        "ooda-config.yml::plan::live[b]",
        "procedures/broken.yml::config",
        "tests/test_x.py::TestA::test_config",
        "ooda-config.yml::build::other",
    ]
    assert count_nodeids(ids) == (2, 2, 2)
    assert collection_line(ids) == "ooda: 2 procedures, 2 scenarios in 2 config files"
    assert collection_line(["tests/test_x.py::test_a"]) is None


def test_file_excerpt_marks_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n")
    assert file_excerpt(path, 3, 4) == [
        "    1 | a: 1",
        "    2 | b: 2",
        "  > 3 | c: 3",
        "      |    ^",
        "    4 | d: 4",
        "    5 | e: 5",
    ]
    assert file_excerpt(path, 99) == []
    assert file_excerpt(tmp_path / "missing.yml", 1) == []


def test_format_error_relative_to_the_root(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "c.yml"
    path.parent.mkdir()
    path.write_text("procedures:\n  x: 1\n")
    error = ConfigError(
        "procedure x: expected a mapping", file=path, line=2, column=6, hint="see docs"
    )
    text = format_error(error, root=tmp_path)
    assert text.splitlines()[:4] == [
        "conf/c.yml:2:6: procedure x: expected a mapping",
        "  see docs",
        "",
        "    1 | procedures:",
    ]
    assert format_error(ConfigError("plain")) == "plain"


def test_template_error_shows_the_fragment_lines(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_text("one\n{{bad}}\nthree\n")
    (tmp_path / "c.yml").write_text("procedures:\n  p:\n    act:\n      - path: f.md\n")
    error = TemplateError(
        "procedure p: act[0]: template execution error: boom",
        kind="exec",
        template_line=2,
        template_file=tmp_path / "f.md",
        file=tmp_path / "c.yml",
        line=4,
        column=9,
        hint="in f.md:2",
    )
    text = format_error(error, root=tmp_path)
    assert "  in the template f.md:" in text
    assert "  > 2 | {{bad}}" in text


def _record(**fields: object) -> RunRecord:
    head = {"procedure": "build", "scenario": "x", "run": 1, "runs": 1}
    base: dict[str, object] = {
        "id": "r",
        "status": "success",
        "outcome": "success",
        "elapsed_s": 12.345,
    }
    for key, value in fields.items():
        (head if key in head else base)[key] = value
    return RunRecord(head=RecordHead(**head), **base)  # type: ignore[arg-type]


def _iterations(count: int) -> tuple[IterationEntry, ...]:
    return tuple(IterationEntry(n, "ok", None, 0, 1.0) for n in range(1, count + 1))


def test_live_line_includes_usage_when_known() -> None:
    record = _record(
        iterations=_iterations(2), usage=Usage(input_tokens=100, output_tokens=20, cost=0.0123)
    )
    assert live_line(record, "scenarios/build/x.yml") == (
        "build/x: success status=success iterations=2 time=12.3s tokens=100in/20out cost=$0.0123 "
        "recorded -> scenarios/build/x.yml"
    )
    minimal = _record(
        procedure="a",
        scenario="b",
        status="aborted",
        outcome="failure",
        elapsed_s=1.0,
        iterations=_iterations(3),
        problems=("status: expected success, got aborted",),
    )
    assert live_line(minimal) == (
        "a/b: failure status=aborted iterations=3 time=1.0s (1 expectation(s) not met)"
    )


def test_live_line_says_why_a_run_is_an_error() -> None:
    record = _record(
        status="aborted",
        outcome="error",
        error_reason="AI command not found: nope",
        elapsed_s=0.0,
    )
    assert live_line(record) == (
        "build/x: error status=aborted iterations=0 time=0.0s (error: AI command not found: nope)"
    )


def test_the_runs_of_a_repeated_scenario_count_once() -> None:
    ids = [
        "ooda-config.yml::build::live[a#1]",
        "ooda-config.yml::build::live[a#2]",
        "ooda-config.yml::build::live[a#10]",
        "ooda-config.yml::build::scenario[a]",
        # a name with "#" in it, not followed by a run number, stays itself
        "ooda-config.yml::build::live[b#c]",
    ]
    assert count_nodeids(ids) == (1, 2, 1)


def test_the_prompts_and_variants_of_a_trigger_set_count_as_its_one_scenario() -> None:
    ids = [
        "ooda-config.yml::greet::live[hi/should-1]",
        "ooda-config.yml::greet::live[hi/should-not-2#3]",
        "ooda-config.yml::greet::live[hi/should-1@one#2]",
        "ooda-config.yml::greet::live[hi/should-1@two]",
        "ooda-config.yml::greet::scenario[hi]",
    ]
    assert count_nodeids(ids) == (1, 1, 1)


def test_live_line_names_the_run_of_a_repeated_scenario() -> None:
    record = _record(
        run=3,
        runs=20,
        status="max-iters",
        outcome="failure",
        iterations=_iterations(5),
        elapsed_s=61.0,
        usage=None,
    )
    assert live_line(record) == "build/x 3/20: failure status=max-iters iterations=5 time=61.0s"


def test_the_iteration_table_lists_tool_calls_and_denials() -> None:
    from pytest_ooda.backends import ToolCall
    from pytest_ooda.loop import IterationRecord, LoopResult, TimingStats

    calls = tuple(ToolCall("Bash", f"step {n}", ok=True) for n in range(9))
    record = IterationRecord(
        number=1,
        prompt="p",
        prompt_sha256="0" * 64,
        output="done\n",
        exit_code=0,
        signal=None,
        outcome="ok",
        duration=0.1,
        tool_calls=(ToolCall("Edit", "a.py", ok=False, error="not read"), *calls),
        permission_denials=(ToolCall("Write", "/etc/x\x1b[2J", ok=False),),
    )
    result = LoopResult("p", "max-iters", (record,), TimingStats(), 0.1, 1, 3)
    lines = iteration_table(result)
    tools = next(line for line in lines if "tools:" in line)
    assert tools.split("tools: ")[1] == (
        "Edit a.py (failed) · " + " · ".join(f"Bash step {n}" for n in range(7)) + " · +2 more"
    )
    denied = next(line for line in lines if "denied:" in line)
    assert denied.endswith("denied: Write /etc/x\\x1b[2J (failed)")


def test_live_line_leads_with_the_verdict_not_the_loop_status() -> None:
    # The loop ended `success`, the run missed an expectation: the line says failure first.
    record = _record(
        status="success",
        outcome="failure",
        iterations=_iterations(1),
        problems=("file GREETING.md: expected to exist, but it is missing",),
    )
    assert live_line(record).startswith("build/x: failure status=success iterations=1")

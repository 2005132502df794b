"""Scenario files (scenario/store.py, schema.py, model.py): loading, located errors, round
trip, redaction, atomic writes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.errors import ScenarioError
from pytest_ooda.redact import REDACTED, redact
from pytest_ooda.scenario import (
    Expect,
    FileCheck,
    Scenario,
    ScenarioIteration,
    check_writable,
    load_scenario,
    load_scenario_text,
    save_scenario,
    sha256_text,
)
from pytest_ooda.scenario.model import AggregateExpect
from pytest_ooda.scenario.store import dump_scenario
from pytest_ooda.scenario.verify import ToolExpect

from .helpers import AGENT_SCENARIO, REPEAT_TEXT, SAMPLE, write


def test_load_full_scenario(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    scenario = load_scenario(path)
    assert scenario.name == "happy"
    assert scenario.label == "build/happy"
    assert scenario.context == ("focus on the auth module",)
    assert (scenario.max_iterations, scenario.failure_threshold) == (3, 2)
    assert scenario.workspace_dir() == (path.parent / "fixtures" / "repo").resolve()
    assert scenario.expect == Expect(
        status="success",
        iterations=2,
        signals=("none", "SUCCESS"),
        files=(
            FileCheck("AGENTS.md", exists=True),
            FileCheck("tmp.txt", exists=False),
            FileCheck("notes.md", exists=None, contains=("alpha", "beta")),
        ),
    )
    first, second = scenario.iterations
    assert first.prompt_sha256 == "ab" * 32
    assert first.duration_s == 41.2
    assert second.output == "No ready work.\n<promise>SUCCESS</promise>\n"
    assert dict(second.files) == {"AGENTS.md": "# agents\n", "old.txt": None}
    assert second.delay == 0.01


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("description: x\n", "1:1", "missing required key 'procedure'"),
        ("procedure: Build!\n", "1:12", "is not a procedure name"),
        ("procedure: b\nmax_iterations: two\n", "2:17", "max_iterations: expected an integer"),
        ("procedure: b\nmax_iterations: 0\n", "2:17", "expected an integer >= 1, got 0"),
        ("procedure: b\nmax_iterations: true\n", "2:17", "expected an integer, got a boolean"),
        ("procedure: b\nexpext: {}\n", "2:1", "unknown key 'expext' in scenario"),
        ("procedure: b\nexpect: {status: done}\n", "2:18", "expect.status: expected one of"),
        ("procedure: b\nexpect: {iterations: {min: 3, max: 1}}\n", "2:22", "min 3 is greater"),
        ("procedure: b\nexpect: {signals: [SUCCES]}\n", "2:20", "expected one of none, SUCCESS"),
        ("procedure: b\nexpect: {files: {a: maybe}}\n", "2:21", "expected one of exists, absent"),
        ("procedure: b\niterations: {output: x}\n", "2:13", "iterations: expected a list"),
        ("procedure: b\niterations:\n  - outptu: x\n", "3:5", "unknown key 'outptu'"),
        (
            "procedure: b\niterations:\n  - exit_code: '1'\n",
            "3:16",
            "exit_code: expected an integer",
        ),
        ("procedure: b\niterations:\n  - prompt_sha256: abc\n", "3:20", "64 lowercase hex"),
        ("procedure: b\niterations:\n  - {output: 1}\n", "3:14", "output: expected a string"),
        ("procedure: [b\n", "2:1", "invalid YAML"),
        ("- procedure: b\n", "1:1", "scenario file: expected a mapping, got a list"),
    ],
)
def test_located_errors(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    rendered = str(info.value)
    assert rendered.startswith(f"{path}:{where}")
    assert message in rendered


def test_unknown_key_suggests(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("procedure: b\nexpect:\n  statsu: success\n", path="s.yml")
    assert info.value.hint == "did you mean 'status'?"
    assert (info.value.line, info.value.column) == (3, 3)


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="duplicate"):
        load_scenario_text("procedure: b\nprocedure: c\n", path="s.yml")


def test_round_trip_preserves_everything(tmp_path: Path) -> None:
    tricky = [
        "plain",
        "two\nlines\n",
        "no trailing newline\nhere",
        "trailing spaces   \nand\ttabs\n",
        "ünïcödé ✓ and emoji 🚀\n",
        "windows\r\nline endings\r\n",
        "",
        "  leading spaces\n",
        "ends with blank lines\n\n\n",
        "control \x07 char",
        "yes",
        "123",
        "# not a comment\n- not a list\n",
        # YAML 1.1 line breaks other than \n: kept only when escaped.
        "next line\x85char\n",
        "line\u2028separator\n",
        "paragraph\u2029",
    ]
    scenario = Scenario(
        procedure="build",
        name="rt",
        description="round trip",
        context=("a", "b\nc"),
        max_iterations=4,
        expect=Expect(status="max-iters", min_iterations=1, max_iterations=4),
        iterations=(
            *(
                ScenarioIteration(output=text, exit_code=i - 2, prompt_sha256=sha256_text(text))
                for i, text in enumerate(tricky)
            ),
            ScenarioIteration(output="x", prompt="the\nprompt\n", files={"a.md": None}),
            ScenarioIteration(files={f"f{i}.txt": text for i, text in enumerate(tricky)}),
        ),
    )
    path = save_scenario(scenario, tmp_path / "rt.yml", env={})
    loaded = load_scenario(path)
    assert loaded == Scenario(**{**scenario.__dict__, "path": path})
    assert "|" in path.read_text()  # multi-line outputs are literal blocks


def test_redaction_of_planted_secrets(tmp_path: Path) -> None:
    env = {
        "MY_API_KEY": "k3y-value-123456",
        "GH_TOKEN": "tok-abcdefgh",
        "DB_PASSWORD": "hunter2hunter2",
        "CLIENT_SECRET": "s3cr3t-s3cr3t",
        "SHORT_KEY": "ab",
        "HOME": "/home/user-not-secret",
    }
    planted = (
        "key=k3y-value-123456 token=tok-abcdefgh pw=hunter2hunter2 other=s3cr3t-s3cr3t\n"
        "anthropic sk-ant-api03-AbCdEf0123456789xyzXYZ_-q and openai sk-proj-0123456789abcdefABCD\n"
        "github ghp_0123456789abcdefghijABCDEFGHIJ012345 and\n"
        "github_pat_11ABCDEFG0123456789_abcdef\n"
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig\n"
        "aws AKIAIOSFODNN7EXAMPLE ok\n"
        "kept: ab /home/user-not-secret sk-short\n"
    )
    scenario = Scenario(
        procedure="build",
        context=("use token tok-abcdefgh",),
        iterations=(ScenarioIteration(output=planted, prompt=planted, files={"f.txt": planted}),),
    )
    path = save_scenario(scenario, tmp_path / "s.yml", env=env)
    text = path.read_text()
    for secret in (
        "k3y-value-123456",
        "tok-abcdefgh",
        "hunter2hunter2",
        "s3cr3t-s3cr3t",
        "sk-ant-api03",
        "sk-proj-0123",
        "ghp_0123",
        "github_pat_11",
        "eyJhbGciOiJIUzI1NiJ9",
        "AKIAIOSFODNN7EXAMPLE",
    ):
        assert secret not in text, secret
    assert "Authorization: Bearer <redacted>" in text
    assert "kept: ab /home/user-not-secret sk-short" in text
    loaded = load_scenario(path)
    assert loaded.iterations[0].output.count(REDACTED) == 10
    assert loaded.context == ("use token <redacted>",)


def test_redact_uses_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "zzz-live-token-zzz")
    assert redact("x zzz-live-token-zzz y") == "x <redacted> y"


def test_crash_during_write_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, SAMPLE)
    before = path.read_text()
    scenario = load_scenario(path)
    bigger = Scenario(**{**scenario.__dict__, "iterations": scenario.iterations * 50})

    def crash(fd: int) -> None:
        raise OSError(5, "simulated crash: disk went away")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(ScenarioError, match="cannot write scenario file: simulated crash"):
        save_scenario(bigger, path, env={})
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["happy.yml"]


def test_killed_writer_process_keeps_old_file(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    before = path.read_text()
    # A child process starts rewriting the file and is SIGKILLed before it can finish.
    code = textwrap.dedent(
        f"""
        import os, sys, time
        from pytest_ooda import scenario as sc
        s = sc.load_scenario({str(path)!r})
        s = sc.Scenario(**{{**s.__dict__, "iterations": s.iterations * 100}})
        real_replace = os.replace
        def stall(*args):
            print("writing", flush=True)
            time.sleep(60)
        os.replace = stall
        sc.save_scenario(s, env={{}})
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=Path(__file__).parents[3]
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"writing\n"
    child.kill()
    child.wait()
    assert path.read_text() == before
    assert load_scenario(path).iterations[1].output.endswith("<promise>SUCCESS</promise>\n")


def test_save_into_unwritable_place_is_a_scenario_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    scenario = load_scenario_text(SAMPLE)
    with pytest.raises(ScenarioError) as info:
        save_scenario(scenario, tmp_path / "afile" / "s.yml", env={})
    assert str(info.value).startswith(f"{tmp_path}/afile/s.yml: cannot write scenario file: ")


def test_check_writable(tmp_path: Path) -> None:
    check_writable(tmp_path / "new" / "s.yml")
    assert (tmp_path / "new").is_dir()
    assert list((tmp_path / "new").iterdir()) == []
    with pytest.raises(ScenarioError, match="it is a directory"):
        check_writable(tmp_path / "new")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ScenarioError, match="afile is not a directory"):
        check_writable(tmp_path / "afile" / "s.yml")


def test_the_new_keys_load_and_write_back_the_same(tmp_path: Path) -> None:
    scenario = load_scenario_text(AGENT_SCENARIO, path=tmp_path / "s.yml")
    assert (scenario.max_cost, scenario.max_tokens) == (0.5, 90000)
    assert scenario.expect is not None
    assert scenario.expect.tools == ToolExpect(
        ("Write", "Bash"), ("WebFetch",), ("pytest", "^python3? "), 5
    )
    assert [c.run for c in scenario.expect.commands][1:] == ["test -f hello.py", "true"]
    assert scenario.expect.commands[1].timeout == 20
    (it,) = scenario.iterations
    assert it.usage == Usage(1000, 100, 0.0532, 40, 0)
    assert it.tool_calls is not None
    assert it.tool_calls[2] == ToolCall("Bash", "rm -rf /", False, "permission denied")
    assert scenario.recorded is not None
    assert scenario.recorded.cost == 0.0532
    again = load_scenario_text(dump_scenario(scenario), path=tmp_path / "s.yml")
    assert again == scenario


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("expect:\n  tools: {calld: [Bash]}\n", "2:11", "unknown key 'calld' in expect.tools"),
        ("expect:\n  tools: {bash_matches: '(unclosed'}\n", "2:25", "is not a regular expr"),
        (
            "expect:\n  tools: {called: [Bash], not_called: [Bash]}\n",
            "2:10",
            "Bash cannot be both called and not_called",
        ),
        ("expect:\n  tools: {max_calls: -1}\n", "2:22", "expected an integer >= 0"),
        ("expect:\n  tools: {called: ['']}\n", "2:20", "called[0]: a tool name cannot be empty"),
        ("expect:\n  commands: {run: x}\n", "2:13", "expect.commands: expected a list"),
        ("expect:\n  commands:\n    - exit_code: 1\n", "3:7", "expect.commands[0]: missing 'run'"),
        ("expect:\n  commands:\n    - run: x\n      timeout: 0\n", "4:16", "expected a number > 0"),
        ("expect:\n  commands:\n    - run: '  '\n", "3:12", "the command is empty"),
        ("expect:\n  commands: ['']\n", "2:14", "the command is empty"),
        ("max_cost: 0\n", "1:11", "max_cost: expected a number > 0"),
        ("max_tokens: 0.5\n", "1:13", "max_tokens: expected an integer"),
        ("recorded: {reason: x}\n", "1:11", "recorded: missing 'status'"),
        ("recorded: {status: done}\n", "1:20", "recorded.status: expected one of success"),
        (
            "iterations:\n  - usage: {input: 3}\n",
            "2:13",
            "unknown key 'input' in iterations[0].usage",
        ),
        (
            "iterations:\n  - tool_calls: [{summary: x}]\n",
            "2:18",
            "iterations[0].tool_calls[0]: missing 'name'",
        ),
        ("iterations:\n  - tool_calls: {name: x}\n", "2:17", "tool_calls: expected a list"),
        ("iterations:\n  - turns: many\n", "2:12", "iterations[0].turns: expected an integer"),
        (
            "iterations:\n  - tool_calls: [{name: x, ok: maybe}]\n",
            "2:32",
            "tool_calls[0].ok: expected true or false",
        ),
    ],
)
def test_mistakes_in_the_new_keys_are_located(body: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text("procedure: build\n" + body, path="s.yml")
    line, column = where.split(":")
    error = info.value
    assert (error.file, error.line, error.column) == ("s.yml", int(line) + 1, int(column)), error
    assert message in error.message


def test_repeat_and_aggregate_expect_parsed_and_written_back_as_written() -> None:
    scenario = load_scenario_text(REPEAT_TEXT, path="s.yml")
    assert scenario.repeat == 20
    assert scenario.expect is not None
    assert scenario.expect.status == "success"
    assert scenario.expect.aggregate == AggregateExpect(0.8, 3.0, 0.25)
    assert yaml.safe_load(dump_scenario(scenario)) == yaml.safe_load(REPEAT_TEXT)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("repeat: 0", "2:9", "repeat: expected an integer >= 1, got 0"),
        ("repeat: 10001", "2:9", "repeat: at most 10000 runs, got 10001"),
        ("repeat: '3'", "2:9", "repeat: expected an integer, got a string ('3')"),
        ("expect: {success_rate: 0.8}", "2:24", "expect.success_rate: expected a mapping like"),
        ("expect: {success_rate: {}}", "2:24", "expect.success_rate: give min"),
        ("expect: {success_rate: {min: 80}}", "2:30", "expected a rate from 0 to 1, got 80"),
        ("expect: {success_rate: {max: 1}}", "2:25", "unknown key 'max' in expect.success_rate"),
        ("expect: {max_mean_iterations: 0}", "2:31", "a run has at least 1 iteration, got 0"),
        ("expect: {max_mean_cost: -1}", "2:25", "expect.max_mean_cost: expected a number >= 0"),
        ("expect: {success_ratio: 1}", "2:10", "unknown key 'success_ratio' in expect"),
    ],
)
def test_mistakes_in_repeat_and_aggregate_expect_are_located(
    text: str, where: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario_text(f"procedure: build\n{text}\n", path="s.yml")
    line, column = (int(part) for part in where.split(":"))
    assert (raised.value.line, raised.value.column) == (line, column)
    assert message in raised.value.message


def test_the_hint_for_a_percentage_success_rate() -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario_text("procedure: build\nexpect: {success_rate: {min: 80}}\n", path="s.yml")
    assert raised.value.hint == "for 80% write 0.8"

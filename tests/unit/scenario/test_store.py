"""Writing scenario files (scenario/store.py): what is loaded is written back the same,
secrets redacted, atomically, never into a place that cannot hold it. Loading and its
located errors are test_schema.py's, test_expect_schema.py's and
test_recording_schema.py's."""

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


def test_repeat_and_aggregate_expect_parsed_and_written_back_as_written() -> None:
    scenario = load_scenario_text(REPEAT_TEXT, path="s.yml")
    assert scenario.repeat == 20
    assert scenario.expect is not None
    assert scenario.expect.status == "success"
    assert scenario.expect.aggregate == AggregateExpect(0.8, 3.0, 0.25)
    assert yaml.safe_load(dump_scenario(scenario)) == yaml.safe_load(REPEAT_TEXT)

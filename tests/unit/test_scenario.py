"""Scenario files: validation, round trip, redaction, atomic writes, record modes, drift."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_ooda.backends.replay import script
from pytest_ooda.config import Config, load_config
from pytest_ooda.errors import ScenarioError
from pytest_ooda.loop import LoopResult, run_procedure
from pytest_ooda.redact import REDACTED, redact
from pytest_ooda.scenario import (
    Expect,
    FileCheck,
    Recorder,
    Scenario,
    ScenarioIteration,
    assert_expectations,
    check_drift,
    check_writable,
    detect_drift,
    load_scenario,
    load_scenario_text,
    needs_recording,
    save_scenario,
    scenario_from_result,
    sha256_text,
)

SAMPLE = """\
procedure: build
description: implements one task, then finds no ready work
context: "focus on the auth module"
max_iterations: 3
failure_threshold: 2
workspace: fixtures/repo
expect:
  status: success
  iterations: 2
  signals: [none, SUCCESS]
  files: {AGENTS.md: exists, tmp.txt: absent, notes.md: {contains: [alpha, beta]}}
iterations:
  - output: "Implemented task 1\\n"
    exit_code: 0
    prompt_sha256: %s
    duration_s: 41.2
  - output: |
      No ready work.
      <promise>SUCCESS</promise>
    exit_code: 0
    delay: 0.01
    files: {AGENTS.md: "# agents\\n", old.txt: null}
""" % ("ab" * 32)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    fragment = tmp_path / "act.md"
    fragment.write_text("Do the work.\nCarefully.")
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        "procedures:\n  build:\n    observe:\n      - path: observe.md\n"
        "    act:\n      - path: act.md\n"
    )
    (tmp_path / "observe.md").write_text("Look around.")
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


def write(tmp_path: Path, text: str, name: str = "happy.yml") -> Path:
    path = tmp_path / "scenarios" / "build" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- loading


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


# --------------------------------------------------------------------------- round trip


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


# --------------------------------------------------------------------------- redaction


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


# --------------------------------------------------------------------------- atomic writes


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
        [sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"writing\n"
    child.kill()
    child.wait()
    assert path.read_text() == before
    assert load_scenario(path).iterations[1].output.endswith("<promise>SUCCESS</promise>\n")


# --------------------------------------------------------------------------- record modes


def _result(config: Config, outputs: list[str], *, max_iterations: int = 5) -> LoopResult:
    return run_procedure(config, "build", backend=script(outputs), max_iterations=max_iterations)


@pytest.mark.parametrize(
    ("mode", "has_iterations", "drifted", "expected"),
    [
        ("none", False, False, False),
        ("none", True, True, False),
        ("once", False, False, True),
        ("once", True, False, False),
        ("once", True, True, False),
        ("new", False, False, True),
        ("new", True, False, False),
        ("new", True, True, True),
        ("all", True, False, True),
        ("all", False, False, True),
    ],
)
def test_record_modes(mode: str, has_iterations: bool, drifted: bool, expected: bool) -> None:
    its = (ScenarioIteration(output="x"),) if has_iterations else ()
    scenario = Scenario(procedure="build", iterations=its)
    assert needs_recording(mode, scenario, drifted=drifted) is expected
    assert Recorder(scenario, mode).wanted(drifted=drifted) is expected


def test_unknown_record_mode() -> None:
    with pytest.raises(ScenarioError, match="expected one of: none, once, new, all"):
        needs_recording("sometimes", Scenario(procedure="build"))


def test_recorder_writes_new_recording(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "scenarios" / "build" / "new.yml"
    scenario = Scenario(procedure="build", name="new", path=path, max_iterations=3)
    result = _result(config, ["working", "<promise>SUCCESS</promise>"], max_iterations=3)
    assert Recorder(scenario, "once").commit(result) == path
    loaded = load_scenario(path)
    assert loaded.expect == Expect(status="success", iterations=2)
    assert [it.output for it in loaded.iterations] == ["working", "<promise>SUCCESS</promise>"]
    assert [it.prompt_sha256 for it in loaded.iterations] == [
        r.prompt_sha256 for r in result.records
    ]
    assert loaded.iterations[0].prompt == result.prompts[0]
    assert loaded.iterations[1].prompt is None
    # The recording replays to the same outcome.
    replayed = run_procedure(config, "build", backend=loaded.replay_backend(), max_iterations=3)
    replayed.assert_status("success", iterations=2)
    assert detect_drift(loaded, replayed.prompts) == []


def test_failed_live_run_never_replaces_a_recording(config: Config, tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    before = path.read_text()
    scenario = load_scenario(path)
    result = _result(config, ["a", "b", "c"], max_iterations=3)
    recorder = Recorder(scenario, "all")
    failures = scenario.check(result)
    assert failures
    assert recorder.commit(result, failures) is None
    assert recorder.skipped_reason is not None
    assert path.read_text() == before


def test_interrupted_run_is_not_recorded(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "x.yml"
    scenario = Scenario(procedure="build", path=path)
    result = _result(config, ["a"], max_iterations=1)
    interrupted = LoopResult(**{**result.__dict__, "status": "interrupted"})
    assert Recorder(scenario, "all").commit(interrupted) is None
    assert not path.exists()


def test_scenario_from_result_keeps_hand_written_expect(config: Config) -> None:
    scenario = Scenario(procedure="build", expect=Expect(status="success"))
    result = _result(config, ["<promise>SUCCESS</promise>"])
    assert scenario_from_result(scenario, result).expect == Expect(status="success")
    assert scenario_from_result(scenario, result, keep_expect=False).expect == Expect(
        status="success", iterations=1
    )


# --------------------------------------------------------------------------- expectations


def test_expect_checks(config: Config, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("hello alpha")
    (tmp_path / "tmp.txt").write_text("")
    scenario = load_scenario_text(
        "procedure: build\nexpect:\n  status: success\n  iterations: {min: 2, max: 3}\n"
        "  signals: [none, SUCCESS]\n"
        "  files: {AGENTS.md: {contains: [alpha, beta]}, tmp.txt: absent, gone.md: exists}\n"
    )
    result = _result(config, ["<promise>SUCCESS</promise>"], max_iterations=3)
    problems = scenario.check(result, tmp_path)
    assert problems == [
        "expected 2..3 iterations, ran 1",
        "expected signals ['none', 'SUCCESS'], got ['SUCCESS']",
        "file AGENTS.md: expected to contain 'beta'",
        "file tmp.txt: expected to be absent, but it exists",
        "file gone.md: expected to exist, but it is missing",
    ]
    with pytest.raises(AssertionError) as info:
        assert_expectations(scenario, result, tmp_path)
    assert "5 expectation(s) not met" in str(info.value)
    assert "iteration 1: success" in str(info.value)


def test_expect_met(config: Config, tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SAMPLE))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("alpha beta")
    result = run_procedure(
        config, "build", backend=scenario.replay_backend(), max_iterations=3, workdir=workspace
    )
    assert scenario.check(result, workspace) == []
    assert (workspace / "AGENTS.md").read_text() == "# agents\n"


def test_replay_running_out_names_the_file(config: Config, tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SAMPLE.replace("<promise>SUCCESS</promise>", "")))
    with pytest.raises(ScenarioError) as info:
        run_procedure(
            config,
            "build",
            backend=scenario.replay_backend(),
            max_iterations=3,
            workdir=tmp_path,
        )
    assert str(info.value).startswith(
        f"{scenario.path}: scenario 'build/happy' has 2 iterations, loop asked for a 3rd"
    )


# --------------------------------------------------------------------------- drift


def test_drift_diff_names_changed_fragment(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _result(config, ["ok", "<promise>SUCCESS</promise>"], max_iterations=2)
    Recorder(Scenario(procedure="build", path=path, max_iterations=2), "once").commit(recorded)
    scenario = load_scenario(path)

    (tmp_path / "act.md").write_text("Do the work.\nRecklessly.")
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=2)
    drifts = check_drift(scenario, replayed, config)
    assert [d.iteration for d in drifts] == [1, 2]
    first = drifts[0]
    assert first.changed_sources == ("act.md",)
    assert first.diff is not None
    assert "-Carefully.\n+Recklessly.\n" in first.diff
    assert "recorded prompt (rec.yml, iteration 1)" in first.diff
    assert drifts[1].diff is None
    text = first.describe()
    assert "changed fragments: act.md" in text
    assert "prompt of iteration 1 drifted" in text


def test_no_drift_when_prompts_match(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _result(config, ["<promise>SUCCESS</promise>"], max_iterations=2)
    Recorder(Scenario(procedure="build", path=path, max_iterations=2), "all").commit(recorded)
    scenario = load_scenario(path)
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=2)
    assert check_drift(scenario, replayed, config) == []


def test_deleted_lines_blame_neighbouring_fragment(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "rec.yml"
    recorded = _result(config, ["<promise>SUCCESS</promise>"], max_iterations=1)
    Recorder(Scenario(procedure="build", path=path), "all").commit(recorded)
    (tmp_path / "observe.md").write_text("")
    (tmp_path / "observe.md").write_text("Look around.\nAnd more.")
    scenario = load_scenario(path)
    replayed = run_procedure(config, "build", backend=scenario.replay_backend(), max_iterations=1)
    (drift,) = check_drift(scenario, replayed, config)
    assert drift.changed_sources == ("observe.md",)


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

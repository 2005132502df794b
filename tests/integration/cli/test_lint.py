"""``ooda lint``: output lines, summary, formats, rule selection and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.cli import main

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """\
ai_cmd_aliases:
  fast: "claude -p"
procedures:
  review:
    observe:
      - path: prompts/files.md
        parameters:
          kind: spec
          pathz: [a]
    orient: []
    decide:
      - content: "If the diff is missing, output <promise>FAILURE</promise>."
    act:
      - content: "Write comments."
"""

EXPECTED = [
    "ooda-config.yml:2:3: OODA402 info: alias 'fast' is defined but no loop or procedure uses it",
    "ooda-config.yml:4:3: OODA301 error: procedure review: no fragment says when to emit "
    "<promise>SUCCESS</promise>",
    "ooda-config.yml:6:9: OODA201 warning: procedure review: observe[0]: prompts/files.md "
    "(line 2) uses .paths but the action does not supply it (renders <no value>)",
    "ooda-config.yml:9:11: OODA202 warning: procedure review: observe[0]: parameter 'pathz' "
    "is never used by prompts/files.md",
    "ooda-config.yml:10:5: OODA101 warning: procedure review: phase orient is empty",
    "prompts/old.md:1:1: OODA401 info: fragment file old.md is not used by any procedure",
    "6 findings: 1 error, 3 warnings, 2 infos (1 procedure checked)",
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "files.md").write_text(
        "Read the {{.kind}} files:\n{{range .paths}}- {{.}}\n{{end}}\n", encoding="utf-8"
    )
    (tmp_path / "prompts" / "old.md").write_text("Old.\n", encoding="utf-8")
    (tmp_path / "ooda-config.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(tmp_path / "no-global"))
    return tmp_path


def lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_and_exit_code_one_on_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = lint(capsys)
    assert out.splitlines() == EXPECTED
    assert code == 1


def test_exit_zero_when_only_warnings_remain(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = lint(capsys, "--ignore", "OODA301")
    assert code == 0
    assert out.splitlines()[-1] == "5 findings: 0 errors, 3 warnings, 2 infos (1 procedure checked)"


def test_severity_override_on_the_command_line(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = lint(capsys, "--severity", "OODA301=warning,OODA402=off", "--severity",
                        "OODA202=error")  # fmt: skip
    assert code == 1
    assert "OODA301 warning" in out
    assert "OODA402" not in out
    assert "OODA202 error" in out


def test_select_prefix_and_name(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(capsys, "--select", "OODA2", "--select", "unused-alias")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == [
        "OODA402",
        "OODA201",
        "OODA202",
    ]
    assert code == 0


def test_json_format(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(capsys, "--format", "json", "--select", "OODA301")
    data = json.loads(out)
    assert code == 1
    assert data["summary"] == {
        "error": 1,
        "warning": 0,
        "info": 0,
        "procedures": 1,
        "scenarios": 0,
        "exit_code": 1,
    }
    assert data["findings"][0]["file"] == "ooda-config.yml"
    assert data["findings"][0]["name"] == "no-success-signal"


def test_bad_options_are_usage_errors(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = lint(capsys, "--select", "OODA9")
    assert (code, out) == (1, "")
    assert "--select: unknown lint rule or prefix 'OODA9'" in err
    code, _, err = lint(capsys, "--severity", "OODA201=loud")
    assert code == 1
    assert "invalid severity 'loud'" in err
    code, _, err = lint(capsys, "--format", "xml")
    assert code == 1
    assert "invalid choice: 'xml'" in err


def test_config_that_does_not_load(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "broken.yml").write_text("loop: 3\nprocedures: {}\n", encoding="utf-8")
    code, out, _ = lint(capsys, "--config", "broken.yml")
    assert code == 1
    first, summary = out.splitlines()
    assert first.startswith("broken.yml:1:7: OODA001 error: loop: expected a mapping")
    assert summary == "1 finding: 1 error, 0 warnings, 0 infos (0 procedures checked)"


def test_a_broken_procedure_is_its_own_finding(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    signals = "Say <promise>SUCCESS</promise> when done, <promise>FAILURE</promise> if blocked."
    (workspace / "broken.yml").write_text(
        f"procedures:\n  x:\n    observe: [{{path: nope.md}}]\n"
        f"  fine:\n    act: [{{content: '{signals}'}}]\n",
        encoding="utf-8",
    )
    code, out, _ = lint(capsys, "--config", "broken.yml")
    assert code == 1
    *findings, summary = out.splitlines()
    assert findings[0].startswith(
        "broken.yml:3:16: OODA001 error: procedure x: observe[0]: fragment file not found"
    )
    # The other procedure is still linted: its empty phases are reported.
    assert findings[1:] == [
        f"broken.yml:4:3: OODA101 warning: procedure fine: phase {phase} is empty"
        for phase in ("decide", "observe", "orient")  # sorted by message at one position
    ]
    assert summary == "4 findings: 1 error, 3 warnings, 0 infos (2 procedures checked)"


def test_missing_config_file(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = lint(capsys, "--config", "absent.yml")
    assert code == 2
    assert "config file not found: absent.yml" in err


def test_no_workspace_config_lints_the_builtins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = lint(capsys)
    assert (code, out) == (0, "no findings (16 procedures checked)\n")


def test_builtin_flag_with_a_workspace_config(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = lint(capsys, "--builtin", "--select", "OODA3")
    assert out.splitlines()[-1] == "1 finding: 1 error, 0 warnings, 0 infos (17 procedures checked)"
    assert code == 1


def test_real_command_line(workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "lint", "--config", "ooda-config.yml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == EXPECTED
    clean = textwrap.dedent(
        """\
        procedures:
          ok:
            act:
              - content: "Done: <promise>SUCCESS</promise>. Stuck: <promise>FAILURE</promise>"
            observe: [{content: "Look."}]
            orient: [{content: "Think."}]
            decide: [{content: "Choose."}]
        """
    )
    (workspace / "clean.yml").write_text(clean, encoding="utf-8")
    ok = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "lint", "-c", "clean.yml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (ok.returncode, ok.stdout) == (0, "no findings (1 procedure checked)\n")


GREET = """\
procedures:
  greet:
    act:
      - content: "Write GREETING.md, then output <promise>SUCCESS</promise>."
"""


def scenario_project(root: Path) -> None:
    (root / "ooda-config.yml").write_text(GREET, encoding="utf-8")
    folder = root / "scenarios" / "greet"
    folder.mkdir(parents=True)
    (folder / "good.yml").write_text("procedure: greet\niterations: []\n", encoding="utf-8")
    (folder / "three.yml").write_text(
        "procedure: greet\nexpect:\n  status: sucess\n  files: {G.md: exits}\n"
        "max_iterations: -1\niterations: []\n",
        encoding="utf-8",
    )
    (folder / "typo.yml").write_text("procedure: gret\niterations: []\n", encoding="utf-8")
    (root / "scenarios" / "gret").mkdir()
    (root / "scenarios" / "gret" / "x.yml").write_text("procedure: gret\n", encoding="utf-8")
    # Beside the folders, not in one: it would never run.
    (root / "scenarios" / "loose.yml").write_text("procedure: greet\n", encoding="utf-8")


def test_scenarios_every_mistake_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, _ = lint(capsys, "--select", "OODA004")
    assert out.splitlines() == [
        "scenarios/greet/three.yml:3:11: OODA004 error: expect.status: expected one of "
        "success, max-iters, aborted, interrupted, got 'sucess'",
        "  did you mean 'success'?",
        "scenarios/greet/three.yml:4:17: OODA004 error: expect.files['G.md']: expected one of "
        "exists, absent, got 'exits'",
        "  did you mean 'exists'?",
        "scenarios/greet/three.yml:5:17: OODA004 error: max_iterations: expected an integer "
        ">= 1, got -1",
        "scenarios/greet/typo.yml:1:12: OODA004 error: procedure: no procedure is named "
        "'gret' (the file is in the greet/ scenario folder)",
        "  did you mean 'greet'?",
        "scenarios/gret/x.yml:1:1: OODA004 error: gret/ holds 1 scenario file(s) that never "
        "run: no procedure is named 'gret'",
        "  did you mean 'greet'? (rename the folder)",
        "scenarios/loose.yml:1:1: OODA004 error: scenarios/loose.yml never runs: a scenario "
        "file belongs in the folder of the procedure it tests, not beside the folders",
        "  move it to scenarios/<procedure>/loose.yml",
        "6 findings: 6 errors, 0 warnings, 0 infos (1 procedure, 3 scenarios checked)",
    ]
    assert code == 1
    # Named files: only those are read.
    code, out, _ = lint(capsys, "--select", "OODA0", "scenarios/greet/good.yml")
    assert out.splitlines() == ["no findings (1 procedure, 1 scenario checked)"]
    assert code == 0


def test_a_yaml_indentation_slip_names_the_line_that_slipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ooda-config.yml").write_text(
        textwrap.dedent(
            """\
            procedures:
              greet:
                act:
                  - content: "<promise>SUCCESS</promise>"
              other:
                  display: Other
                act:
                  - content: "<promise>SUCCESS</promise>"
            """
        ),
        encoding="utf-8",
    )
    code, out, _ = lint(capsys)
    # PyYAML stops at line 7; the key out of step is line 6's.
    assert out.splitlines()[:2] == [
        "ooda-config.yml:6:7: OODA001 error: invalid YAML: inconsistent indentation: line 6 "
        "is indented 6 spaces under line 5 (2), where this file indents by 2; line 7 below "
        "it, at 4, is indented as expected",
        "  YAML cannot be read past this mistake: nothing in the file loaded until it is fixed",
    ]
    assert code == 1


def test_every_mistake_of_a_procedure_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  greet:\n    iteration_mode: unlimted\n    default_max_iterations: -2\n"
        "    obsrve: [{content: x}]\n    act: [{path: missing.md}]\n",
        encoding="utf-8",
    )
    code, out, _ = lint(capsys, "--select", "OODA001")
    found = [line for line in out.splitlines() if "OODA001" in line]
    assert [line.split(": OODA001")[0] for line in found] == [
        "ooda-config.yml:3:21",
        "ooda-config.yml:4:29",
        "ooda-config.yml:5:5",
        "ooda-config.yml:6:12",
    ]
    assert "did you mean 'unlimited'?" in out
    assert "did you mean 'observe'?" in out
    assert code == 1

"""``ooda`` on rooda configs: ``--prompt-format``, the blast radius, provenance."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.cli import main

HERE = Path(__file__).resolve().parent
GOLDENS = json.loads((HERE / "goldens.json").read_text(encoding="utf-8"))["runs"]
RUNS = json.loads((HERE / "runs.json").read_text(encoding="utf-8"))


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """Copy a corpus case into a temp dir and work there, with no global config."""

    def use(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(HERE / "corpus" / name, target)
        monkeypatch.chdir(target)
        return target

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("OODA_CONFIG_HOME", "ROODA_CONFIG_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    return use


def run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out.decode("utf-8"), err.decode("utf-8")


def test_show_in_rooda_format_is_roodas_dry_run(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    case("docs_example")  # type: ignore[operator]
    code, out, _ = run(
        capsysbinary, "show", "custom-procedure", "--prompt-format", "rooda",
        "--context", "Fix the flaky test in tests/test_io.py",
    )  # fmt: skip
    assert code == 0
    assert out == GOLDENS["docs_example/custom-procedure/context"]["prompt"]
    code, out, _ = run(capsysbinary, "show", "custom-procedure")
    assert out.startswith("═" * 63 + "\nOODA PROCEDURE EXECUTION\n")


def test_dry_run_in_rooda_format_is_what_rooda_pipes_to_the_ai(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    case("docs_example")  # type: ignore[operator]
    code, out, err = run(
        capsysbinary, "run", "custom-procedure", "--dry-run", "--prompt-format", "rooda",
        "--ai-cmd", "true", "--max-iterations", "3",
    )  # fmt: skip
    assert code == 0
    assert out == GOLDENS["docs_example/custom-procedure/iteration"]["prompt"]
    assert re.search(r"^  prompt_format +rooda +cli \(prompt_format\)$", err, re.MULTILINE)


def test_loop_prompt_format_in_the_file_is_used(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = case("no_display")  # type: ignore[operator]
    config = root / "rooda-config.yml"
    config.write_text("loop:\n  prompt_format: rooda\n" + config.read_text())
    code, out, _ = run(capsysbinary, "show", "bare")
    assert (code, out) == (0, GOLDENS["no_display/bare"]["prompt"])
    # The command line beats the file.
    code, out, _ = run(capsysbinary, "show", "bare", "--prompt-format", "ooda")
    assert "OODA PROCEDURE EXECUTION" in out
    code, out, _ = run(capsysbinary, "show", "bare", "--provenance")
    assert "  prompt_format         rooda" in out
    assert "workspace (rooda-config.yml:2)" in out
    assert "  config file rooda-config.yml (rooda's name for ooda-config.yml)" in out


def test_a_broken_procedure_fails_only_itself(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    case("blast_radius")  # type: ignore[operator]
    code, out, _ = run(capsysbinary, "show", "working", "--prompt-format", "rooda")
    assert (code, out) == (0, GOLDENS["blast_radius/working"]["prompt"])
    code, out, err = run(capsysbinary, "run", "working", "--dry-run", "--ai-cmd", "true")
    assert code == 0
    assert "This fragment exists." in out
    code, out, err = run(capsysbinary, "show", "broken")
    assert code == 2
    assert out == ""
    assert err.startswith(
        "ooda: error: rooda-config.yml:6:9: procedure broken: observe[0]: "
        "fragment file not found: prompts/missing.md"
    )
    code, out, err = run(capsysbinary, "list")
    assert code == 0
    listed = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines()}
    assert listed["broken"] == "(does not load)"
    assert listed["working"] == "Working"
    assert "build" in listed
    assert "warning: procedure broken does not load: rooda-config.yml:6:9:" in err
    code, out, _ = run(capsysbinary, "lint")
    assert code == 1
    assert out.splitlines()[0].startswith(
        "rooda-config.yml:6:9: OODA001 error: procedure broken: observe[0]: fragment file"
    )


def test_unknown_keys_are_warned_about_and_the_file_runs(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    case("unknown_keys")  # type: ignore[operator]
    code, out, err = run(capsysbinary, "show", "audit", "--prompt-format", "rooda")
    assert (code, out) == (0, GOLDENS["unknown_keys/audit"]["prompt"])
    assert "warning: rooda-config.yml:6:3: loop: unknown key 'log_format' (ignored" in err


def test_prompt_format_choices_are_checked(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    case("no_display")  # type: ignore[operator]
    code, _, err = run(capsysbinary, "show", "bare", "--prompt-format", "go")
    assert code == 1
    assert "invalid choice: 'go' (choose from 'ooda', 'rooda', 'raw')" in err


def test_roodas_documented_example_without_its_fragment_files(
    case: object, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """rooda's docs/configuration.md example names prompts/*.md files a reader does not
    have: `build` still shows (as `rooda run build --dry-run` does), the custom one fails."""
    root = case("docs_example")  # type: ignore[operator]
    shutil.rmtree(root / "prompts")
    code, out, _ = run(capsysbinary, "show", "build")
    assert code == 0
    assert "Procedure: Build" in out
    code, _, err = run(capsysbinary, "show", "custom-procedure")
    assert code == 2
    assert err.startswith(
        "ooda: error: rooda-config.yml:28:9: procedure custom-procedure: observe[0]: "
        "fragment file not found: prompts/observe_custom.md"
    )


@pytest.mark.parametrize("entry", RUNS, ids=[entry["id"] for entry in RUNS])
def test_ooda_run_runs_what_rooda_runs(
    case: object, capsysbinary: pytest.CaptureFixture[bytes], entry: dict[str, Any]
) -> None:
    """Each corpus run rooda made a prompt for, ``ooda run --dry-run`` makes too: lint
    advice such as OODA301 (none of these configs says when to emit SUCCESS; rooda's
    preamble explains the signal, as ours does) is a warning in a run, not a refusal.
    What rooda refused, ooda refuses."""
    case(entry["case"])  # type: ignore[operator]
    argv = ["run", entry["procedure"], "--dry-run", "--prompt-format", "rooda"]
    argv += ["--ai-cmd", "true"]
    for value in entry.get("context", []):
        argv += ["--context", value]
    if entry.get("iteration"):
        limit = entry["max_iterations"]
        argv += ["--unlimited"] if limit is None else ["--max-iterations", str(limit)]
    code, out, err = run(capsysbinary, *argv)
    golden = GOLDENS[entry["id"]]
    if "error" in golden:
        assert code == 2
        return
    assert code == 0, err
    assert "the run was not started" not in err
    if not entry.get("iteration"):
        # rooda's dry run has no Iteration line; ours shows iteration 1's prompt.
        out = re.sub(r"^Iteration: 1 of \d+\n\n", "", out, count=1, flags=re.MULTILINE)
    assert out == golden["prompt"]

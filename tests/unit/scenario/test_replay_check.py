"""A scenario file replayed and checked as a test (scenario/replay_check.py) and the
failure report it shares with live runs (scenario/report.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.errors import DriftWarning
from pytest_ooda.scenario import check_replay

from .helpers import write

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config

PASSING = """\
procedure: build
expect: {status: success, iterations: 1}
iterations:
  - output: "<promise>SUCCESS</promise>"
"""


def test_a_scenario_that_meets_its_expectations_passes_quietly(
    config: Config, tmp_path: Path
) -> None:
    path = write(tmp_path, PASSING)
    checked = check_replay(config, "build", path, drift="fail", root=tmp_path)
    assert (checked.failure, checked.warnings) == (None, ())
    assert checked.scenario.label == "build/happy"


def test_a_missed_expectation_is_the_failure_report(config: Config, tmp_path: Path) -> None:
    path = write(tmp_path, PASSING.replace("iterations: 1}", "iterations: 3}"))
    checked = check_replay(config, "build", path, drift="fail", root=tmp_path)
    assert checked.failure is not None
    first, problem = checked.failure.splitlines()[:2]
    assert first == (
        "scenario build/happy (scenarios/build/happy.yml) replay: status=success, 1 iteration(s)"
    )
    assert problem == "  - expected 3 iteration(s), ran 1"


def _drifting(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        PASSING.replace(
            '"<promise>SUCCESS</promise>"',
            f'"<promise>SUCCESS</promise>"\n    prompt_sha256: {"ab" * 32}',
        ),
    )


def test_a_drift_warns_at_the_file_or_fails_with_the_rerecord_hint(
    config: Config, tmp_path: Path
) -> None:
    path = _drifting(tmp_path)
    warned = check_replay(config, "build", path, drift="warn", root=tmp_path)
    assert warned.failure is None
    assert [type(w) for w in warned.warnings] == [DriftWarning]
    assert warned.warnings[0].file == str(path)
    assert warned.warnings[0].message.startswith("scenario build/happy: ")
    failed = check_replay(
        config,
        "build",
        path,
        drift="fail",
        root=tmp_path,
        rerecord_hint=lambda scenario: f"  re-record {scenario.label} like so",
    )
    assert failed.warnings == ()
    assert failed.failure is not None
    assert failed.failure.splitlines()[-1] == "  re-record build/happy like so"
    ignored = check_replay(config, "build", path, drift="ignore", root=tmp_path)
    assert (ignored.failure, ignored.warnings) == (None, ())


def test_running_out_of_iterations_reports_those_served(config: Config, tmp_path: Path) -> None:
    path = write(
        tmp_path, "procedure: build\nmax_iterations: 3\niterations:\n  - output: working\n"
    )
    checked = check_replay(config, "build", path, drift="fail", root=tmp_path)
    assert checked.failure is not None
    assert "loop asked for a 2nd" in checked.failure
    assert "working" in checked.failure.split("\n\n", 1)[1]


def test_a_scenario_without_iterations_is_unrecorded(config: Config, tmp_path: Path) -> None:
    path = write(tmp_path, "procedure: build\niterations: []\n")
    checked = check_replay(config, "build", path, drift="fail", root=tmp_path)
    assert (checked.unrecorded, checked.failure, checked.warnings) == (True, None, ())


def test_files_are_replayed_in_the_reused_work_dir_which_is_emptied_first(
    config: Config, tmp_path: Path
) -> None:
    path = write(
        tmp_path,
        "procedure: build\nexpect: {files: {out.txt: {contains: [new]}, stale.txt: absent}}\n"
        'iterations:\n  - output: "<promise>SUCCESS</promise>"\n    files: {out.txt: new}\n',
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "stale.txt").write_text("left over from the last replay")
    checked = check_replay(config, "build", path, drift="fail", root=tmp_path, work_dir=work)
    assert checked.failure is None
    assert (work / "out.txt").read_text() == "new"
    assert not (work / "stale.txt").exists()

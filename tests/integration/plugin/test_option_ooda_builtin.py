"""``--ooda-builtin`` / ini ``ooda_builtin``: the packaged procedures join the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.config import load_builtin_config

if TYPE_CHECKING:
    from ooda_project import Project

BUILTINS = sorted(load_builtin_config().procedures)


def collected_procedures(project: Project, *args: str) -> list[str]:
    result = project.run("--collect-only", "-q", *args)
    return sorted(
        {
            line.split("::")[1]
            for line in result.stdout.lines
            if line.startswith("ooda-builtin/builtin.yml::")
        }
    )


def test_off_by_default(project: Project) -> None:
    assert collected_procedures(project) == []


def test_flag_collects_all_sixteen(project: Project) -> None:
    assert len(BUILTINS) == 16
    assert collected_procedures(project, "--ooda-builtin") == BUILTINS


def test_ini_key_collects_them_too(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_builtin = true\n")
    assert collected_procedures(project) == BUILTINS


def test_bad_ini_boolean_is_a_usage_error(project: Project) -> None:
    project.write("pytest.ini", "[pytest]\nooda_builtin = maybe\n")
    result = project.run()
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*ini option ooda_builtin:*maybe*"])


def test_builtin_snapshots_are_kept_in_the_project_not_the_package(project: Project) -> None:
    first = project.run("--ooda-builtin", "--snapshot-update", "-k", "builtin and build and prompt")
    first.assert_outcomes(passed=5, deselected=first.parseoutcomes()["deselected"])
    snapshot = project.path / "__snapshots__/ooda-builtin/build/assembled.md"
    assert "Procedure: Build" in snapshot.read_text()
    again = project.run("--ooda-builtin", "-k", "builtin and build and prompt")
    again.assert_outcomes(passed=5, deselected=again.parseoutcomes()["deselected"])


def test_builtin_config_items_pass(project: Project) -> None:
    result = project.run("--ooda-builtin", "-k", "builtin and config")
    result.assert_outcomes(passed=16, deselected=result.parseoutcomes()["deselected"])


def test_packaged_scenarios_are_never_recorded_into_the_package(project: Project) -> None:
    from pytest_ooda.fragments import builtin_root

    packaged = builtin_root() / "procedures/scenarios/agents-sync/success.yml"
    before = packaged.read_text()
    ai_cmd = project.fake_ai('[{"print": "<promise>SUCCESS</promise>"}]')
    result = project.run(
        "--ooda-builtin",
        "-m",
        "live",
        "-k",
        "agents-sync and success",
        "--ooda-ai-cmd",
        ai_cmd,
        "--ooda-record-mode=all",
        "-W",
        "always",
    )
    assert result.parseoutcomes().get("failed", 0) + result.parseoutcomes().get("passed", 0) == 1
    result.stdout.fnmatch_lines(["*RecordingWarning: scenario agents-sync/success: not recorded*"])
    assert packaged.read_text() == before

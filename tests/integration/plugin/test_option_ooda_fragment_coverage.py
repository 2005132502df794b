"""``--ooda-fragment-coverage`` / ini ``ooda_fragment_coverage``: the end-of-session report,
serial and under xdist."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project
if TYPE_CHECKING:
    import pytest
    from ooda_project import Project


def test_flag_prints_the_report_for_composed_fragments(project: Project) -> None:
    project.write("prompts/unused.md", "Nobody composes this.\n")
    project.run("--snapshot-update", "-k", "prompt")
    result = project.run("--ooda-fragment-coverage", "-k", "prompt")
    result.stdout.fnmatch_lines(["*- ooda fragment coverage -*", "*prompts/observe.md*greet*"])


def test_ini_key_enables_it_and_it_is_off_by_default(project: Project) -> None:
    project.run("--snapshot-update", "-k", "prompt")
    assert "ooda fragment coverage" not in project.run("-k", "prompt").stdout.str()
    project.write("pytest.ini", "[pytest]\nooda_fragment_coverage = true\n")
    project.run("-k", "prompt").stdout.fnmatch_lines(["*- ooda fragment coverage -*"])


CONFIG = """\
procedures:
  alpha:
    observe:
      - path: prompts/read.md
    orient:
      - path: prompts/choice.md
        parameters:
          strict: true
          items: [one, two]
    decide:
      - path: builtin:fragments/decide/check_if_blocked.md
    act:
      - path: builtin:fragments/act/emit_success.md
  beta:
    observe:
      - path: prompts/beta_only.md
    act:
      - path: builtin:fragments/act/emit_success.md
"""


CHOICE = """\
Check the work.
{{if .strict}}
Be strict about every item.
{{else}}
Be lenient.
{{end}}
{{range .items}}- {{.}}
{{end}}
"""


REPORT = [
    "*- ooda fragment coverage -*",
    "4 of 5 fragment files composed during the session",
    "never composed (1):",
    "  prompts/beta_only.md  used by: beta",
    "composed (4):",
    "  builtin:fragments/act/emit_success.md  used by: alpha, beta  composed 2x",
    "  builtin:fragments/decide/check_if_blocked.md  used by: alpha  composed 2x",
    "  prompts/choice.md  used by: alpha  composed 2x  branches 2/4 rendered",
    "      not rendered: line 2 if 'else' arm",
    "      not rendered: line 7 range 'empty' arm",
    "  prompts/read.md  used by: alpha  composed 2x",
]


def write_project(project: Project) -> None:
    project.write("ooda-config.yml", CONFIG)
    project.write("prompts/read.md", "Read the README.\n")
    project.write("prompts/beta_only.md", "Only beta reads this.\n")
    project.write("prompts/choice.md", CHOICE)


def report_of(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "ooda fragment coverage" in line)
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i][:3] in ("===", "---")), len(lines)
    )
    return lines[start + 1 : end]


def test_report_names_unexercised_fragment_and_unrendered_branches(project: Project) -> None:
    write_project(project)
    # Only alpha's items run; its phase snapshots and the assembled prompt each compose
    # every alpha fragment once: prompt[<phase>] once and prompt[assembled] once.
    result = project.run("--ooda-fragment-coverage", "--snapshot-update", "-k", "alpha")
    result.assert_outcomes(passed=6, deselected=6)
    result.stdout.fnmatch_lines(REPORT, consecutive=True)


def test_xdist_gives_the_same_report(project: Project) -> None:
    write_project(project)
    serial = project.run("--ooda-fragment-coverage", "--snapshot-update", "-k", "alpha")
    parallel = project.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--ooda-fragment-coverage", "-k", "alpha"
    )
    parallel.assert_outcomes(passed=6)
    assert report_of(parallel) == report_of(serial)
    assert "gw0" in parallel.stdout.str() or "2 workers" in parallel.stdout.str()


def test_lint_alone_does_not_count_as_exercised(project: Project) -> None:
    write_project(project)
    result = project.run("--ooda-fragment-coverage", "-k", "not prompt")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["0 of 5 fragment files composed during the session", "never composed (5):"]
    )


def test_ini_key_turns_it_on_and_default_is_off(project: Project) -> None:
    write_project(project)
    off = project.run("--snapshot-update")
    assert "ooda fragment coverage" not in off.stdout.str()
    project.write("pytest.ini", "[pytest]\nooda_fragment_coverage = true\n")
    on = project.run()
    on.stdout.fnmatch_lines(["*- ooda fragment coverage -*", "5 of 5 fragment files*"])


def test_hand_written_tests_count_as_compositions(project: Project) -> None:
    write_project(project)
    project.write(
        "test_mine.py",
        """\
        from pytest_ooda.compose import compose_phase


        def test_beta(ooda_config):
            beta = ooda_config.procedure("beta")
            assert "Only beta" in compose_phase(beta.observe, procedure="beta")
        """,
    )
    result = project.run("--ooda-fragment-coverage", "test_mine.py")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "1 of 1 fragment files composed during the session",
            "composed (1):",
            "  prompts/beta_only.md  used by: beta  composed 1x",
        ]
    )

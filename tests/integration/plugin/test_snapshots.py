"""Prompt snapshots through syrupy: create, match, mismatch with a diff, update, unused."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project

SNAPSHOTS = "__snapshots__/ooda-config/greet"


def test_snapshot_update_creates_one_markdown_file_per_phase(project: Project) -> None:
    result = project.run("--snapshot-update", "-k", "prompt")
    result.assert_outcomes(passed=5, deselected=1)
    result.stdout.fnmatch_lines(["*5 snapshots generated.*"])
    files = sorted(p.name for p in (project.path / SNAPSHOTS).iterdir())
    assert files == ["act.md", "assembled.md", "decide.md", "observe.md", "orient.md"]
    assembled = (project.path / SNAPSHOTS / "assembled.md").read_text()
    assert "Procedure: Greet" in assembled
    assert "Iteration: 1 of 5" in assembled
    assert assembled.endswith("<promise>FAILURE</promise> if nobody is there.\n")
    # Written atomically: no temp files left behind.
    assert not [p for p in (project.path / SNAPSHOTS).iterdir() if p.name.startswith(".")]


def test_missing_snapshot_fails_and_says_how_to_create_it(project: Project) -> None:
    result = project.run("-k", "prompt and observe")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            f"procedure greet: no snapshot of the observe phase yet ({SNAPSHOTS}/observe.md)",
            "  run `pytest --snapshot-update` to create it",
        ]
    )


def test_matching_snapshots_pass(project: Project) -> None:
    project.run("--snapshot-update")
    result = project.run("-k", "prompt")
    result.assert_outcomes(passed=5, deselected=1)
    result.stdout.fnmatch_lines(["*5 snapshots passed.*"])


def test_mismatch_shows_a_unified_diff_naming_the_fragment_file(project: Project) -> None:
    project.run("--snapshot-update")
    project.write("prompts/observe.md", "Read the README twice.\nList the people present.\n")
    result = project.run("-k", "prompt")
    result.assert_outcomes(failed=2, passed=3, deselected=1)
    result.stdout.fnmatch_lines(
        [
            f"procedure greet: the observe phase differs from its snapshot {SNAPSHOTS}/observe.md",
            "  changed lines come from: prompts/observe.md",
            "",
            f"--- {SNAPSHOTS}/observe.md (snapshot)",
            "+++ greet observe phase (composed now)",
            "@@ -1,4 +1,4 @@  prompts/observe.md",
            " Look around the room.",
            " ",
            "-Read the README.",
            "+Read the README twice.",
            " List the people present.",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "procedure greet: the assembled prompt differs from its snapshot*",
            "  changed lines come from: prompts/observe.md",
        ]
    )
    result.stdout.fnmatch_lines(["*2 snapshots failed. 3 snapshots passed.*"])


def test_inline_change_is_attributed_to_inline_content(project: Project) -> None:
    project.run("--snapshot-update")
    config = (project.path / "ooda-config.yml").read_text()
    project.write("ooda-config.yml", config.replace("Say hello.", "Say hello twice."))
    result = project.run("-k", "prompt and act")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        ["  changed lines come from: inline", "-Say hello.", "+Say hello twice."]
    )


def test_snapshot_update_rewrites_a_changed_prompt(project: Project) -> None:
    project.run("--snapshot-update")
    project.write("prompts/observe.md", "Read CONTRIBUTING.md.\n")
    result = project.run("--snapshot-update", "-k", "prompt")
    result.assert_outcomes(passed=5, deselected=1)
    result.stdout.fnmatch_lines(["*2 snapshots updated.*"])
    observe = (project.path / SNAPSHOTS / "observe.md").read_text()
    assert observe == "Look around the room.\n\nRead CONTRIBUTING.md.\n"
    project.run("-k", "prompt").assert_outcomes(passed=5, deselected=1)


def test_deleted_procedure_leaves_unused_snapshots_that_update_removes(project: Project) -> None:
    config = (project.path / "ooda-config.yml").read_text()
    wave = (
        "  wave:\n    act:\n"
        '      - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"\n'
    )
    project.write("ooda-config.yml", config + wave)
    project.run("--snapshot-update")
    assert (project.path / "__snapshots__/ooda-config/wave/act.md").is_file()

    project.write("ooda-config.yml", config)
    result = project.run()
    assert result.ret == 1  # syrupy fails the session on unused snapshots
    result.stdout.fnmatch_lines(
        [
            "*5 snapshots unused.*",
            "Re-run pytest with --snapshot-update to delete unused snapshots.",
        ]
    )
    result = project.run("--snapshot-update")
    result.stdout.fnmatch_lines(["*5 unused snapshots deleted.*"])
    result.stdout.fnmatch_lines(
        ["Deleted wave.prompt[[]act] (__snapshots__/ooda-config/wave/act.md)"]
    )
    assert not (project.path / "__snapshots__/ooda-config/wave").exists()
    assert (project.path / SNAPSHOTS / "act.md").is_file()
    assert project.run().ret == 0


def test_unused_snapshots_are_not_reported_when_only_some_procedures_run(
    project: Project,
) -> None:
    config = (project.path / "ooda-config.yml").read_text()
    wave = (
        "  wave:\n    act:\n"
        '      - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"\n'
    )
    project.write("ooda-config.yml", config + wave)
    project.run("--snapshot-update")
    result = project.run("--snapshot-update", "-k", "greet")
    assert "deleted" not in result.stdout.str()
    assert (project.path / "__snapshots__/ooda-config/wave/act.md").is_file()


def test_snapshots_sit_next_to_each_config_file(project: Project) -> None:
    project.write(
        "procedures/more.yml",
        """\
        procedures:
          audit:
            act:
              - content: "Audit. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
        """,
    )
    project.run("--snapshot-update")
    assert (project.path / "procedures/__snapshots__/more/audit/act.md").read_text() == (
        "Audit. <promise>SUCCESS</promise> or <promise>FAILURE</promise>\n"
    )


def test_without_syrupy_prompts_are_still_compared(project: Project) -> None:
    project.run("--snapshot-update")
    project.run("-p", "no:syrupy", "-k", "prompt").assert_outcomes(passed=5, deselected=1)
    project.write("prompts/observe.md", "Changed.\n")
    result = project.run("-p", "no:syrupy", "-k", "prompt and observe")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(["+Changed."])


def test_fragment_paths_in_diffs_are_shown_from_the_rootdir(project: Project) -> None:
    project.write(
        "procedures/more.yml",
        """\
        procedures:
          audit:
            observe:
              - path: prompts/look.md
            act:
              - content: "Audit. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
        """,
    )
    project.write("procedures/prompts/look.md", "Look.\n")
    project.run("--snapshot-update")
    project.write("procedures/prompts/look.md", "Look closer.\n")
    result = project.run("-k", "audit and prompt and observe")
    result.stdout.fnmatch_lines(
        [
            "  changed lines come from: procedures/prompts/look.md",
            "@@ -1 +1 @@  procedures/prompts/look.md",
        ]
    )


def test_collect_only_neither_reports_nor_deletes_prompt_snapshots(project: Project) -> None:
    project.run("--snapshot-update")
    result = project.run("--collect-only", "--snapshot-update")
    assert "unused" not in result.stdout.str()
    assert sorted(p.name for p in (project.path / SNAPSHOTS).iterdir()) == [
        "act.md",
        "assembled.md",
        "decide.md",
        "observe.md",
        "orient.md",
    ]


def test_other_markdown_in_the_snapshot_directory_is_left_alone(project: Project) -> None:
    project.run("--snapshot-update")
    notes = project.path / SNAPSHOTS / "README.md"
    notes.write_text("Reviewers: these files are generated.\n")
    result = project.run("--snapshot-update")
    assert "deleted" not in result.stdout.str()
    assert notes.is_file()


# A fragment that disappears after collection (a checkout, a generator, a mistake).
VANISHING_FRAGMENT = """
import os

def pytest_collection_finish(session):
    os.remove("prompts/observe.md")
"""


def test_fragment_failing_at_run_time_is_located_and_keeps_its_snapshot(
    project: Project,
) -> None:
    project.run("--snapshot-update")
    stored = (project.path / SNAPSHOTS / "observe.md").read_text()
    project.write("conftest.py", VANISHING_FRAGMENT)
    result = project.run("--snapshot-update", "-k", "prompt")
    result.assert_outcomes(failed=2, passed=3, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*_ greet::prompt[[]observe] _*",
            "ooda-config.yml:7:9: *prompts/observe.md*",
            "  > 7 |       - path: prompts/observe.md",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()
    # The failing items' snapshots are neither reported unused nor deleted.
    assert "Deleted" not in result.stdout.str()
    assert "unused" not in result.stdout.str()
    assert (project.path / SNAPSHOTS / "observe.md").read_text() == stored
    assert (project.path / SNAPSHOTS / "assembled.md").is_file()


def test_a_broken_config_file_keeps_its_snapshots(project: Project) -> None:
    wave = (
        "procedures:\n  wave:\n    act:\n"
        '      - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"\n'
    )
    project.write("procedures/a.yml", wave)
    project.write("procedures/b.yml", wave.replace("wave", "bow"))
    project.run("--snapshot-update").assert_outcomes(passed=18)
    stored = project.path / "procedures/__snapshots__/b/bow/act.md"
    assert stored.is_file()

    project.write("procedures/b.yml", "procedures: [\n")
    for args in ((), ("--snapshot-update",)):
        result = project.run(*args)
        result.assert_outcomes(failed=1, passed=12)
        result.stdout.fnmatch_lines(["procedures/b.yml:2:1: invalid YAML*"])
        assert "unused" not in result.stdout.str()
        assert stored.is_file()
    # Deleting the file, by contrast, leaves snapshots that are really unused.
    (project.path / "procedures/b.yml").unlink()
    result = project.run("--snapshot-update")
    result.stdout.fnmatch_lines(["*5 unused snapshots deleted.*"])
    assert not stored.exists()


def test_unreadable_snapshot_says_so_and_update_replaces_a_corrupt_one(project: Project) -> None:
    project.run("--snapshot-update")
    snapshots = project.path / SNAPSHOTS
    (snapshots / "observe.md").write_bytes(b"\xff\xfe not text\n")
    (snapshots / "orient.md").unlink()
    (snapshots / "orient.md").mkdir()
    for args in ((), ("-p", "no:syrupy")):
        result = project.run("-k", "prompt and (observe or orient)", *args)
        result.assert_outcomes(failed=2, deselected=4)
        result.stdout.fnmatch_lines(
            [
                "procedure greet: the observe phase differs from its snapshot *",
                "*-\ufffd\ufffd not text",
                "*",
                f"cannot read the snapshot {SNAPSHOTS}/orient.md: Is a directory",
                "  remove or fix it, then run `pytest --snapshot-update`",
            ]
        )
    result = project.run("--snapshot-update", "-k", "prompt")
    result.assert_outcomes(failed=1, passed=4, deselected=1)
    assert (snapshots / "observe.md").read_text().startswith("Look around the room.")
    assert (snapshots / "orient.md").is_dir()  # never removed behind the user's back


def test_a_broken_procedures_skipped_prompts_are_not_counted_as_passed_snapshots(
    project: Project,
) -> None:
    """Its prompt items are skipped (its config item fails with the located error): the
    snapshot summary does not count them as passed, and --snapshot-update keeps their
    snapshots for the fix."""
    project.run("--snapshot-update")
    stored = project.path / "__snapshots__/ooda-config/greet/observe.md"
    assert stored.is_file()
    config = project.path / "ooda-config.yml"
    config.write_text(config.read_text().replace("prompts/observe.md", "prompts/gone.md"))
    result = project.run()
    assert "5 snapshots passed" not in result.stdout.str()
    assert "unused" not in result.stdout.str()
    result = project.run("--snapshot-update")
    assert "unused" not in result.stdout.str()
    assert stored.is_file()

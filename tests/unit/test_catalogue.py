"""pytest_ooda.catalogue: the generated docs/procedures.md and its --check mode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ooda import catalogue
from pytest_ooda.catalogue import (
    DOC_FILE,
    PROCEDURE_KINDS,
    SIGNALS,
    ProcedureEntry,
    fragment_title,
    load_entries,
    main,
    render,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def entries() -> list[ProcedureEntry]:
    return load_entries()


@pytest.fixture(scope="module")
def document(entries: list[ProcedureEntry]) -> str:
    return render(entries)


def test_checked_in_catalogue_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0, "run `python -m pytest_ooda.catalogue` and commit the result"
    assert "is up to date" in capsys.readouterr().out


def test_check_reports_a_stale_document(
    tmp_path: Path, document: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "procedures.md"
    stale.write_text(document.replace("Synchronize AGENTS.md", "Sync AGENTS"), encoding="utf-8")
    assert main(["--check", "--output", str(stale)]) == 1
    err = capsys.readouterr().err
    assert str(stale) in err
    assert "python -m pytest_ooda.catalogue" in err


def test_check_reports_a_missing_document(tmp_path: Path) -> None:
    assert main(["--check", "--output", str(tmp_path / "absent.md")]) == 1


def test_generate_writes_the_rendered_text_atomically(tmp_path: Path, document: str) -> None:
    target = tmp_path / "docs" / "procedures.md"
    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == document
    assert [p.name for p in target.parent.iterdir()] == ["procedures.md"]
    assert main(["--check", "--output", str(target)]) == 0


def test_module_runs_as_a_command_and_checks_the_repository() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest_ooda.catalogue", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert str(DOC_FILE) in result.stdout


def test_entries_follow_builtin_yml(entries: list[ProcedureEntry]) -> None:
    assert [e.name for e in entries] == list(PROCEDURE_KINDS)
    build = next(e for e in entries if e.name == "build")
    assert build.display == "Build"
    assert build.phases["decide"] == (
        "fragments/decide/pick_task.md",
        "fragments/decide/plan_implementation_approach.md",
        "fragments/decide/check_if_blocked.md",
    )
    assert build.checks_blocked
    audit = next(e for e in entries if e.name == "audit-spec")
    assert not audit.checks_blocked


def test_every_procedure_has_a_section_with_summary_fragments_and_criteria(
    entries: list[ProcedureEntry], document: str
) -> None:
    sections = re.split(r"^### ", document, flags=re.MULTILINE)
    by_name = {s.split("\n", 1)[0]: s for s in sections[1:]}
    for entry in entries:
        section = by_name[entry.name]
        assert entry.summary in section
        assert entry.description in section
        for fragments in entry.phases.values():
            for fragment in fragments:
                assert f"](../{fragment})" in section
        signals = SIGNALS[PROCEDURE_KINDS[entry.name]]
        for condition in signals.success + signals.cont + signals.failure:
            assert condition in section
        assert ("truly blocked" in section) == entry.checks_blocked


def test_fragment_links_point_at_existing_files(document: str) -> None:
    links = re.findall(r"\]\(\.\./(fragments/[^)]+)\)", document)
    assert len(set(links)) == 59
    for link in links:
        assert (ROOT / link).is_file(), link


def test_fragment_index_lists_users_and_marks_the_unused_fragment(document: str) -> None:
    index = document[document.index("## Fragments") :]
    rows = [line for line in index.splitlines() if line.startswith("| [`")]
    assert len(rows) == 59
    unused = [row for row in rows if row.endswith("| no built-in procedure |")]
    names = sorted(row.split("`")[1] for row in unused)
    assert names == ["emit_failure", "understand_chore_request", "understand_refactor_request"]
    pick = next(row for row in rows if "`pick_task`" in row)
    assert pick.endswith("| Pick one task | `build` |")


def test_procedures_are_grouped_by_category(document: str) -> None:
    headings = re.findall(r"^## (.*)$", document, flags=re.MULTILINE)
    assert headings == [
        "Direct action procedures",
        "Audit procedures",
        "Planning procedures",
        "Fragments",
    ]


def test_fragment_title_falls_back_to_the_file_stem(tmp_path: Path) -> None:
    titled = tmp_path / "titled.md"
    titled.write_text("\n## Read the plan  \n\nbody\n", encoding="utf-8")
    untitled = tmp_path / "plain_text.md"
    untitled.write_text("no heading here\n", encoding="utf-8")
    assert fragment_title(titled) == "Read the plan"
    assert fragment_title(untitled) == "plain_text"


def test_render_ends_with_one_newline(document: str) -> None:
    assert document.endswith("\n")
    assert not document.endswith("\n\n")


def test_generator_depends_only_on_yaml_stdlib_and_the_config_loader() -> None:
    source = Path(catalogue.__file__).read_text(encoding="utf-8")
    imported = set(re.findall(r"^\s*(?:from|import) ([\w.]+)", source, flags=re.MULTILINE))
    project = {name for name in imported if name.startswith("pytest_ooda")}
    assert project == {"pytest_ooda.config", "pytest_ooda._util"}
    assert not {name.split(".")[0] for name in imported} & {"jinja2", "pytest", "requests"}

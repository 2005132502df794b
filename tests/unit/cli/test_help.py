"""``ooda help``: the topics a user who installed the package has — the quick start from
the README among them — and none naming a file only this repository holds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.cli import main
from pytest_ooda.cli.help import topic_text, topics

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[3]


# A path into the repository's own folders (its tests, tools, benchmarks, CI script) or
# into the shared folder beside the checkout. A folder named alone (`tests/`) is any
# project's; a file or folder inside one is the question.
_REPOSITORY_PATH = re.compile(
    r"(?<![\w./-])((?:\.\./)+shared/[\w./-]*|(?:\.ci|tests|tools|benchmarks)/[\w.-][\w./-]*)"
)


def test_quickstart_is_the_readmes_quick_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "quickstart"]) == 0
    page = capsys.readouterr().out
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start in your own repository", 1)[1].split("\n## ")[0]
    assert page.startswith("# Quick start\n")
    assert "pip install 'pytest-ooda[xdist]'" in page
    assert "ooda init" in page
    # It ends where the README's next section starts, and says no more than the section.
    assert "## The `ooda` command" not in page
    assert len(page) < len("# Quick start") + len(section) + 1
    # A link to another page becomes the command that shows it.
    assert "see\n   `ooda help rooda`)" in page
    assert "docs/rooda.md" not in page
    assert main(["help"]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"^  quickstart +Quick start$", listing, re.MULTILINE)


def test_the_contributors_map_is_not_a_topic(capsys: pytest.CaptureFixture[str]) -> None:
    assert "architecture" not in topics()
    assert main(["help", "architecture"]) == 1
    assert "no help topic 'architecture'" in capsys.readouterr().err


def test_no_topic_names_a_file_only_this_repository_has() -> None:
    offenders = []
    for name, path in topics().items():
        text = topic_text(name, path)
        for match in _REPOSITORY_PATH.finditer(text):
            found = match.group(1).rstrip(".,")
            # A user's own `tests/test_prompts.py` is fine; the project's files are not.
            if found.startswith("../") or (ROOT / found).exists():
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{name}:{line}: {found}")
    assert offenders == []


def test_a_repository_only_passage_is_left_out(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\nChecked by the test suite<!-- repository only --> (`tests/x.py`)"
        "<!-- end repository only -->.\n\n<!-- repository only -->\nIn this repository: "
        "`.ci/run`.\n<!-- end repository only -->\n\nSee [the loop](loop.md#signals).\n",
        encoding="utf-8",
    )
    assert topic_text("page", page) == (
        "# Page\n\nChecked by the test suite.\n\nSee the loop (`ooda help loop`).\n"
    )

"""One diagnostics module for both front ends: the ``ooda`` command shows a located
mistake with its file excerpt, caret and hint, as the plugin's reports do; a misspelt
local fragment path gets a "did you mean", and ``ooda lint`` keeps it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from pytest_ooda.diagnostics import format_error
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = textwrap.dedent(
    """\
    procedures:
      greet:
        observe:
          - path: prompts/lok.md
        act:
          - content: "Say hello, then print <promise>SUCCESS</promise>."
    """
)


def _project(tmp_path: Path, config: str = CONFIG) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "look.md").write_text("Look around.\n")
    (tmp_path / "ooda-config.yml").write_text(config)
    return tmp_path


def _ooda(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd / "home")}
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_cli_shows_the_excerpt_caret_and_hint(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = _ooda(project, "show", "greet")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("ooda: error: ooda-config.yml:4:9: procedure greet: observe[0]")
    assert "  did you mean 'prompts/look.md'?" in lines
    assert "  > 4 |       - path: prompts/lok.md" in lines
    caret = lines[lines.index("  > 4 |       - path: prompts/lok.md") + 1]
    assert caret == "      |         ^"
    assert "Traceback" not in done.stderr


def test_a_misspelt_directory_is_suggested_too(tmp_path: Path) -> None:
    project = _project(tmp_path, CONFIG.replace("prompts/lok.md", "promts/look.md"))
    done = _ooda(project, "show", "greet")
    assert "did you mean 'prompts/look.md'?" in done.stderr


def test_lint_keeps_the_did_you_mean(tmp_path: Path) -> None:
    project = _project(tmp_path)
    text = _ooda(project, "lint")
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith("ooda-config.yml:4:9: OODA001 error:")
    assert lines[1] == "  did you mean 'prompts/look.md'?"
    as_json = json.loads(_ooda(project, "lint", "--format", "json").stdout)
    assert as_json["findings"][0]["hint"] == "did you mean 'prompts/look.md'?"


def test_format_error_is_the_plugins_rendering(tmp_path: Path) -> None:
    from pytest_ooda.plugin import report

    path = tmp_path / "c.yml"
    path.write_text("a: 1\nb: 2\n")
    error = ConfigError("bad b", file=path, line=2, column=4, hint="expected an int")
    assert format_error(error, root=tmp_path) == report.format_error(error, root=tmp_path)
    assert format_error(error, root=tmp_path).splitlines() == [
        "c.yml:2:4: bad b",
        "  expected an int",
        "",
        "    1 | a: 1",
        "  > 2 | b: 2",
        "      |    ^",
    ]


def test_messages_never_point_at_docs_paths_a_pip_user_lacks() -> None:
    # Docstrings and comments may name docs/…; text a user reads says `ooda help TOPIC`.
    import ast
    from pathlib import Path

    import pytest_ooda

    offenders = []
    for path in Path(pytest_ooda.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and "docs/" in node.value
                and ".md" in node.value
                and path.name != "catalogue.py"
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_ooda_help_prints_a_topic(tmp_path: Path) -> None:
    done = _ooda(tmp_path, "help", "agents")
    assert done.returncode == 0
    assert done.stdout.startswith("# Agent CLIs")
    listing = _ooda(tmp_path, "help").stdout
    assert "  agents " in listing
    wrong = _ooda(tmp_path, "help", "agent")
    assert wrong.returncode == 1
    assert "did you mean 'agents'?" in wrong.stderr

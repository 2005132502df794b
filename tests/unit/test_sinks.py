"""Every sink, listed from the code (issue 39, item 2): each module of the package that
writes a file is found here by what it calls, and must be named below — as the sink it
is (what a run produced, written after ``pytest_ooda.redact`` cleaned it value by
value) or as a writer that holds nothing of a run, with why. A new writer fails this
test until it is named; a new sink named here fails the secrets matrix
(``tests/sandbox/test_sandbox_redaction.py``, which plants every documented kind of
secret in every sink of :data:`SINKS`) until it is checked there too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ooda"

#: Module -> the sinks it writes (file writers).
FILE_SINKS: dict[str, tuple[str, ...]] = {
    "scenario/store.py": ("recording",),
    "results/log.py": ("results log",),
    "cli/report.py": ("HTML",),
    "cli/compare.py": ("HTML",),
    "cli/common.py": ("Markdown",),
    "cli/report_pr.py": ("HTML", "Markdown"),
    "judge/grading.py": ("judge cache",),
    "apireplay/cassette.py": ("cassette",),
}
#: Sinks that are not files: module -> what it shows (or sends).
SHOWN_SINKS: dict[str, tuple[str, ...]] = {
    "live/report.py": ("terminal failure report",),
    "redact.py": ("-s stream",),
    "judge/inputs.py": ("judge inputs",),
    "view/server.py": ("viewer pages",),
}
#: Writers that hold nothing a run produced, and why.
NOT_SINKS: dict[str, str] = {
    "_util.py": "the atomic writers themselves; their callers are listed",
    "catalogue.py": "docs/procedures.md, from the built-in procedures",
    "plugin/snapshots.py": "prompt snapshots: composed prompts, never a run's output",
    "plugin/session_dir.py": "a run's plan for a crashed worker's record: settings, no output",
    "results/tally.py": "finished runs' outcome words for early stopping",
    "results/budget.py": "finished runs' cost and tokens, for the session's budget",
    "impact/gitref.py": "the project's files at a git revision, into a scratch directory",
    "cli/ablate.py": "an ablation's page: fragment paths and figures, no run output",
    "sandbox/limits.py": "cgroup control files",
    "sandbox/bwrap.py": "the seccomp filter",
    "sandbox/image.py": "an image of the agent's executable",
    "executors/source.py": "the project's files, shipped to a cluster (no run output)",
    "scenario/pytest_verifier.py": "the verifier's own pytest configuration",
    "backends/replay.py": "a recording's file changes, replayed into a scratch workspace",
    "cli/init.py": "a new project's files",
    "cli/init_material.py": "a new project's files for a plugin's material (never over a file)",
    "cli/app.py": "opens the null device for a missing stdout or stderr",
    "repository.py": "a fresh workspace's git objects: the scenario's own files, before the run",
}
#: Every sink, by name: what the secrets matrix must check.
SINKS = frozenset(name for names in (*FILE_SINKS.values(), *SHOWN_SINKS.values()) for name in names)
_WRITES = {"atomic_write_text", "atomic_write_bytes", "write_text", "write_bytes", "fdopen"}


def _writes(tree: ast.Module) -> bool:
    """Whether a module writes a file: an atomic write, ``Path.write_*``, ``os.write``
    to a file it opened, or ``open`` with a writing mode."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        if name in _WRITES and not (name == "fdopen" and _mode(node) in ("", "r", "rb")):
            return True
        if name == "open" and any(flag in _mode(node) for flag in "wax"):
            return True
        if (
            name == "write"
            and isinstance(function, ast.Attribute)
            and isinstance(function.value, ast.Name)
            and function.value.id == "os"
            and "O_CREAT" in ast.unparse(tree)
        ):
            return True
    return False


def _mode(call: ast.Call) -> str:
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
        return str(call.args[1].value)
    return ""


def test_every_module_that_writes_a_file_is_named() -> None:
    writers = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if _writes(ast.parse(path.read_text(encoding="utf-8")))
    }
    named = set(FILE_SINKS) | set(NOT_SINKS)
    assert writers - named == set(), "a new writer: name it in FILE_SINKS or NOT_SINKS"
    assert named - writers == set(), "named, but it writes no file (any more)"


def test_every_sink_that_is_no_file_is_still_there() -> None:
    for module in SHOWN_SINKS:
        assert (PACKAGE / module).is_file(), module


def test_the_security_page_names_every_sink() -> None:
    page = (PACKAGE.parent / "docs" / "security.md").read_text(encoding="utf-8").lower()
    words = {"-s stream": "`pytest -s`", "viewer pages": "`ooda view`", "html": "**html**"}
    for sink in SINKS:
        assert words.get(sink.lower(), sink.lower()) in page, sink

"""What the judge sees of a run, each part as text: the last output, the transcript,
the workspace's changes as unified diffs against the scenario's workspace, and files
picked by globs. Every part is capped so one huge file cannot make the question huge."""

from __future__ import annotations

import difflib
import fnmatch
import os
from typing import TYPE_CHECKING

from pytest_ooda.judge.model import JudgeInputs

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.judge.model import JudgeSpec
    from pytest_ooda.loop import LoopResult

#: The most characters of one input part (a diff, a file, the transcript).
MAX_PART_CHARS = 200_000
#: Files larger than this are named in the diff, not shown.
MAX_FILE_BYTES = 512 * 1024
_SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", "node_modules", ".venv"})


def _capped(text: str, limit: int = MAX_PART_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)\n"


def _tree(root: Path | None) -> dict[str, Path]:
    """Regular files under ``root`` by relative POSIX path (tool folders left out)."""
    found: dict[str, Path] = {}
    if root is None or not root.is_dir():
        return found
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in files:
            path = root.joinpath(directory, name) if directory else root / name
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(root).as_posix()] = path
    return found


def _text(path: Path | None) -> str | None:
    """A file's text, ``None`` when it is binary or too large to show."""
    if path is None:
        return ""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def workspace_diff(before: Path | None, after: Path) -> str:
    """Unified diffs of every file that differs between ``before`` (the scenario's
    workspace; ``None``: an empty one) and ``after`` (the run's workspace)."""
    old, new = _tree(before), _tree(after)
    chunks: list[str] = []
    for name in sorted(old.keys() | new.keys()):
        a_text, b_text = _text(old.get(name)), _text(new.get(name))
        if name in old and name in new and a_text == b_text:
            continue
        if a_text is None or b_text is None:
            chunks.append(f"Binary or large file {name} differs\n")
            continue
        diff = difflib.unified_diff(
            a_text.splitlines(keepends=True),
            b_text.splitlines(keepends=True),
            fromfile=f"a/{name}" if name in old else "/dev/null",
            tofile=f"b/{name}" if name in new else "/dev/null",
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        if text:
            chunks.append(text)
    return _capped("".join(chunks))


def matching_files(root: Path, globs: tuple[str, ...]) -> dict[str, str]:
    """The text of every workspace file matching one of ``globs`` (POSIX patterns
    relative to the workspace; ``**`` crosses folders)."""
    out: dict[str, str] = {}
    for name, path in _tree(root).items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in globs):
            text = _text(path)
            out[name] = _capped(text) if text is not None else "(binary or too large to show)"
    return out


def transcript(result: LoopResult) -> str:
    """Every iteration's output and tool calls, in order."""
    lines: list[str] = []
    for record in result.records:
        lines.append(f"--- iteration {record.number} (exit code {record.exit_code}) ---")
        for call in record.tool_calls:
            state = "" if call.ok is None else (" ok" if call.ok else " failed")
            lines.append(f"tool {call.name}: {call.summary}{state}")
        lines.append(record.output.rstrip("\n"))
    return _capped("\n".join(lines) + "\n")


def gather(
    spec: JudgeSpec, result: LoopResult, workspace: Path | None, source: Path | None
) -> JudgeInputs:
    """The inputs ``spec`` asks for from a finished run (``workspace`` after the run,
    ``source`` the scenario's workspace before it)."""
    wanted = set(spec.inputs)
    output = result.records[-1].output if result.records and "output" in wanted else ""
    return JudgeInputs(
        output=_capped(output),
        diff=workspace_diff(source, workspace)
        if "diff" in wanted and workspace is not None
        else "",
        transcript=transcript(result) if "transcript" in wanted else "",
        files=matching_files(workspace, spec.files)
        if "files" in wanted and workspace is not None
        else {},
    )

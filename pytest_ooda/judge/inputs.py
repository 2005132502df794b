"""What the judge sees of a run, each part as text: the last output, the transcript,
the workspace's changes as unified diffs against the scenario's workspace, and files
picked by globs. Every part is capped so one huge file cannot make the question huge.

The judge is a model behind an API or an agent command: what it is shown leaves the
machine, so each text is redacted on its own before it is placed — a file's content
before it is diffed (a ``+`` in front of ``DB_PASSWORD=…`` would hide the line from
the rules that read whole lines), each file name part, each tool call's decoded input
(:func:`~pytest_ooda.backends.redacted_call`). Symbolic links are never followed, and a
file with more than one hard link is named, never shown (it may be a file outside the
workspace under another name)."""

from __future__ import annotations

import difflib
import fnmatch
import os
from typing import TYPE_CHECKING

from pytest_ooda.judge.model import JudgeInputs

if TYPE_CHECKING:
    from collections.abc import Callable
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


def _plain(text: str) -> str:
    return text


#: What stands for a file whose content is not shown, by why.
_LINKED = "(a file with more than one hard link: not shown)"
_UNSHOWN = "(binary or too large to show)"


def _text(path: Path | None, redact: Callable[[str], str] = _plain) -> str | None:
    """A file's text (redacted), ``None`` when it is binary, too large to show, or has
    another name (see the module docstring)."""
    if path is None:
        return ""
    try:
        info = path.stat()
        if info.st_size > MAX_FILE_BYTES or info.st_nlink > 1:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return redact(data.decode("utf-8", errors="replace"))


def _why_not(path: Path | None) -> str:
    try:
        return _LINKED if path is not None and path.stat().st_nlink > 1 else _UNSHOWN
    except OSError:
        return _UNSHOWN


def _name(name: str, redact: Callable[[str], str]) -> str:
    return "/".join(redact(part) for part in name.split("/"))


def workspace_diff(before: Path | None, after: Path, redact: Callable[[str], str] = _plain) -> str:
    """Unified diffs of every file that differs between ``before`` (the scenario's
    workspace; ``None``: an empty one) and ``after`` (the run's workspace), each file's
    text and name redacted by ``redact`` before it is diffed."""
    old, new = _tree(before), _tree(after)
    chunks: list[str] = []
    for raw in sorted(old.keys() | new.keys()):
        a_text, b_text = _text(old.get(raw), redact), _text(new.get(raw), redact)
        name = _name(raw, redact)
        if raw in old and raw in new and a_text == b_text:
            continue
        if a_text is None or b_text is None:
            why = _why_not(new.get(raw) if b_text is None else old.get(raw))
            chunks.append(f"File {name} differs {why}\n")
            continue
        diff = difflib.unified_diff(
            a_text.splitlines(keepends=True),
            b_text.splitlines(keepends=True),
            fromfile=f"a/{name}" if raw in old else "/dev/null",
            tofile=f"b/{name}" if raw in new else "/dev/null",
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        if text:
            chunks.append(text)
    return _capped("".join(chunks))


def matching_files(
    root: Path, globs: tuple[str, ...], redact: Callable[[str], str] = _plain
) -> dict[str, str]:
    """The text of every workspace file matching one of ``globs`` (POSIX patterns
    relative to the workspace; ``**`` crosses folders), names and texts redacted."""
    out: dict[str, str] = {}
    for name, path in _tree(root).items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in globs):
            text = _text(path, redact)
            out[_name(name, redact)] = _capped(text) if text is not None else _why_not(path)
    return out


def transcript(result: LoopResult, redact: Callable[[str], str] = _plain) -> str:
    """Every iteration's output and tool calls, in order, each redacted on its own."""
    from pytest_ooda.backends import redacted_call

    lines: list[str] = []
    for record in result.records:
        lines.append(f"--- iteration {record.number} (exit code {record.exit_code}) ---")
        for call in record.tool_calls:
            clean = redacted_call(call, redact)
            state = "" if clean.ok is None else (" ok" if clean.ok else " failed")
            lines.append(f"tool {clean.name}: {clean.summary}{state}")
        lines.append(redact(record.output).rstrip("\n"))
    return _capped("\n".join(lines) + "\n")


def gather(
    spec: JudgeSpec,
    result: LoopResult,
    workspace: Path | None,
    source: Path | None,
    redact: Callable[[str], str] | None = None,
) -> JudgeInputs:
    """The inputs ``spec`` asks for from a finished run (``workspace`` after the run,
    ``source`` the scenario's workspace before it), every text redacted by ``redact``
    on its own before it is placed."""
    redact = redact or _plain
    wanted = set(spec.inputs)
    output = result.records[-1].output if result.records and "output" in wanted else ""
    return JudgeInputs(
        output=_capped(redact(output)),
        diff=workspace_diff(source, workspace, redact)
        if "diff" in wanted and workspace is not None
        else "",
        transcript=transcript(result, redact) if "transcript" in wanted else "",
        files=matching_files(workspace, spec.files, redact)
        if "files" in wanted and workspace is not None
        else {},
    )

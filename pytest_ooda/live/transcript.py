"""A live run's transcript for the HTML report: the composed prompt by fragment, each
iteration's output, the tool calls with their input and result as the agent CLI
reported them, and the diffs of the files each iteration changed — redacted, and capped
per run so a results log of a thousand runs stays small.

Its own step of a live run: :class:`DiffWatcher` sees the loop's events (it keeps the
text of the workspace's files to diff against), :func:`build_transcript` turns the
finished run into the record's ``transcript`` field.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from pytest_ooda.backends import ToolCall
    from pytest_ooda.config import Procedure
    from pytest_ooda.loop import LoopEvent, LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.workspace import Entry

__all__ = [
    "DIFF_LIMIT",
    "OUTPUT_LIMIT",
    "PROMPT_LIMIT",
    "RUN_LIMIT",
    "DiffWatcher",
    "build_transcript",
]

#: The composed prompt kept per run (iteration 1's; later ones differ in one line).
PROMPT_LIMIT = 64 * 1024
#: Each iteration's output (its end, where the verdict is).
OUTPUT_LIMIT = 16 * 1024
#: Each file's diff in one iteration.
DIFF_LIMIT = 16 * 1024
#: The whole transcript of one run, as JSON; over it the largest texts are cut.
RUN_LIMIT = 256 * 1024
#: Files read to diff against: each at most this big, all together at most the total.
_FILE_LIMIT = 256 * 1024
_TOTAL_LIMIT = 4 * 1024 * 1024


def _cut(text: str, limit: int, *, keep: str = "head") -> tuple[str, bool]:
    """``text`` within ``limit`` characters, with a note saying how much was left out."""
    if len(text) <= limit:
        return text, False
    left = len(text) - limit
    if keep == "tail":
        return f"… ({left:,} earlier characters not kept)\n" + text[-limit:], True
    return text[:limit] + f"\n… ({left:,} more characters not kept)", True


class DiffWatcher:
    """The diffs of the text files each iteration created, changed or deleted.

    Pass it as (or call it from) the loop's ``on_event``; afterwards ``diffs`` maps an
    iteration's number to ``{path: unified diff}`` and ``notes`` says what was not kept.
    """

    def __init__(self, root: str | Path, redactor: Redactor | None = None) -> None:
        self.root = Path(root)
        # File contents are redacted before they are diffed: a "+" in front of a line
        # would hide `password=…` from patterns anchored at the start of a line.
        self.redactor = redactor
        self.diffs: dict[int, dict[str, str]] = {}
        self.notes: list[str] = []
        self._entries: dict[str, Entry] | None = None
        self._texts: dict[str, str] = {}
        self._kept = 0

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished, IterationStarted, LoopStarted

        if isinstance(event, LoopStarted) or (
            isinstance(event, IterationStarted) and self._entries is None
        ):
            self._start()
        elif isinstance(event, IterationFinished) and self._entries is not None:
            self.diffs[event.record.number] = self._capture()

    def _start(self) -> None:
        from pytest_ooda.workspace import scan

        self._entries = scan(self.root)
        for path, entry in sorted(self._entries.items()):
            if entry.plain:
                text = self._read(path, entry.size)
                if text is not None:
                    self._texts[path] = text

    def _read(self, path: str, size: int) -> str | None:
        if size > _FILE_LIMIT or self._kept + size > _TOTAL_LIMIT:
            return None
        try:
            data = (self.root / path).read_bytes()[: _FILE_LIMIT + 1]
        except OSError:
            return None
        if b"\0" in data or len(data) > _FILE_LIMIT:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        self._kept += len(data)
        return text

    def _capture(self) -> dict[str, str]:
        from pytest_ooda.workspace import diff_paths, scan

        before = self._entries or {}
        after = scan(self.root)
        self._entries = after
        out: dict[str, str] = {}
        for path, change in diff_paths(before, after).items():
            old = self._texts.pop(path, None)
            new = None
            if change != "deleted" and after[path].plain:
                new = self._read(path, after[path].size)
                if new is not None:
                    self._texts[path] = new
            clean = self.redactor if self.redactor is not None else (lambda text: text)
            shown = self.redactor.path(path) if self.redactor is not None else path
            if change != "deleted" and not after[path].plain:
                # A link, a FIFO or a second name of another file: never opened.
                out[path] = f"({change}; a link or special file, not shown)"
            elif change == "deleted":
                out[path] = _diff(shown, clean(old), "") if old is not None else "(deleted)"
            elif new is None:
                out[path] = f"({change}; binary, not UTF-8, or too large to show)"
            elif old is None and change == "modified":
                created = _diff(shown, "", clean(new))
                out[path] = "(modified; its earlier content was not kept)\n" + created
            else:
                out[path] = _diff(shown, clean(old or ""), clean(new))
        return out


def _diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile="/dev/null" if not old else f"a/{path}",
        tofile="/dev/null" if not new else f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _prompt_segments(
    procedure: Procedure, result: LoopResult, redactor: Redactor
) -> list[dict[str, str]]:
    """Iteration 1's prompt as ``[{source, text}]``, one entry per fragment (or the
    preamble, a phase marker); one ``prompt`` entry when the mapping cannot be redone.
    Made for each run with the run's own redactor: secrets differ between runs."""
    from pytest_ooda.compose import assemble_prompt_mapped

    prompt = result.records[0].prompt
    # Redacted once, as a whole; split by the composition's lines when that kept them.
    redacted = redactor(prompt)
    try:
        mapped = assemble_prompt_mapped(
            procedure,
            iteration=1,
            max_iterations=result.max_iterations,
            context=result.context,
            cwd=result.workdir,
        )
    except OodaError:
        mapped = None
    lines = redacted.splitlines(keepends=True)
    if (
        mapped is None
        or mapped.text != prompt
        or len(lines) != len(prompt.splitlines(keepends=True))
    ):
        return [{"source": "prompt", "text": redacted}]
    out: list[dict[str, str]] = []
    position = 0
    for segment in mapped.segments:
        if segment.start_line - 1 > position:
            out.append({"source": "", "text": "".join(lines[position : segment.start_line - 1])})
        text = "".join(lines[segment.start_line - 1 : segment.end_line])
        out.append({"source": segment.source, "text": text})
        position = segment.end_line
    if position < len(lines):
        out.append({"source": "", "text": "".join(lines[position:])})
    return out


def _call(call: ToolCall, redactor: Redactor, prefix: str | None) -> dict[str, Any]:
    from pytest_ooda.backends import redacted_call

    def text(value: str) -> str:
        # Paths inside the run's throw-away workspace, relative (as recordings have them).
        return redactor(value.replace(prefix, "") if prefix else value)

    # Each decoded text is redacted before it is joined into a line or encoded as JSON.
    clean = redacted_call(call, text)
    return {
        "name": clean.name,
        "summary": clean.summary,
        "ok": clean.ok,
        "error": clean.error,
        "input": clean.input,
        "result": clean.result,
    }


def build_transcript(
    procedure: Procedure,
    result: LoopResult,
    redactor: Redactor,
    diffs: DiffWatcher | None = None,
) -> dict[str, Any]:
    """The record's ``transcript``: ``prompt`` (``[{source, text}]``), ``iterations``
    (``[{number, output, tool_calls, permission_denials, diffs}]``) and ``notes`` (what
    the caps left out)."""
    notes: list[str] = list(diffs.notes) if diffs is not None else []
    segments = _prompt_segments(procedure, result, redactor) if result.records else []
    # Then each text file of the agent material the run installed, by its source
    # (``claude:greeter/skills/greet/SKILL.md``): the prompt's identity includes them.
    segments += [
        {"source": f"{item.section}:{item.source}", "text": redactor(item.text)}
        for item in procedure.material
        if item.text is not None and segments
    ]
    total = 0
    for segment in segments:
        room = max(0, PROMPT_LIMIT - total)
        segment["text"], cut = _cut(segment["text"], room)
        total += len(segment["text"])
        if cut:
            notes.append(f"the prompt is cut at {PROMPT_LIMIT // 1024} KiB")
            break
    prefix = f"{result.workdir}/" if result.workdir is not None else None
    iterations = []
    for record in result.records:
        # Redacted with a margin beyond what is kept, so a secret the cut would split is
        # still whole when it is replaced.
        output, cut = _cut(
            redactor(record.output[-(OUTPUT_LIMIT + 4096) :]), OUTPUT_LIMIT, keep="tail"
        )
        cut = cut or len(record.output) > OUTPUT_LIMIT + 4096
        if cut:
            notes.append(f"iteration {record.number}: output cut to its last {OUTPUT_LIMIT} chars")
        changed: dict[str, str] = {}
        found = diffs.diffs.get(record.number, {}) if diffs is not None else {}
        for path, diff in found.items():
            # A watcher with a redactor diffed redacted contents; else redact the diff.
            redacted = diffs is not None and diffs.redactor is not None
            text, cut = _cut(diff if redacted else redactor(diff), DIFF_LIMIT)
            changed[redactor.path(path)] = text
            if cut:
                notes.append(f"iteration {record.number}: the diff of {path} is cut")
        unkept = sum(not call.texts_kept for call in record.tool_calls)
        if unkept:
            notes.append(
                f"iteration {record.number}: {unkept} tool calls' input and result not kept "
                "(the run's budget for tool-call text was spent)"
            )
        iterations.append(
            {
                "number": record.number,
                "output": output,
                "tool_calls": [_call(call, redactor, prefix) for call in record.tool_calls],
                "permission_denials": [
                    _call(call, redactor, prefix) for call in record.permission_denials
                ],
                "diffs": changed,
            }
        )
    transcript: dict[str, Any] = {"prompt": segments, "iterations": iterations, "notes": notes}
    _fit(transcript)
    return transcript


def _fit(transcript: dict[str, Any]) -> None:
    """Cut the largest texts until the transcript's JSON is within ``RUN_LIMIT``."""
    size = len(json.dumps(transcript, ensure_ascii=False))
    if size <= RUN_LIMIT:
        return
    texts: list[tuple[dict[str, Any], str]] = []
    for item in transcript["iterations"]:
        texts.append((item, "output"))
        texts.extend((item["diffs"], path) for path in item["diffs"])
        for call in item["tool_calls"]:
            texts.extend((call, key) for key in ("input", "result") if call.get(key))
    texts.extend((segment, "text") for segment in transcript["prompt"])
    for _ in range(64):
        if size <= RUN_LIMIT or not texts:
            break
        holder, key = max(texts, key=lambda ref: len(ref[0][ref[1]] or ""))
        before = holder[key] or ""
        holder[key] = _cut(before, max(256, len(before) // 2))[0]
        size -= len(before) - len(holder[key])
    transcript["notes"].append(
        f"the transcript is cut to about {RUN_LIMIT // 1024} KiB (its largest texts shortened)"
    )

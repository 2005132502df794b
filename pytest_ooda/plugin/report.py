"""What the plugin prints: collection lines, warnings at the user's files, failure reports,
a finished run's line, and where an agent's streamed iterations start and end.

Failure reports are plain text built from our own data (YAML lines around the located
mistake, prompt diffs naming fragment files, per-iteration tables), so a user never
reads a traceback into the plugin for a mistake in their YAML.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import TYPE_CHECKING

from pytest_ooda._util import display_path
from pytest_ooda.diagnostics import (
    absolute as _absolute,
    file_excerpt,
    format_error,
    format_findings,
)
from pytest_ooda.errors import OodaWarning

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from pytest_ooda.compose import MappedText
    from pytest_ooda.loop import LoopEvent
    from pytest_ooda.plugin.state import PluginState
    from pytest_ooda.results import RunRecord

#: The user property a live item leaves when it recorded its scenario (the path); the
#: run itself travels as its results record (``measure.REPORT_ATTRIBUTE``).
RECORDED_PROPERTY = "ooda_recorded"
#: What tells a scenario's live items apart: a trigger set's prompt (``/should-1``),
#: the variant (``@two``) and the run (``#3``).
_RUN_PARTS = re.compile(r"/[^@#\]]*|@[^#\]]*|#\d+(?=\]\Z)")


class ItemFailure(Exception):
    """A test's failing verdict whose message is the whole report (no traceback into the
    plugin): a prompt that differs from its snapshot, a scenario that ended otherwise
    than expected. Like ``AssertionError`` it is an outcome, not a mistake in the user's
    input, so it stands outside the ``OodaError`` tree on purpose."""


# --------------------------------------------------------------------------- header


def count_nodeids(nodeids: Iterable[str]) -> tuple[int, int, int]:
    """(procedures, scenarios, config files) among node ids (what an xdist worker reports).

    Deselected items are not among them, so every item kind counts its procedure and
    scenario: ``-m live`` still reports the procedures and scenarios it runs.
    """
    procedures: set[tuple[str, str]] = set()
    scenarios: set[tuple[str, str, str]] = set()
    files: set[str] = set()
    for nodeid in nodeids:
        # At most three parts: a scenario file's name may itself contain "::".
        parts = nodeid.split("::", 2)
        if not parts[0].endswith((".yml", ".yaml")):
            continue
        if len(parts) == 2 and parts[1] == "config":
            files.add(parts[0])
            continue
        if len(parts) != 3:
            continue
        file, procedure, name = parts
        kind, _, rest = name.partition("[")
        if kind not in ("config", "prompt", "scenario", "live"):
            continue
        files.add(file)
        if "[" in procedure:
            continue  # agent material (claude[greeter]), not a procedure
        procedures.add((file, procedure))
        if kind == "live":
            # The runs of a repeated scenario, live[name#1] … live[name#N], its
            # variants' and its trigger set's prompts' (live[name/should-1@two]): one.
            rest = _RUN_PARTS.sub("", rest)
        if kind in ("scenario", "live"):
            scenarios.add((file, procedure, rest))
    return len(procedures), len(scenarios), len(files)


def collection_line(nodeids: Iterable[str]) -> str | None:
    return counts_line(*count_nodeids(nodeids))


def counts_line(procedures: int, scenarios: int, files: int) -> str | None:
    if not files:
        return None
    return (
        f"ooda: {procedures} procedure{'s' if procedures != 1 else ''}, "
        f"{scenarios} scenario{'s' if scenarios != 1 else ''} "
        f"in {files} config file{'s' if files != 1 else ''}"
    )


def collection_lines(state: PluginState) -> list[str]:
    counts = state.counts
    line = counts_line(counts["procedures"], counts["scenarios"], counts["files"])
    return [line] if line else []


# --------------------------------------------------------------------------- warnings


def warn_at(
    warning: OodaWarning,
    file: str | Path | None = None,
    line: int | None = None,
    *,
    root: Path | None = None,
) -> None:
    """Issue ``warning`` located at the user's file, not at the plugin line that noticed.

    pytest's warnings summary then names the YAML file and quotes its line. The place is
    ``file``/``line`` when given, else the warning's own (relative paths are relative to
    ``root``). The file is passed on absolute because the quoted line comes from
    ``linecache``, which would mix up equal relative names.
    """
    if file is None:
        file, line = warning.file, warning.line
    if file is None:
        warnings.warn(warning, stacklevel=3)
        return
    warnings.warn_explicit(
        warning, type(warning), str(_absolute(str(file), root).absolute()), line or 1
    )


def issue_at(warning: OodaWarning, path: Path) -> None:
    """Issue a located warning the library returned, at its file (else ``path``)."""
    # pytest's summary names the file and quotes its line: the text is the message.
    shown = type(warning)(warning.message, hint=warning.hint)
    warn_at(shown, warning.file or path, warning.line)


class IterationBoundaries:
    """With ``-s`` the agent's output streams to the terminal: a line before and after
    each iteration says whose output it is and how the iteration ended."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __call__(self, event: LoopEvent) -> None:
        from pytest_ooda.loop import IterationFinished, IterationStarted

        if isinstance(event, IterationStarted):
            limit = "" if event.max_iterations is None else f" of {event.max_iterations}"
            line = f"──── ooda: {self.label}: iteration {event.number}{limit} ────"
        elif isinstance(event, IterationFinished):
            record = event.record
            signal = f", {record.signal}" if record.signal else ""
            line = (
                f"──── ooda: {self.label}: iteration {record.number} ended: "
                f"{record.outcome}{signal}, exit {record.exit_code} ────"
            )
        else:
            return
        sys.stdout.write(f"\n{line}\n")
        sys.stdout.flush()


def format_warning_error(warning: Warning, *, root: Path | None = None) -> str:
    """One of our warnings that ``-W error`` / ``filterwarnings`` turned into a failure."""
    lines = [
        f"{type(warning).__name__} (an error under -W / filterwarnings): {warning}",
    ]
    if isinstance(warning, OodaWarning) and warning.file is not None and warning.line:
        excerpt = file_excerpt(_absolute(warning.file, root), warning.line)
        if excerpt:
            lines.append("")
            lines.extend(excerpt)
    return "\n".join(lines)


# --------------------------------------------------------------------------- errors

__all__ = ["ItemFailure", "file_excerpt", "format_error", "format_findings"]


def format_prompt_mismatch(
    *,
    procedure: str,
    phase: str,
    snapshot_path: Path,
    recorded: str | None,
    current: MappedText,
    root: Path,
    files: Mapping[str, Path] | None = None,
    other_formats: Sequence[Path] = (),
) -> str:
    shown = display_path(snapshot_path, root)
    what = "assembled prompt" if phase == "assembled" else f"{phase} phase"
    if recorded is None:
        text = f"procedure {procedure}: no snapshot of the {what} yet ({shown})\n"
        for other in other_formats:
            # The prompt_format changed: the old layout's snapshot is still there.
            text += (
                f"  {display_path(other, root)} holds it in another prompt format; "
                "--snapshot-update replaces it\n"
            )
        return text + "  run `pytest --snapshot-update` to create it"
    from pytest_ooda.compose import annotated_diff

    diff, sources = annotated_diff(
        recorded,
        current.text,
        current.segments,
        old_label=f"{shown} (snapshot)",
        new_label=f"{procedure} {what} (composed now)",
        root=root,
        files=files,
    )
    fragments = [source for source in sources if not _is_structural(source)]
    lines = [f"procedure {procedure}: the {what} differs from its snapshot {shown}"]
    if fragments:
        lines.append("  changed lines come from: " + ", ".join(fragments))
    lines.append("")
    lines.extend(diff)
    lines.append("")
    lines.append("  run `pytest --snapshot-update` to accept the new prompt")
    return "\n".join(lines)


def _is_structural(source: str) -> bool:
    return source in ("preamble", "context") or source.startswith("marker:")


# --------------------------------------------------------------------------- scenarios


# --------------------------------------------------------------------------- live runs


def live_line(record: RunRecord, recorded: str | None = None) -> str:
    """One finished live run, from its results record: scenario (and run k/N of a
    repeated one), status, iterations, time, tokens and cost when reported, where it was
    recorded, and what made it a failure or an infrastructure error."""
    which = f" {record.head.run}/{record.head.runs}" if record.head.runs > 1 else ""
    parts = [
        # The verdict leads: a run that ended `success` but missed an expectation failed.
        f"{record.label}{which}: {record.outcome} status={record.status}",
        f"iterations={len(record.iterations)}",
        f"time={record.elapsed_s:.1f}s",
    ]
    usage = record.usage
    if usage is not None:
        parts.append(f"tokens={usage.input_tokens}in/{usage.output_tokens}out")
    if record.cost is not None:
        parts.append(f"cost=${record.cost:.4f}")
    if record.retries:
        parts.append(f"retries={record.retries}")
    if record.queued_s is not None and record.queued_s >= 0.05:
        # --ooda-max-concurrent: how long the run waited for a slot before it started.
        parts.append(f"queued={record.queued_s:.1f}s")
    if recorded:
        parts.append(f"recorded -> {recorded}")
    if record.problems and record.outcome != "error":
        parts.append(f"({len(record.problems)} expectation(s) not met)")
    if record.outcome == "error":
        parts.append(f"(error: {record.error_reason or 'infrastructure'})")
    return " ".join(parts)

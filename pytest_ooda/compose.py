"""Phase composition and the assembled prompt, with line-level source maps.

``assemble_prompt`` produces exactly the text an AI command receives each iteration
(``shared/spec/composition.md``), in one of two layouts (``PromptFormat``): ours
(``ooda``, the default) or rooda's, byte for byte (``rooda``; ``docs/rooda.md``). Both
compose each phase the same way, as the Go implementation does. The ``*_mapped``
variants also return which lines of that text each fragment produced, so a prompt diff
can name the fragment behind a changed line. Observers registered with
:func:`add_use_observer` hear about every fragment rendered (the fragment-coverage
report is one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.config import (
    PHASES,
    FragmentAction,
    Procedure,
    display_path,
    located_template_error,
)
from pytest_ooda.errors import FragmentError, OodaError, TemplateError
from pytest_ooda.fragments import load_fragment_text
from pytest_ooda.yamlnodes import Mark

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda._types import PromptFormat
    from pytest_ooda.gotemplate import RenderTrace

BAR = "═" * 63

#: What Go's ``strings.TrimSpace`` removes: Unicode's White_Space property. Python's
#: ``str.strip()`` also removes U+001C..U+001F (information separators), which Go keeps.
GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def go_trim_space(text: str) -> str:
    """``text`` without the leading and trailing white space Go's ``strings.TrimSpace``
    removes (not ``str.strip()``, which also removes U+001C..U+001F)."""
    return text.strip(GO_SPACE)


PREAMBLE_ROLE = """Your Role:
You are an AI coding agent executing a structured OODA loop procedure.
This is NOT a template or example - this is an EXECUTABLE PROCEDURE.
You must complete all phases and produce concrete outputs.

Success Signaling:
- When you complete all tasks successfully, output: <promise>SUCCESS</promise>
- If you cannot proceed due to blockers, output: <promise>FAILURE</promise>
- Explanations should come AFTER the signal, not embedded in the tag
- The loop orchestrator uses these signals to determine iteration outcome."""

PHASE_HEADINGS = {
    "observe": ("PHASE 1: OBSERVE", "Execute these observation tasks to gather information."),
    "orient": (
        "PHASE 2: ORIENT",
        "Analyze the information you gathered and form your understanding.",
    ),
    "decide": ("PHASE 3: DECIDE", "Make decisions about what actions to take."),
    "act": (
        "PHASE 4: ACT",
        "Execute the actions you decided on. Modify files, run commands, commit changes.",
    ),
}


@dataclass(frozen=True)
class Segment:
    """Lines ``start_line..end_line`` (1-based, inclusive) of a composed text and their source.

    ``source`` is a fragment's :meth:`FragmentAction.source_label` (``builtin:…``, the
    relative path, or ``inline``), or ``preamble``, ``context``, ``marker:<phase>``.
    """

    start_line: int
    end_line: int
    source: str


@dataclass(frozen=True)
class MappedText:
    """A composed text with the segments that produced its lines."""

    text: str
    segments: tuple[Segment, ...]

    def source_of(self, line: int) -> str | None:
        """The source of 1-based ``line``, or ``None`` for separator lines."""
        for segment in self.segments:
            if segment.start_line <= line <= segment.end_line:
                return segment.source
        return None


@dataclass(frozen=True)
class FragmentUse:
    """One fragment rendered into a prompt (what observers receive)."""

    action: FragmentAction
    file: Path | None
    procedure: str | None
    phase: str | None
    trace: RenderTrace | None


_observers: list[Callable[[FragmentUse], None]] = []


def add_use_observer(fn: Callable[[FragmentUse], None]) -> Callable[[], None]:
    """Call ``fn`` for every fragment rendered from now on; returns a function removing it."""
    _observers.append(fn)

    def remove() -> None:
        if fn in _observers:
            _observers.remove(fn)

    return remove


def _where(procedure: str | None, phase: str | None, index: int | None) -> str:
    parts = []
    if procedure is not None:
        parts.append(f"procedure {procedure}")
    if phase is not None:
        parts.append(phase if index is None else f"{phase}[{index}]")
    return ": ".join(parts) if parts else "fragment"


def render_action(
    action: FragmentAction,
    *,
    procedure: str | None = None,
    phase: str | None = None,
    index: int | None = None,
) -> str:
    """The text of one fragment action: loaded, then rendered when it has parameters.

    Not stripped; :func:`compose_phase` strips. Template errors are re-raised at the
    fragment's config location.
    """
    try:
        text = load_fragment_text(action)
    except FragmentError as exc:
        # The error points into the fragment file; say which config entry uses it.
        loc = action.location
        used_by = f"used by {_where(procedure, phase, index)}"
        if loc.file is not None:
            used_by += f" at {display_path(loc.file)}:{loc.line}:{loc.column}"
        raise FragmentError(
            exc.message,
            file=exc.file,
            line=exc.line,
            column=exc.column,
            hint=f"{exc.hint}\n  {used_by}" if exc.hint else used_by,
        ) from None
    trace: RenderTrace | None = None
    if action.parameters:
        from pytest_ooda import gotemplate

        if _observers:
            trace = gotemplate.RenderTrace()
        try:
            text = gotemplate.render(text, action.parameters, name="fragment", trace=trace)
        except TemplateError as exc:
            loc = action.location
            key = "path" if action.path is not None else "content"
            key_loc = action.key_locations.get(key, loc)
            raise located_template_error(
                exc,
                action,
                _where(procedure, phase, index),
                _display_file(loc.file),
                Mark(key_loc.line, key_loc.column),
            ) from None
    if _observers:
        use = FragmentUse(action, action.file, procedure, phase, trace)
        for observer in tuple(_observers):
            observer(use)
    return text


def _display_file(file: Path | None) -> str | None:
    return display_path(file) if file is not None else None


def _pieces(
    actions: Sequence[FragmentAction], procedure: str | None, phase: str | None
) -> list[tuple[str, str]]:
    """Each fragment's rendered text, trimmed as Go trims it, with its source label.

    Empty pieces at either end are dropped: Go trims the joined phase text too, so their
    separators never reach the prompt (an empty piece in the middle keeps both).
    """
    out = []
    for index, action in enumerate(actions):
        text = go_trim_space(render_action(action, procedure=procedure, phase=phase, index=index))
        out.append((text, action.source_label()))
    start, end = 0, len(out)
    while start < end and not out[start][0]:
        start += 1
    while end > start and not out[end - 1][0]:
        end -= 1
    return out[start:end]


def compose_phase(
    actions: Sequence[FragmentAction], *, procedure: str | None = None, phase: str | None = None
) -> str:
    """One phase's text: each fragment trimmed, joined with a blank line, the whole
    trimmed again (``""`` if nothing is left), as the Go implementation composes it."""
    return "\n\n".join(text for text, _ in _pieces(actions, procedure, phase))


class _Builder:
    """Accumulates text blocks separated by blank lines, remembering each block's lines."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.segments: list[Segment] = []
        self.line = 1

    def add(self, text: str, source: str | None, *, gap: bool = True) -> None:
        if self.blocks:
            # A gap is a blank line between blocks; without one the block starts on the
            # line right after the previous block.
            self.blocks.append("\n\n" if gap else "\n")
            self.line += 2 if gap else 1
        self.blocks.append(text)
        lines = text.count("\n") + 1
        if source is not None and text:
            self.segments.append(Segment(self.line, self.line + lines - 1, source))
        self.line += lines - 1

    def result(self, *, trailing_newline: bool) -> MappedText:
        text = "".join(self.blocks)
        if trailing_newline:
            text = text.rstrip("\n") + "\n"
        return MappedText(text, tuple(self.segments))


def compose_phase_mapped(
    actions: Sequence[FragmentAction], *, procedure: str | None = None, phase: str | None = None
) -> MappedText:
    """:func:`compose_phase` with the lines each fragment produced."""
    builder = _Builder()
    for text, source in _pieces(actions, procedure, phase):
        builder.add(text, source)
    return builder.result(trailing_newline=False)


def _context_blocks(context: Sequence[str], cwd: Path | None) -> list[str]:
    base = Path.cwd() if cwd is None else cwd
    blocks = []
    for value in context:
        # Context is free text unless it names a readable file; a value that merely
        # looks like a path must not fail the run.
        text = _context_file_text(value, base)
        if text is not None:
            blocks.append(f"Source: {_valid_text(value)}\n\n{go_trim_space(text)}")
        else:
            blocks.append(go_trim_space(_valid_text(value)))
    return blocks


def _context_file_text(value: str, base: Path) -> str | None:
    """The text of the file a context value names, or ``None`` when it names none."""
    if not value or "\n" in value or len(value) >= 4096:
        return None
    candidate = Path(value)
    if not candidate.is_absolute():
        candidate = base / candidate
    try:
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    return None


def _valid_text(value: str) -> str:
    """``value`` with undecodable command-line bytes replaced by U+FFFD.

    Python hands argv bytes that are not UTF-8 over as lone surrogates; they cannot be
    encoded for the AI's stdin, a recording or a terminal.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    return value


def assemble_prompt_mapped(
    procedure: Procedure,
    *,
    iteration: int | None = None,
    max_iterations: int | None = None,
    context: Sequence[str] = (),
    cwd: Path | None = None,
) -> MappedText:
    """:func:`assemble_prompt` with the lines each part produced."""
    layout = LAYOUTS[procedure.prompt_format]
    return layout(procedure, iteration, max_iterations, tuple(context), cwd)


def _assemble_ooda(
    procedure: Procedure,
    iteration: int | None,
    max_iterations: int | None,
    context: Sequence[str],
    cwd: Path | None,
) -> MappedText:
    """pytest-ooda's own layout: a header, the role, the context, then each phase."""
    builder = _Builder()
    head = f"{BAR}\nOODA PROCEDURE EXECUTION\n{BAR}\n\nProcedure: {procedure.title}"
    if iteration is not None:
        limit = f"of {max_iterations}" if max_iterations is not None else "(unlimited)"
        head += f"\n\nIteration: {iteration} {limit}"
    builder.add(head + "\n\n" + PREAMBLE_ROLE, "preamble")
    if context:
        builder.add(f"{BAR}\nCONTEXT\n{BAR}", "context")
        for index, block in enumerate(_context_blocks(context, cwd)):
            builder.add(block, "context", gap=index > 0)
    for phase, actions in procedure.phases().items():
        pieces = _pieces(actions, procedure.name, phase)
        if not pieces:
            continue
        title, instruction = PHASE_HEADINGS[phase]
        builder.add(f"{BAR}\n{title}\n{instruction}\n{BAR}", f"marker:{phase}")
        first = True
        for text, source in pieces:
            if not text:
                # An empty piece still contributes its "\n\n" separator to the phase text.
                builder.add("", None, gap=not first)
                first = False
                continue
            builder.add(text, source, gap=not first)
            first = False
    return builder.result(trailing_newline=True)


class _RawBuilder:
    """Accumulates raw text, remembering the lines each non-empty part produced."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.segments: list[Segment] = []
        self.line = 1

    def add(self, text: str, source: str | None = None) -> None:
        body = text.strip("\n")
        if source is not None and body:
            start = self.line + len(text) - len(text.lstrip("\n"))
            self.segments.append(Segment(start, start + body.count("\n"), source))
        self.parts.append(text)
        self.line += text.count("\n")

    def result(self) -> MappedText:
        return MappedText("".join(self.parts), tuple(self.segments))


def _assemble_rooda(
    procedure: Procedure,
    iteration: int | None,
    max_iterations: int | None,
    context: Sequence[str],
    cwd: Path | None,
) -> MappedText:
    """rooda's layout, byte for byte (its ``AssemblePrompt``): its own header line, no
    ``Procedure:`` line without a display name, two blank lines after the preamble and
    one at the end, and a ``=== CONTEXT ===`` block whose values are not trimmed."""
    out = _RawBuilder()
    head = f"{BAR}\nROODA PROCEDURE EXECUTION\n{BAR}\n\n"
    if procedure.display:
        head += f"Procedure: {procedure.display}\n\n"
    if iteration is not None:
        limit = f" of {max_iterations}" if max_iterations is not None else " (unlimited)"
        head += f"Iteration: {iteration}{limit}\n\n"
    out.add(head + PREAMBLE_ROLE + "\n", "preamble")
    out.add("\n\n")
    # rooda joins its --context values with a blank line and splits them again there,
    # so a value holding a blank line is several values.
    joined = "\n\n".join(context)
    if joined:
        out.add("=== CONTEXT ===\n", "context")
        base = Path.cwd() if cwd is None else cwd
        values = joined.split("\n\n")
        for index, value in enumerate(values):
            if not go_trim_space(value):
                continue
            text = _context_file_text(value, base)
            if text is not None:
                out.add(f"Source: {_valid_text(value)}\n\n", "context")
            out.add(text if text is not None else _valid_text(value), "context")
            if index < len(values) - 1:
                out.add("\n\n")
        out.add("\n\n")
    for phase, actions in procedure.phases().items():
        pieces = _pieces(actions, procedure.name, phase)
        if not pieces:
            continue
        title, instruction = PHASE_HEADINGS[phase]
        out.add(f"{BAR}\n{title}\n{instruction}\n{BAR}\n", f"marker:{phase}")
        for index, (text, source) in enumerate(pieces):
            if index:
                out.add("\n\n")
            out.add(text, source)
        out.add("\n\n")
    return out.result()


def _assemble_raw(
    procedure: Procedure,
    iteration: int | None,
    max_iterations: int | None,
    context: Sequence[str],
    cwd: Path | None,
) -> MappedText:
    """The fragments alone, phase after phase, each trimmed and a blank line between,
    then the context values: no header, no preamble, no iteration line. What an agent's
    own prompt needs — a slash command must be the first thing it reads."""
    builder = _Builder()
    for phase, actions in procedure.phases().items():
        for text, source in _pieces(actions, procedure.name, phase):
            builder.add(text, source)
    for block in _context_blocks(context, cwd):
        builder.add(block, "context")
    return builder.result(trailing_newline=False)


#: The prompt layouts, by ``prompt_format``: a new format is one function and one entry
#: here (and its name in ``_types.PromptFormat``).
LAYOUTS: dict[
    PromptFormat,
    Callable[[Procedure, int | None, int | None, Sequence[str], Path | None], MappedText],
] = {"ooda": _assemble_ooda, "rooda": _assemble_rooda, "raw": _assemble_raw}


def prompt_sha256(procedure: Procedure, prompt: str) -> str:
    """The sha256 recordings and results keep of ``prompt`` as ``procedure`` sends it:
    of the bytes the AI receives (a ``!!binary`` parameter's surrogate escapes as their
    bytes) and, for a procedure whose runs install agent material (a skill, a plugin),
    of each installed file's digest after them — so an edited SKILL.md is another
    prompt: a replay drifts, a comparison sees two versions."""
    import hashlib

    digest = hashlib.sha256(prompt.encode("utf-8", "surrogateescape"))
    if procedure.material:
        digest.update(b"\0material\n")
        for item in procedure.material:
            digest.update(f"{item.section} {item.source} {item.sha256}\n".encode())
    return digest.hexdigest()


def assemble_prompt(
    procedure: Procedure,
    *,
    iteration: int | None = None,
    max_iterations: int | None = None,
    context: Sequence[str] = (),
    cwd: Path | None = None,
) -> str:
    """The whole prompt for one iteration (``iteration=None``: no ``Iteration:`` line),
    in the layout the config decided for the procedure (``procedure.prompt_format``)."""
    return assemble_prompt_mapped(
        procedure,
        iteration=iteration,
        max_iterations=max_iterations,
        context=context,
        cwd=cwd,
    ).text


__all__ = [
    "PHASES",
    "FragmentUse",
    "MappedText",
    "OodaError",
    "Segment",
    "add_use_observer",
    "assemble_prompt",
    "assemble_prompt_mapped",
    "compose_phase",
    "compose_phase_mapped",
    "prompt_sha256",
    "render_action",
]


# --------------------------------------------------------------------------- prompt diffs


def _sources_for(lines: range, segments: Sequence[Segment]) -> list[str]:
    """Segment sources overlapping 1-based ``lines`` (a point when the range is empty)."""
    first, last = lines.start, max(lines.stop - 1, lines.start)
    found: list[str] = []
    for segment in segments:
        overlaps = segment.end_line >= first and segment.start_line <= last
        if overlaps and segment.source not in found:
            found.append(segment.source)
    return found


def _display_source(source: str, root: Path | None, files: Mapping[str, Path]) -> str:
    """A fragment source as a diff names it: the file under ``root`` when it lies there."""
    if root is None or source.startswith("builtin:") or source not in files:
        return source
    shown = display_path(files[source], root)
    return source if Path(shown).is_absolute() else shown


def annotated_diff(
    old: str,
    new: str,
    segments: Sequence[Segment],
    *,
    old_label: str,
    new_label: str,
    root: Path | None = None,
    files: Mapping[str, Path] | None = None,
    context: int = 3,
) -> tuple[list[str], list[str]]:
    """A unified diff of ``old`` → ``new`` plus the sources of the changed lines.

    ``segments`` map lines of ``new`` to the fragment that produced them. Each hunk
    header ends with the fragment files its changes come from (like git's function
    context), and the second return value lists every such file once, in order.
    Deleted lines are attributed to the fragment at the point of deletion. ``files``
    maps a segment source (the path as written in the config) to the resolved file, so
    sources are shown relative to ``root``.
    """
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    import difflib

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    out: list[str] = [f"--- {old_label}", f"+++ {new_label}"]
    all_sources: list[str] = []
    for group in matcher.get_grouped_opcodes(context):
        sources: list[str] = []
        for tag, _i1, _i2, j1, j2 in group:
            if tag == "equal":
                continue
            # j1..j2 are 0-based; a pure deletion (j1 == j2) sits just after line j1.
            span = range(j1 + 1, j2 + 1) if j2 > j1 else range(max(j1, 1), max(j1, 1) + 1)
            for source in _sources_for(span, segments):
                shown = _display_source(source, root, files or {})
                if shown not in sources:
                    sources.append(shown)
        for shown in sources:
            if shown not in all_sources:
                all_sources.append(shown)
        out.append(_hunk_header(group) + (f"  {', '.join(sources)}" if sources else ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old_lines[i1:i2])
                continue
            out.extend("-" + line for line in old_lines[i1:i2])
            out.extend("+" + line for line in new_lines[j1:j2])
    if old.endswith("\n") != new.endswith("\n"):
        out.append("\\ the two texts differ in their final newline")
    return out, all_sources


def _hunk_header(group: Sequence[tuple[str, int, int, int, int]]) -> str:
    first, last = group[0], group[-1]
    i1, i2, j1, j2 = first[1], last[2], first[3], last[4]

    def span(start: int, stop: int) -> str:
        length = stop - start
        begin = start + 1 if length else start
        return f"{begin}" if length == 1 else f"{begin},{length}"

    return f"@@ -{span(i1, i2)} +{span(j1, j2)} @@"

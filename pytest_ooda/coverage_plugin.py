"""A coverage.py plugin that measures fragment files the way it measures Python files.

Enable it with ``[tool.coverage.run] plugins = ["pytest_ooda.coverage_plugin"]``. Each
time a fragment is composed (``compose.add_use_observer``), a tiny code object whose
``co_filename`` is the fragment file and whose line numbers are the fragment lines that
reached the prompt is executed. coverage.py's tracer therefore sees frames "in" the
``.md`` file; :class:`FragmentCoveragePlugin` claims those files and reports them, so
``coverage report``/``html``/``json`` list fragments next to the Python files, and
``coverage combine`` merges them across processes (xdist workers) like any other file.

A plain fragment counts as fully covered when composed; a template's lines count when
rendering produced output from them (the ``RenderTrace`` filled by ``gotemplate``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import coverage
import coverage.plugin

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from types import CodeType, FrameType

    from coverage.plugin_support import Plugins

    from pytest_ooda.compose import FragmentUse

__all__ = [
    "FragmentCoveragePlugin",
    "connect",
    "coverage_init",
    "executed_lines_for_use",
    "mark_fragment",
    "statement_lines",
]

_lock = threading.Lock()
_claimed: set[str] = set()
_code_cache: dict[tuple[str, frozenset[int]], CodeType] = {}
_canonical_cache: dict[str, str] = {}
_plain_cache: dict[tuple[str, int, int], frozenset[int]] = {}
_connected = False


def statement_lines(text: str) -> set[int]:
    """The 1-based lines of a fragment that can put text into a prompt (see
    :func:`pytest_ooda.gotemplate.statement_lines`)."""
    from pytest_ooda.gotemplate import statement_lines as template_statement_lines

    return template_statement_lines(text)


def _claim(path: str) -> None:
    with _lock:
        _claimed.add(path)


def _code_for(path: str, lines: frozenset[int]) -> CodeType:
    key = (path, lines)
    with _lock:
        code = _code_cache.get(key)
    if code is None:
        last = max(lines, default=0)
        source = "\n".join("pass" if n in lines else "" for n in range(1, last + 1))
        code = compile(source, path, "exec")
        with _lock:
            _code_cache[key] = code
    return code


def _canonical(path: str | Path) -> str:
    # coverage.py hands file tracers real paths; resolving is a few syscalls, so cache it.
    key = str(path)
    with _lock:
        found = _canonical_cache.get(key)
    if found is None:
        found = str(Path(key).resolve())
        with _lock:
            _canonical_cache[key] = found
    return found


def mark_fragment(path: str | Path, lines: Iterable[int]) -> None:
    """Record ``lines`` of the fragment file ``path`` as executed for coverage.py.

    With no lines the file is still claimed, so it shows in reports as 0 % covered.
    Harmless when coverage.py is not measuring: the code object does nothing.
    """
    filename = _canonical(path)
    _claim(filename)
    wanted = lines if isinstance(lines, frozenset) else frozenset(lines)
    if any(n < 1 for n in wanted):
        wanted = frozenset(n for n in wanted if n >= 1)
    exec(_code_for(filename, wanted), {"__name__": "__ooda_fragment__"})


def _plain_lines(file: Path) -> frozenset[int] | None:
    try:
        stat = file.stat()
    except OSError:
        return None
    key = (str(file), stat.st_mtime_ns, stat.st_size)
    with _lock:
        lines = _plain_cache.get(key)
    if lines is None:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        lines = frozenset(n for n, line in enumerate(text.splitlines(), 1) if line.strip())
        with _lock:
            _plain_cache[key] = lines
    return lines


def _lines_for_use(use: FragmentUse) -> frozenset[int] | None:
    if use.file is None:
        return None
    if use.trace is not None:
        return frozenset(use.trace.lines)
    return _plain_lines(Path(use.file))


def executed_lines_for_use(use: FragmentUse) -> set[int] | None:
    """The fragment lines one composition put into the prompt (``None`` for inline text)."""
    lines = _lines_for_use(use)
    return set(lines) if lines is not None else None


def _on_use(use: FragmentUse) -> None:
    lines = _lines_for_use(use)
    if lines is not None and use.file is not None:
        mark_fragment(use.file, lines)


def connect() -> None:
    """Start feeding compositions to coverage.py (idempotent)."""
    global _connected
    with _lock:
        if _connected:
            return
        _connected = True
    # Imported here, not at module level: `coverage report` loads this plugin too and
    # has no use for the composition machinery unless it is measuring.
    from pytest_ooda.compose import add_use_observer

    add_use_observer(_on_use)


class FragmentTracer(coverage.plugin.FileTracer):
    """Traces the synthetic frames :func:`mark_fragment` runs "inside" a fragment file."""

    def __init__(self, filename: str) -> None:
        self._filename = filename

    def source_filename(self) -> str:
        return self._filename

    def line_number_range(self, frame: FrameType) -> tuple[int, int]:
        return frame.f_lineno, frame.f_lineno


class FragmentReporter(coverage.plugin.FileReporter):
    """Reports a fragment's statement lines (see :func:`statement_lines`) and its text."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self._text: str | None = None

    def source(self) -> str:
        if self._text is None:
            try:
                self._text = Path(self.filename).read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise coverage.CoverageException(
                    f"fragment file {self.filename} could not be read: {exc}"
                ) from exc
        return self._text

    def lines(self) -> set[int]:
        return statement_lines(self.source())


class FragmentCoveragePlugin(coverage.plugin.CoveragePlugin):
    """coverage.py plugin: claims fragment files and reports them."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        options = options or {}
        suffixes = str(options.get("fragment_suffixes", ".md")).split()
        self._suffixes = tuple(s if s.startswith(".") else f".{s}" for s in suffixes)
        self._folder = str(options.get("fragment_folder", "fragments"))

    def file_tracer(self, filename: str) -> FragmentTracer | None:
        with _lock:
            claimed = filename in _claimed
        return FragmentTracer(filename) if claimed else None

    def file_reporter(self, filename: str) -> FragmentReporter:
        return FragmentReporter(filename)

    def find_executable_files(self, src_dir: str) -> Iterator[str]:
        # Lets `source = [...]` list never-composed fragments at 0 % like unimported modules.
        for suffix in self._suffixes:
            for path in sorted(Path(src_dir).rglob(f"*{suffix}")):
                if self._folder in path.parts[:-1] and path.is_file():
                    yield str(path)


def coverage_init(reg: Plugins, options: dict[str, Any]) -> None:
    """Entry point coverage.py calls for ``plugins = ["pytest_ooda.coverage_plugin"]``."""
    reg.add_file_tracer(FragmentCoveragePlugin(options))
    connect()

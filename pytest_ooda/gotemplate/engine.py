"""Rendering: the sandboxed Jinja2 environment, the parse and compile caches, and
``render``/``check`` with Go's error messages.

``render(source, params)`` behaves like Go's ``template.New("fragment").Parse(source)``
followed by ``Execute`` with ``params`` as ``map[string]interface{}`` decoded from YAML;
a ``RenderTrace`` records which lines produced output and which branch arms ran (for
fragment coverage).
"""

from __future__ import annotations

import datetime
import functools
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import TemplateError
from pytest_ooda.gotemplate.budget import (
    Budget,
    BudgetExceeded,
    Limits,
    default_limits,
)
from pytest_ooda.gotemplate.compiler import Compiler, NodeInfo
from pytest_ooda.gotemplate.gofmt import U8, U64, GoKey, GoTime
from pytest_ooda.gotemplate.parser import ParseError, Tree, parse
from pytest_ooda.gotemplate.runtime import FILTERS, GoExecError

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment


@dataclass(frozen=True)
class Branch:
    """One arm of a branch point: ``construct`` is ``if``/``range``/``with``; ``arm`` is
    ``then``/``else``/``else-if-N`` (if, with) or ``body``/``empty`` (range)."""

    line: int
    construct: str
    arm: str


@dataclass
class RenderTrace:
    """Filled by ``render``: template lines (1-based) whose text or actions produced
    output, and the branch arms that were executed."""

    lines: set[int] = field(default_factory=set)
    taken: set[Branch] = field(default_factory=set)


# -- Jinja2 environment ------------------------------------------------------------------


def _trace_lines(trace: RenderTrace, lines: tuple[int, ...]) -> str:
    trace.lines.update(lines)
    return ""


def _trace_action(trace: RenderTrace, line: int, text: str) -> str:
    if text:
        trace.lines.add(line)
    return text


def _trace_branch(trace: RenderTrace, line: int, construct: str, arm: str) -> str:
    trace.taken.add(Branch(line, construct, arm))
    return ""


def _call_template(dot: Any, state: _RenderState, index: int, nid: int) -> str:
    return state.call(index, dot, nid)


@functools.cache
def _environment() -> SandboxedEnvironment:
    """The one Jinja environment every template compiles in, made on first use (Jinja is
    imported here: checking or analysing a template parses it with the Go port alone)."""
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        autoescape=False,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols"],
        cache_size=0,
        auto_reload=False,
    )
    env.filters.update({"G" + name: fn for name, fn in FILTERS.items()})
    env.filters.update(
        {"Gtl": _trace_lines, "Gta": _trace_action, "Gtb": _trace_branch, "GTPL": _call_template}
    )
    return env


@dataclass
class _Compiled:
    main: int
    templates: list[Template]
    names: list[str]
    nodes: list[NodeInfo]


_CACHE_SIZE = 512
# Hits are plain dict reads (atomic under the GIL); eviction is first-in first-out.
_cache: OrderedDict[tuple[str, str, bool], _Compiled] = OrderedDict()
_parse_cache: OrderedDict[tuple[str, str], dict[str, Tree]] = OrderedDict()
_lock = threading.Lock()


def parse_cached(source: str, name: str) -> dict[str, Tree]:
    """The parse trees of ``source`` (cached); ``TemplateError(kind="parse")`` as Go would."""
    key = (source, name)
    with _lock:
        trees = _parse_cache.get(key)
        if trees is not None:
            _parse_cache.move_to_end(key)
            return trees
    try:
        trees = parse(source, name)
    except ParseError as err:
        raise TemplateError(err.message, kind="parse", template_line=err.line) from None
    except RecursionError:
        raise TemplateError(
            f"template: {name}: control structures nested too deeply for this engine "
            "(Python allows about 90 levels)",
            kind="parse",
        ) from None
    with _lock:
        _parse_cache[key] = trees
        if len(_parse_cache) > _CACHE_SIZE:
            _parse_cache.popitem(last=False)
    return trees


def _compile(source: str, name: str, traced: bool) -> _Compiled:
    key = (source, name, traced)
    compiled = _cache.get(key)
    if compiled is not None:
        return compiled
    trees = parse_cached(source, name)
    names = sorted(trees)
    for inline in (True, False):
        compiler = Compiler(source, trees, traced, inline=inline)
        try:
            sources = compiler.compile_all()
            templates = [_environment().from_string(sources[n].source) for n in names]
            break
        except (RecursionError, SyntaxError, MemoryError):
            # Python caps nesting (about 100 blocks); expanding template calls in
            # place nests deeper, so retry with real calls before giving up.
            continue
    else:
        raise TemplateError(
            f"template: {name}: control structures nested too deeply for this engine "
            "(Python allows about 90 levels)",
            kind="parse",
        )
    compiled = _Compiled(names.index(name), templates, names, compiler.nodes)
    with _lock:
        _cache[key] = compiled
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


class _RenderState(Budget):
    """Per-render data the compiled templates reach through the ``S`` name, and the
    render's budget (one object: renders are hot)."""

    __slots__ = ("at", "compiled", "overflow", "trace")

    def __init__(self, compiled: _Compiled, trace: RenderTrace | None, limits: Limits) -> None:
        self.compiled = compiled
        self.trace = trace
        self.overflow: int | None = None
        self.at = 0
        self.limits = limits
        self.steps = self.depth = self.output = 0

    def run(self, index: int, dot: Any) -> str:
        tmpl = self.compiled.templates[index]
        ctx = tmpl.new_context({"d0": dot, "S": self, "TR": self.trace})
        chunks = tmpl.root_render_func(ctx)
        if self.depth:
            # A called template: its text reaches the output through the caller.
            return "".join(chunks)
        # Read in blocks (C-level islice/sum) so a runaway output is stopped while it is
        # still small, at little cost for ordinary fragments; a short first block means
        # the template is done.
        parts = list(islice(chunks, _BLOCK))
        self.write(sum(map(len, parts)))
        if len(parts) == _BLOCK:
            while block := list(islice(chunks, _BLOCK)):
                parts += block
                self.write(sum(map(len, block)))
        return "".join(parts)

    def call(self, index: int, dot: Any, nid: int) -> str:
        try:
            self.spend(CALL_STEPS)
        except BudgetExceeded as exc:
            raise GoExecError(nid, str(exc)) from None
        if self.depth >= self.limits.max_depth:
            # Go's own message for runaway recursion (which it reports at 100,000 levels):
            # the conformance goldens hold it, and a template that nests calls this deep
            # is that mistake in practice. The limit itself is documented.
            raise GoExecError(nid, "exceeded maximum template depth (100000)")
        self.depth += 1
        try:
            return self.run(index, dot)
        except RecursionError:
            if self.overflow is None:
                self.overflow = nid
            raise
        finally:
            self.depth -= 1


_BLOCK = 64
#: What a ``{{template}}`` call costs in steps: about a hundred times a ``range``
#: element, so 10,000 calls at most under the default budget (a fraction of a second).
CALL_STEPS = 100


# -- parameters ------------------------------------------------------------------------------


_KEY_TYPES = (str, int, float, bool, U8, U64, GoTime, GoKey)


def _go_value(v: Any) -> Any:
    """The ``interface{}`` value yaml.v3 would have produced for a PyYAML value."""
    t = type(v)
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    if isinstance(v, Mapping):
        return {(k if type(k) in _KEY_TYPES else str(k)): _go_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_go_value(x) for x in v]
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, datetime.date):
        return GoTime.from_python(v)
    if isinstance(v, (GoTime, U8, U64)):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return str(v)


def _canonical(v: Any) -> bool:
    """Whether ``v`` already uses only the types the runtime handles natively."""
    t = type(v)
    if t is dict or t is list:
        for x in v.values() if t is dict else v:
            tx = type(x)
            if tx is str or tx is int or tx is float or tx is bool or x is None:
                continue
            if not _canonical(x):
                return False
        return True
    return t in (str, int, float, bool, type(None), GoTime, U8, U64)


def _root(params: Mapping[str, Any] | None) -> dict[str, Any]:
    if params is None:  # Go executes with a nil map just as with an empty one
        return {}
    root = params if type(params) is dict else dict(params)
    if _canonical(root):
        return root
    return {str(k): _go_value(v) for k, v in root.items()}


# -- public API -------------------------------------------------------------------------------


def render(
    source: str,
    params: Mapping[str, Any],
    *,
    name: str = "fragment",
    trace: RenderTrace | None = None,
    limits: Limits | None = None,
) -> str:
    """Render ``source`` with ``params`` exactly as Go 1.19's text/template would, within
    ``limits`` (default: :func:`~pytest_ooda.gotemplate.budget.default_limits`).

    Raises ``TemplateError`` (``kind`` ``"parse"`` or ``"exec"``) with Go's message; past
    a limit, an ``exec`` error shaped like Go's at the node that crossed it.
    """
    compiled = _compile(source, name, trace is not None)
    state = _RenderState(compiled, trace, limits or default_limits())
    try:
        return state.run(compiled.main, _root(params))
    except BudgetExceeded as err:
        # Crossed while writing output or padding: located at the last node evaluated.
        info = compiled.nodes[state.at] if compiled.nodes else None
        if info is None:
            raise TemplateError(f"template: {name}: {err}", kind="exec") from None
        message = (
            f"template: {name}:{info.line}:{info.column}: executing "
            f"{_go_quote(info.template)} at <{info.context}>: {err}"
        )
        raise TemplateError(message, kind="exec", template_line=info.line) from None
    except GoExecError as err:
        info = compiled.nodes[err.nid]
        message = (
            f"template: {name}:{info.line}:{info.column}: executing "
            f"{_go_quote(info.template)} at <{info.context}>: {err.message}"
        )
        raise TemplateError(message, kind="exec", template_line=info.line) from None
    except RecursionError:
        nid = state.overflow
        if nid is None:
            raise TemplateError(
                f"template: {name}: execution nested too deeply", kind="exec"
            ) from None
        info = compiled.nodes[nid]
        message = (
            f"template: {name}:{info.line}:{info.column}: executing "
            f"{_go_quote(info.template)} at <{info.context}>: "
            "exceeded maximum template depth (100000)"
        )
        raise TemplateError(message, kind="exec", template_line=info.line) from None


def _go_quote(s: str) -> str:
    from pytest_ooda.gotemplate.gofmt import quote

    return quote(s)


def check(source: str, *, name: str = "fragment") -> None:
    """Parse ``source``; raise ``TemplateError(kind="parse")`` if Go would reject it."""
    parse_cached(source, name)

"""Static questions about a template, answered from its parse trees (never by regex):
which parameters it reads and where first, whether it hands its whole data on, its
branch arms, and the lines that can put text into a prompt."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.gotemplate.engine import Branch, parse_cached
from pytest_ooda.gotemplate.nodes import (
    ActionNode,
    BranchNode,
    ChainNode,
    CommandNode,
    DotNode,
    FieldNode,
    IdentifierNode,
    IfNode,
    ListNode,
    Node,
    PipeNode,
    RangeNode,
    StringNode,
    TemplateNode,
    TextNode,
    VariableNode,
    WithNode,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from pytest_ooda.gotemplate.parser import Tree

__all__ = [
    "NO_VALUE",
    "Branch",
    "NoValue",
    "branches",
    "first_use_line",
    "no_value_reads",
    "referenced_params",
    "statement_lines",
    "uses_whole_dot",
]

ROOT = "fragment"


@dataclass(frozen=True)
class _Use:
    """A read of the parameter map: ``name`` (``None`` for the whole map) at ``pos``."""

    name: str | None
    pos: int


def _is_root(arg: Node, dot_is_root: bool) -> bool:
    """``.`` while dot is the parameter map, or ``$`` (always the map)."""
    return (isinstance(arg, DotNode) and dot_is_root) or (
        isinstance(arg, VariableNode) and arg.ident == ["$"]
    )


def _passes_root(pipe: PipeNode | None, dot_is_root: bool) -> bool:
    """Whether ``pipe`` is exactly the parameter map (``.`` or ``$``)."""
    if pipe is None or len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 1:
        return False
    return _is_root(pipe.cmds[0].args[0], dot_is_root)


def _uses(trees: dict[str, Tree]) -> Iterator[_Use]:
    """Every read of the parameter map, following templates invoked with it.

    Dot is the map at the top, inside ``if`` and inside a ``with`` of the map itself; a
    ``range`` or another ``with`` moves it. ``$`` is the map everywhere. ``index . "x"``
    reads ``x``; a template called with the map reads what its body reads; any other
    use of the bare map (``{{.}}``, ``{{len $}}``) is a use of the whole map.
    """
    visited: set[str] = set()
    # An explicit stack: templates nest as deep as users write them.
    stack: list[tuple[Node, bool]] = []

    def push_list(lst: ListNode | None, dot_is_root: bool) -> None:
        if lst is not None:
            stack.extend((node, dot_is_root) for node in reversed(lst.nodes))

    def push_tree(name: str) -> None:
        if name in visited or name not in trees:
            return
        visited.add(name)
        push_list(trees[name].root, True)

    def pipe_uses(pipe: PipeNode | None, dot_is_root: bool) -> Iterator[_Use]:
        if pipe is not None:
            for cmd in pipe.cmds:
                yield from command_uses(cmd, dot_is_root)

    def command_uses(cmd: CommandNode, dot_is_root: bool) -> Iterator[_Use]:
        args = cmd.args
        keyed = (
            len(args) >= 3
            and isinstance(args[0], IdentifierNode)
            and args[0].ident == "index"
            and isinstance(args[2], StringNode)
            and _is_root(args[1], dot_is_root)
        )
        if keyed:
            key = args[2]
            assert isinstance(key, StringNode)
            yield _Use(key.text, args[1].pos)
        for index, arg in enumerate(args):
            if keyed and index == 1:
                continue
            yield from arg_uses(arg, dot_is_root)

    def arg_uses(arg: Node, dot_is_root: bool) -> Iterator[_Use]:
        if isinstance(arg, FieldNode):
            if dot_is_root:
                yield _Use(arg.ident[0], arg.pos)
        elif isinstance(arg, VariableNode):
            if arg.ident[0] == "$":
                yield _Use(arg.ident[1] if len(arg.ident) > 1 else None, arg.pos)
        elif isinstance(arg, DotNode):
            if dot_is_root:
                yield _Use(None, arg.pos)
        elif isinstance(arg, PipeNode):
            yield from pipe_uses(arg, dot_is_root)
        elif isinstance(arg, ChainNode):
            yield from arg_uses(arg.node, dot_is_root)

    push_tree(ROOT)
    while stack:
        node, dot_is_root = stack.pop()
        if isinstance(node, ActionNode):
            yield from pipe_uses(node.pipe, dot_is_root)
        elif isinstance(node, BranchNode):
            passes = isinstance(node, WithNode) and _passes_root(node.pipe, dot_is_root)
            if not passes:
                yield from pipe_uses(node.pipe, dot_is_root)
            body_root = (dot_is_root and isinstance(node, IfNode)) or passes
            push_list(node.else_list, dot_is_root)
            push_list(node.list, body_root)
        elif isinstance(node, TemplateNode):
            if _passes_root(node.pipe, dot_is_root):
                push_tree(node.name)
            else:
                yield from pipe_uses(node.pipe, dot_is_root)


def referenced_params(source: str) -> frozenset[str]:
    """Top-level parameter names the template reads (``.x``, ``$.x``, ``index . "x"``).

    Fields read while dot is the parameter map count, including inside templates invoked
    with ``.``; fields read under a ``range``/``with`` that moved dot do not.
    """
    return frozenset(use.name for use in _uses(parse_cached(source, ROOT)) if use.name)


def first_use_line(source: str, name: str) -> int | None:
    """The 1-based line where the template first reads parameter ``name``."""
    positions = [use.pos for use in _uses(parse_cached(source, ROOT)) if use.name == name]
    return _Lines(source).of(min(positions)) if positions else None


#: What Go prints for a value that is not there (a key missing from the map).
NO_VALUE = "<no value>"


@dataclass(frozen=True)
class NoValue:
    """A read of a parameter the data does not hold that put :data:`NO_VALUE` into the
    rendered text, at its first read (1-based ``line`` and ``column`` in the template).
    ``name`` is ``None`` when no top-level parameter is to blame (a field missing from
    a value that is supplied, ``.config.pathz``); ``line`` and ``column`` are then 1."""

    name: str | None
    line: int
    column: int


def no_value_reads(
    source: str, params: Mapping[str, Any], rendered: str | None = None
) -> tuple[NoValue, ...]:
    """The parameters whose absence puts :data:`NO_VALUE` into the rendered text;
    empty when the text holds no more of it than the template's own words do.

    A parameter is to blame when supplying it (as an empty map, which prints as
    ``map[]`` and takes no ``if``) removes a :data:`NO_VALUE`. Only a template that
    rendered one is probed, so the extra renders cost nothing in the common case.
    ``rendered`` is the text already rendered from ``params``, if the caller has it.
    """
    from pytest_ooda.gotemplate.engine import render

    if rendered is None:
        rendered = render(source, params)
    count = rendered.count(NO_VALUE)
    if count <= source.count(NO_VALUE):
        return ()
    first: dict[str, int] = {}
    for use in _uses(parse_cached(source, ROOT)):
        if use.name and use.name not in params:
            first[use.name] = min(use.pos, first.get(use.name, use.pos))
    lines = _Lines(source)
    found: list[NoValue] = []
    for name, pos in sorted(first.items(), key=lambda item: item[1]):
        probe = {**params, name: {}}
        if render(source, probe).count(NO_VALUE) < count:
            line = lines.of(pos)
            found.append(NoValue(name, line, pos - lines.start(line) + 1))
    return tuple(found) or (NoValue(None, 1, 1),)


def uses_whole_dot(source: str) -> bool:
    """Whether the template hands its whole data to something (``{{.}}``, ``{{len $}}``,
    ``{{printf "%v" .}}``): then any parameter may be read indirectly, and which ones
    go unused cannot be decided."""
    return any(use.name is None for use in _uses(parse_cached(source, ROOT)))


def _all_nodes(trees: dict[str, Tree]) -> Iterator[tuple[Node, bool]]:
    """Every node of every defined template, each with whether it is the ``{{if}}`` of
    an ``{{else if}}`` (its arms belong to the chain's first ``{{if}}``)."""
    stack: list[tuple[Node, bool]] = [
        (tree.root, False) for tree in trees.values() if tree.root is not None
    ]
    while stack:
        node, chained = stack.pop()
        yield node, chained
        if isinstance(node, ListNode):
            stack.extend((child, node.is_else_if) for child in node.nodes)
        elif isinstance(node, BranchNode):
            stack.append((node.list, False))
            if node.else_list is not None:
                stack.append((node.else_list, False))


def branches(source: str) -> tuple[Branch, ...]:
    """Every branch arm of the template (all defined templates), in source order."""
    lines = _Lines(source)
    found: list[Branch] = []
    for node, chained in _all_nodes(parse_cached(source, ROOT)):
        line = lines.of(node.pos)
        if isinstance(node, RangeNode):
            found += [Branch(line, "range", "body"), Branch(line, "range", "empty")]
        elif isinstance(node, WithNode):
            found += [Branch(line, "with", "then"), Branch(line, "with", "else")]
        elif isinstance(node, IfNode) and not chained:
            found.extend(_if_arms(node, line))
    found.sort(key=lambda b: b.line)
    return tuple(dict.fromkeys(found))


def _if_arms(node: IfNode, line: int) -> list[Branch]:
    """``then``, one ``else-if-N`` per ``{{else if}}`` of the chain, and ``else``."""
    arms = [Branch(line, "if", "then")]
    tail = node.else_list
    while tail is not None and tail.is_else_if and isinstance(tail.nodes[0], IfNode):
        arms.append(Branch(line, "if", f"else-if-{len(arms)}"))
        tail = tail.nodes[0].else_list
    arms.append(Branch(line, "if", "else"))
    return arms


class _Lines:
    """Offsets to 1-based line numbers, by bisection over the line starts."""

    def __init__(self, source: str) -> None:
        self._starts = [0] + [i + 1 for i, char in enumerate(source) if char == "\n"]

    def of(self, pos: int) -> int:
        return bisect.bisect_right(self._starts, pos)

    def start(self, line: int) -> int:
        """The offset of 1-based ``line``'s first character."""
        return self._starts[line - 1]


def statement_lines(source: str) -> set[int]:
    """The 1-based lines of a fragment that can put text into a prompt.

    Lines holding literal text or an output action count; lines made only of control
    actions (``{{if}}``, ``{{end}}``, comments, ``$x :=``) and blank lines do not, so a
    template whose every rendered line was reached shows as 100 % covered. A text that
    does not parse as a template is all literal: its non-blank lines count.
    """
    from pytest_ooda.errors import TemplateError

    try:
        trees = parse_cached(source, ROOT)
    except TemplateError:
        return {n for n, line in enumerate(source.split("\n"), 1) if line.strip()}
    index = _Lines(source)
    lines: set[int] = set()
    for node, _ in _all_nodes(trees):
        if isinstance(node, TextNode):
            # A text item is the source's own characters from ``pos`` on.
            for offset, part in enumerate(node.text.split("\n")):
                if part.strip():
                    lines.add(index.of(node.pos) + offset)
        elif (isinstance(node, ActionNode) and not node.pipe.decl) or isinstance(
            node, TemplateNode
        ):
            lines.add(index.of(node.pos))
    return lines

"""Compile parsed Go templates to Jinja2 source that calls the Go runtime filters.

Where Jinja2's rules differ from Go's the generated code goes around them:

* Go variables live in a per-invocation ``namespace`` so that ``$x = …`` inside a
  ``range`` updates the outer variable (Jinja2 scopes ``set`` to the loop body).
* ``range … else`` is not Jinja's ``for … else`` (which also runs the else block when
  the first iteration breaks); the else list runs only when nothing was iterated, and a
  ``break`` inside it ends that list alone, as in Go.
* dot (``.``) is a fresh Jinja name per ``range``/``with`` scope; nothing is looked up
  by Jinja itself, so undefined names cannot arise.
* every Go operation is a filter call carrying a node id, so an error names the node
  the way Go's does.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.gotemplate.gofmt import quote
from pytest_ooda.gotemplate.nodes import (
    ActionNode,
    BoolNode,
    BranchNode,
    BreakNode,
    ChainNode,
    CommandNode,
    CommentNode,
    ContinueNode,
    DotNode,
    FieldNode,
    IdentifierNode,
    IfNode,
    ListNode,
    NilNode,
    Node,
    NumberNode,
    PipeNode,
    RangeNode,
    StringNode,
    TemplateNode,
    TextNode,
    VariableNode,
    WithNode,
)

if TYPE_CHECKING:
    from pytest_ooda.gotemplate.parser import Tree

# name -> (fixed argument count, variadic)
SIGNATURES = {
    "and": (1, True),
    "or": (1, True),
    "call": (1, True),
    "html": (0, True),
    "js": (0, True),
    "urlquery": (0, True),
    "index": (1, True),
    "slice": (1, True),
    "len": (1, False),
    "not": (1, False),
    "print": (0, True),
    "println": (0, True),
    "printf": (1, True),
    "eq": (1, True),
    "ne": (2, False),
    "lt": (2, False),
    "le": (2, False),
    "gt": (2, False),
    "ge": (2, False),
}


@dataclass(frozen=True)
class NodeInfo:
    template: str
    line: int
    column: int
    context: str


def jinja_str(s: str) -> str:
    """A Jinja2 string literal for ``s``, ASCII only so no newline normalisation applies."""
    out = ["'"]
    for ch in s:
        code = ord(ch)
        if ch == "'" or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append("'")
    return "".join(out)


def _safe_data(text: str) -> bool:
    return not ("{%" in text or "{#" in text or "{{" in text or "\r" in text or text.endswith("{"))


def last_node(node: Node) -> Node:
    """The node Go's executor last visited after evaluating ``node`` without error."""
    if isinstance(node, PipeNode):
        return last_node(node.cmds[-1])
    if isinstance(node, CommandNode):
        first = node.args[0]
        if isinstance(first, ChainNode):
            return last_node(first.node)
        if isinstance(first, IdentifierNode):
            if len(node.args) > 1:
                return last_node(node.args[-1])
            return first
        if isinstance(first, PipeNode):
            return last_node(first)
        return first
    if isinstance(node, ChainNode):
        return last_node(node.node)
    return node


def dynamic_last(node: Node) -> bool:
    """Whether ``last_node(node)`` depends on how far an ``and``/``or`` evaluated."""
    if isinstance(node, PipeNode):
        return dynamic_last(node.cmds[-1])
    if isinstance(node, CommandNode):
        first = node.args[0]
        if isinstance(first, ChainNode):
            return dynamic_last(first.node)
        if isinstance(first, IdentifierNode):
            if first.ident in ("and", "or") and len(node.args) > 2:
                return True
            return len(node.args) > 1 and dynamic_last(node.args[-1])
        if isinstance(first, PipeNode):
            return dynamic_last(first)
        return False
    if isinstance(node, ChainNode):
        return dynamic_last(node.node)
    return False


def _has_break(lst: ListNode | None) -> bool:
    """Whether a list holds a ``break`` belonging to the enclosing range (not a nested one)."""
    if lst is None:
        return False
    for n in lst.nodes:
        if isinstance(n, BreakNode):
            return True
        if isinstance(n, (IfNode, WithNode)) and (_has_break(n.list) or _has_break(n.else_list)):
            return True
    return False


@dataclass
class _Var:
    expr: str
    wrapped: bool


@dataclass
class CompiledTree:
    name: str
    source: str


@dataclass
class _Scope:
    dot: str
    dot_wrapped: bool


class Compiler:
    """Turns a template set into one Jinja2 source text per named template."""

    def __init__(
        self, source: str, trees: dict[str, Tree], traced: bool, *, inline: bool = True
    ) -> None:
        self.source = source
        self.inline_calls = inline
        self.trees = trees
        self.traced = traced
        self.nodes: list[NodeInfo] = []
        self.template_index = {name: i for i, name in enumerate(sorted(trees))}
        self._ascii = source.isascii()
        self._newlines = [i for i, ch in enumerate(source) if ch == "\n"]
        self._assigned: set[str] | None = None

    # -- node table ---------------------------------------------------------------
    def position(self, pos: int) -> tuple[int, int]:
        """Go's error position: 1-based line, 0-based byte offset within the line."""
        k = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[k - 1] + 1 if k else 0
        if self._ascii:
            return k + 1, pos - start
        return k + 1, len(self.source[start:pos].encode("utf-8", "surrogateescape"))

    def line_of(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def nid(self, node: Node) -> int:
        line, col = self.position(node.pos)
        self.nodes.append(NodeInfo(self.tmpl_name, line, col, node.string()))
        return len(self.nodes) - 1

    # -- per template ---------------------------------------------------------------
    def compile_all(self) -> dict[str, CompiledTree]:
        return {name: self.compile_tree(name, tree) for name, tree in self.trees.items()}

    def compile_tree(self, name: str, tree: Tree) -> CompiledTree:
        self.tmpl_name = name
        self.out: list[str] = []
        self.vars: list[tuple[str, _Var]] = [("$", _Var("d0", False))]
        self.counter = 0
        self.uses_ns = False
        self.loops: list[str] = []  # "range" or "wrap" for each enclosing Jinja loop
        self.inlining: list[str] = []  # defined templates being expanded in place
        self.inline_left = 32  # expansions this template may still make
        if self._assigned is None:
            # The same for every template of the set: computed once, not once per
            # template (10,000 defines would otherwise cost 10,000 full scans).
            self._assigned = self.assigned_names()
        self.assigned = self._assigned
        assert tree.root is not None
        self.walk_list(tree.root, _Scope("d0", False))
        body = "".join(self.out)
        if self.uses_ns:
            body = "{% set ns = namespace() %}" + body
        return CompiledTree(name, body)

    def temp(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def assigned_names(self) -> set[str]:
        """Variable names some ``$x = …`` assigns, anywhere in the template set.

        Only those need a namespace slot (so the assignment reaches an outer scope from
        inside a loop); every other variable is a plain, faster Jinja local."""
        names: set[str] = set()

        def visit(node: Node | None) -> None:
            if node is None:
                return
            if isinstance(node, ListNode):
                for n in node.nodes:
                    visit(n)
            elif isinstance(node, (ActionNode, BranchNode, TemplateNode)):
                pipe = node.pipe
                if pipe is not None and pipe.is_assign:
                    names.update(v.ident[0] for v in pipe.decl)
                    if isinstance(node, RangeNode):
                        names.add("")  # every variable may be written (see range_node)
                if isinstance(node, BranchNode):
                    visit(node.list)
                    visit(node.else_list)

        for tree in self.trees.values():
            visit(tree.root)
        return names

    def new_var(self, name: str, wrapped: bool) -> _Var:
        if name in self.assigned or "" in self.assigned:
            self.uses_ns = True
            var = _Var(f"ns.{self.temp('v')}", wrapped)
        else:
            var = _Var(self.temp("v"), wrapped)
        self.vars.append((name, var))
        return var

    def lookup(self, name: str) -> _Var:
        for vname, var in reversed(self.vars):
            if vname == name:
                return var
        raise AssertionError(f"undefined variable {name}")  # the parser rejects these

    def visible(self, name: str) -> bool:
        """False for ``$x`` read inside its own declaration (``$x := $x``), which Go's
        parser accepts and its executor rejects."""
        return any(vname == name for vname, _ in self.vars)

    def emit(self, text: str) -> None:
        self.out.append(text)

    def assign(self, target: str, value: str) -> None:
        self.emit("{% set " + target + " = " + value + " %}")

    # -- statements ---------------------------------------------------------------
    def walk_list(self, lst: ListNode, scope: _Scope) -> None:
        for node in lst.nodes:
            self.walk(node, scope)

    def walk(self, node: Node, scope: _Scope) -> None:
        if isinstance(node, TextNode):
            self.text(node)
        elif isinstance(node, ActionNode):
            self.action(node, scope)
        elif isinstance(node, IfNode):
            self.if_node(node, scope, None)
        elif isinstance(node, RangeNode):
            self.range_node(node, scope)
        elif isinstance(node, WithNode):
            self.with_node(node, scope)
        elif isinstance(node, TemplateNode):
            self.template_node(node, scope)
        elif isinstance(node, BreakNode):
            self.loop_control("break")
        elif isinstance(node, ContinueNode):
            self.loop_control("continue")
        elif isinstance(node, CommentNode):
            pass
        else:  # pragma: no cover - the parser produces no other nodes
            raise AssertionError(f"unknown node {node!r}")

    def text(self, node: TextNode) -> None:
        if self.traced:
            lines = self.content_lines(node)
            if lines:
                self.emit("{{ TR|Gtl(" + repr(lines) + ") }}")
        if _safe_data(node.text):
            self.emit(node.text)
        else:
            self.emit("{{ " + jinja_str(node.text) + " }}")

    def content_lines(self, node: TextNode) -> tuple[int, ...]:
        first = self.line_of(node.pos)
        return tuple(first + i for i, seg in enumerate(node.text.split("\n")) if seg.strip())

    def action(self, node: ActionNode, scope: _Scope) -> None:
        pipe = node.pipe
        if pipe.decl:
            value = self.pipeline(pipe, scope, convert=True, hoist=True)
            target = self.declare(pipe, 0)
            self.bind(target, value, pipe)
            return
        fused = self.print_field(pipe, scope)
        if fused is not None:
            if self.traced:
                self.emit("{{ TR|Gta(" + str(self.line_of(node.pos)) + ", " + fused + ") }}")
            else:
                self.emit("{{ " + fused + " }}")
            return
        value = self.pipeline(pipe, scope, convert=False, hoist=True)
        if self.traced:
            self.emit("{{ TR|Gta(" + str(self.line_of(node.pos)) + ", (" + value + ")|GP) }}")
        else:
            self.emit("{{ (" + value + ")|GP }}")

    def print_field(self, pipe: PipeNode, scope: _Scope) -> str | None:
        """``{{.name}}`` / ``{{$x.name}}`` as one fused field-and-print call, or None."""
        if len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 1:
            return None
        first = pipe.cmds[0].args[0]
        if isinstance(first, FieldNode) and len(first.ident) == 1:
            recv, wrapped, name = scope.dot, scope.dot_wrapped, first.ident[0]
        elif (
            isinstance(first, VariableNode)
            and len(first.ident) == 2
            and self.visible(first.ident[0])
        ):
            var = self.lookup(first.ident[0])
            recv, wrapped, name = var.expr, var.wrapped, first.ident[1]
        else:
            return None
        flag = "true" if wrapped else "false"
        return f"({recv})|GPF1({jinja_str(name)}, {flag}, {self.nid(first)})"

    def declare(self, pipe: PipeNode, i: int, wrapped: bool = False) -> str:
        var = pipe.decl[i]
        name = var.ident[0]
        if pipe.is_assign:
            if any(vname == name for vname, _ in self.vars):
                return self.lookup(name).expr
            # Go's parser accepts assigning an undeclared variable; execution fails.
            self.vars.append((name, _Var("none", False)))
            return ""
        return self.new_var(name, wrapped).expr

    def bind(self, target: str, value: str, pipe: PipeNode) -> None:
        """Store ``value`` in a declared variable, or fail the way Go's setVar does."""
        if target:
            self.assign(target, value)
            return
        message = f"undefined variable: {pipe.decl[0].ident[0]}"
        self.emit("{{ " + self.fail(value, self.node_ref(pipe), message) + " }}")

    def branch(self, line: int, construct: str, arm: str) -> None:
        if self.traced:
            self.emit("{{ TR|Gtb(" + f"{line}, {jinja_str(construct)}, {jinja_str(arm)}" + ") }}")

    def if_node(self, node: IfNode, scope: _Scope, chain: tuple[int, int] | None) -> None:
        mark = len(self.vars)
        line, depth = chain if chain is not None else (self.line_of(node.pos), 0)
        if node.pipe.decl:
            value = self.pipeline(node.pipe, scope, convert=True, hoist=True)
            target = self.declare(node.pipe, 0)
            self.bind(target, value, node.pipe)
            cond = target or "none"
        else:
            cond = self.pipeline(node.pipe, scope, convert=False, hoist=True)
        self.emit("{% if " + cond + " %}")
        self.branch(line, "if", "then" if depth == 0 else f"else-if-{depth}")
        self.walk_list(node.list, scope)
        else_list = node.else_list
        if else_list is not None or self.traced:
            self.emit("{% else %}")
            if (
                else_list is not None
                and else_list.is_else_if
                and isinstance(else_list.nodes[0], IfNode)
            ):
                self.if_node(else_list.nodes[0], scope, (line, depth + 1))
            else:
                self.branch(line, "if", "else")
                if else_list is not None:
                    self.walk_list(else_list, scope)
        self.emit("{% endif %}")
        del self.vars[mark:]

    def with_node(self, node: WithNode, scope: _Scope) -> None:
        mark = len(self.vars)
        line = self.line_of(node.pos)
        value = self.pipeline(node.pipe, scope, convert=True, hoist=True)
        dot = self.temp("w")
        self.assign(dot, value)
        if node.pipe.decl:
            self.bind(self.declare(node.pipe, 0), dot, node.pipe)
        self.emit("{% if " + dot + " %}")
        self.branch(line, "with", "then")
        self.walk_list(node.list, _Scope(dot, False))
        if node.else_list is not None or self.traced:
            self.emit("{% else %}")
            self.branch(line, "with", "else")
            if node.else_list is not None:
                self.walk_list(node.else_list, scope)
        self.emit("{% endif %}")
        del self.vars[mark:]

    def range_node(self, node: RangeNode, scope: _Scope) -> None:
        mark = len(self.vars)
        line = self.line_of(node.pos)
        pipe = node.pipe
        dynamic = dynamic_last(pipe)
        value = self.pipeline(pipe, scope, convert=True, hoist=True)
        # S (the render state) always goes along: each element is charged to its budget.
        nid_arg = "-1, S" if dynamic else f"{self.nid(last_node(pipe))}, S"
        coll = self.temp("c")
        self.assign(coll, value)
        decl_vars: list[_Var] = []
        for i in range(len(pipe.decl)):
            target = self.declare(pipe, i)
            self.bind(target, coll, pipe)
            if not pipe.is_assign:
                decl_vars.append(self.vars[-1][1])
        if pipe.is_assign:
            # Go's executor stores each element (and index) in whatever variables are
            # on top of its stack, not in the ones named: the innermost declared ones.
            top = self.vars[-len(pipe.decl) :]
            decl_vars = [var for name, var in top if name != "$"]
            if len(decl_vars) != len(top):
                decl_vars = []
        items = self.temp("r")
        dot = self.temp("d")
        saved = [(v, v.wrapped, v.expr) for v in decl_vars]
        if len(pipe.decl) == 2:
            key = self.temp("k")
            self.assign(items, f"({coll})|GR2({nid_arg})")
            self.emit("{% for " + key + ", " + dot + " in " + items + " %}")
            targets = [key, dot]
        else:
            self.assign(items, f"({coll})|GRL({nid_arg})")
            self.emit("{% for " + dot + " in " + items + " %}")
            targets = [dot]
        if pipe.is_assign and len(decl_vars) == 1:
            targets = targets[-1:]
        for var, target in zip(decl_vars, targets, strict=False):
            if var.expr.startswith("ns."):
                self.assign(var.expr, target)
            else:
                var.expr = target
        if decl_vars:
            decl_vars[-1].wrapped = True
        self.branch(line, "range", "body")
        self.loops.append("range")
        self.walk_list(node.list, _Scope(dot, True))
        self.loops.pop()
        self.emit("{% endfor %}")
        for v, wrapped, expr in saved:
            v.wrapped = wrapped
            v.expr = expr
        if node.else_list is not None or self.traced:
            self.emit("{% if not " + items + " %}")
            self.branch(line, "range", "empty")
            if node.else_list is not None:
                if _has_break(node.else_list):
                    self.emit("{% for _ in (1,) %}")
                    self.loops.append("wrap")
                    self.walk_list(node.else_list, scope)
                    self.loops.pop()
                    self.emit("{% endfor %}")
                    self.uses_ns = True
                    self.emit("{% if ns.kont %}{% set ns.kont = false %}")
                    self.loop_control("continue")
                    self.emit("{% endif %}")
                else:
                    self.walk_list(node.else_list, scope)
            self.emit("{% endif %}")
        del self.vars[mark:]

    def loop_control(self, word: str) -> None:
        if word == "continue" and self.loops and self.loops[-1] == "wrap":
            self.uses_ns = True
            self.emit("{% set ns.kont = true %}{% break %}")
            return
        self.emit("{% " + word + " %}")

    def template_node(self, node: TemplateNode, scope: _Scope) -> None:
        nid = self.nid(node)
        if node.name not in self.trees:
            self.emit(
                "{{ (none)|GE("
                + f"{nid}, {jinja_str('template ' + quote(node.name) + ' not defined')}"
                + ") }}"
            )
            return
        dot = "none"
        if node.pipe is not None:
            dot = self.pipeline(node.pipe, scope, convert=True, hoist=True)
        if (
            self.inline_calls
            and node.name not in self.inlining
            and len(self.inlining) < 8
            and self.inline_left > 0
        ):
            self.inline(node.name, dot)
            return
        idx = self.template_index[node.name]
        self.emit("{{ (" + dot + ")|GTPL(S, " + f"{idx}, {nid}" + ") }}")

    def inline(self, name: str, dot: str) -> None:
        """Expand a non-recursive ``{{template}}`` in place: same output and errors as
        a call, without the cost of a fresh Jinja context per invocation."""
        # Expansions per compiled template are capped: a template that calls another
        # twice per level would otherwise grow the code exponentially.
        self.inline_left -= 1
        local = self.temp("i")
        self.assign(local, dot)
        saved = (self.tmpl_name, self.vars, self.loops)
        self.tmpl_name = name
        self.vars = [("$", _Var(local, False))]
        self.loops = []
        self.inlining.append(name)
        root = self.trees[name].root
        assert root is not None
        self.walk_list(root, _Scope(local, False))
        self.inlining.pop()
        self.tmpl_name, self.vars, self.loops = saved

    # -- expressions ----------------------------------------------------------------
    def pipeline(self, pipe: PipeNode, scope: _Scope, *, convert: bool, hoist: bool) -> str:
        final: str | None = None
        before: Node = pipe
        last = len(pipe.cmds) - 1
        for i, cmd in enumerate(pipe.cmds):
            expr = self.command(cmd, scope, final, before)
            if (i < last or convert) and self.may_wrap(cmd):
                expr = f"({expr})|GCV"
            if hoist and i < last:
                name = self.temp()
                self.assign(name, expr)
                expr = name
            final = expr
            before = cmd
        assert final is not None
        return final

    @staticmethod
    def may_wrap(cmd: CommandNode) -> bool:
        first = cmd.args[0]
        if isinstance(first, IdentifierNode):
            return first.ident in ("index", "and", "or")
        return isinstance(first, (FieldNode, ChainNode, VariableNode, DotNode))

    def node_ref(self, node: Node) -> int | None:
        """The node id Go would report after evaluating ``node``; None when that depends
        on where an ``and``/``or`` stopped (then the runtime tracks it in ``S.at``)."""
        if dynamic_last(node):
            return None
        return self.nid(last_node(node))

    def fail(self, final: str | None, nid: int | None, message: str) -> str:
        if nid is None:
            return f"({final or 'none'})|GE(-1, {jinja_str(message)}, S)"
        return f"({final or 'none'})|GE({nid}, {jinja_str(message)})"

    def command(self, cmd: CommandNode, scope: _Scope, final: str | None, before: Node) -> str:
        first = cmd.args[0]
        has_args = len(cmd.args) > 1 or final is not None
        tail = f", {final}" if final is not None else ""
        if isinstance(first, FieldNode):
            return self.field(
                scope.dot, first.ident, scope.dot_wrapped, self.nid(first), has_args, tail
            )
        if isinstance(first, ChainNode):
            if isinstance(first.node, NilNode):
                return self.fail(
                    final, self.nid(first), f"indirection through explicit nil in {first.string()}"
                )
            recv, _ = self.arg(first.node, scope)
            ref = self.node_ref(first.node)
            return self.field(recv, first.fields, False, ref, has_args, tail)
        if isinstance(first, IdentifierNode):
            return self.call(first, cmd.args[1:], final, scope, cmd)
        if isinstance(first, PipeNode):
            if has_args:
                return self.fail(
                    final,
                    self.nid(before) if isinstance(before, PipeNode) else self.node_ref(before),
                    f"can't give argument to non-function {first.string()}",
                )
            return self.pipeline(first, scope, convert=True, hoist=False)
        if isinstance(first, VariableNode):
            if not self.visible(first.ident[0]):
                message = f"undefined variable: {first.ident[0]}"
                return self.fail(final, self.nid(first), message)
            var = self.lookup(first.ident[0])
            if len(first.ident) == 1:
                if has_args:
                    return self.fail(
                        final,
                        self.nid(first),
                        f"can't give argument to non-function {first.string()}",
                    )
                return var.expr
            return self.field(
                var.expr, first.ident[1:], var.wrapped, self.nid(first), has_args, tail
            )
        if has_args:
            return self.fail(
                final, self.nid(first), f"can't give argument to non-function {first.string()}"
            )
        if isinstance(first, NilNode):
            return self.fail(final, self.nid(first), "nil is not a command")
        return self.constant(first, scope)

    def field(
        self,
        recv: str,
        names: list[str],
        wrapped: bool,
        nid: int | None,
        has_args: bool,
        tail: str,
    ) -> str:
        ref = "-1" if nid is None else str(nid)
        flags = f"{'true' if wrapped else 'false'}, {ref}, {'true' if has_args else 'false'}"
        flags += f"{tail or ', none'}, S" if nid is None else tail
        if len(names) == 1:
            return f"({recv})|GF1({jinja_str(names[0])}, {flags})"
        names_lit = "(" + "".join(jinja_str(n) + ", " for n in names) + ")"
        return f"({recv})|GF({names_lit}, {flags})"

    def constant(self, node: Node, scope: _Scope) -> str:
        if isinstance(node, DotNode):
            return scope.dot
        if isinstance(node, BoolNode):
            return "true" if node.value else "false"
        if isinstance(node, StringNode):
            return jinja_str(node.text)
        if isinstance(node, NumberNode):
            return self.number(node)
        raise AssertionError(f"not a constant: {node!r}")

    def number(self, n: NumberNode) -> str:
        text = n.text
        hex_int = (
            len(text) > 2
            and text[0] == "0"
            and text[1] in "xX"
            and not any(c in text for c in "pP")
        )
        if n.is_complex:
            return f"({n.complex128.real!r})|GCX({n.complex128.imag!r})"
        if n.is_float and not hex_int and text[0] != "'" and any(c in text for c in ".eEpP"):
            return f"({n.float64!r})"
        if n.is_int:
            return f"({n.int64})"
        return self.fail(None, self.nid(n), f"{text} overflows int")

    def arg(self, node: Node, scope: _Scope) -> tuple[str, bool]:
        """An argument evaluated for a ``reflect.Value``/``interface{}`` parameter."""
        if isinstance(node, DotNode):
            return scope.dot, scope.dot_wrapped
        if isinstance(node, NilNode):
            return "none", False
        if isinstance(node, FieldNode):
            return self.field(
                scope.dot, node.ident, scope.dot_wrapped, self.nid(node), False, ""
            ), True
        if isinstance(node, VariableNode):
            if not self.visible(node.ident[0]):
                message = f"undefined variable: {node.ident[0]}"
                return self.fail(None, self.nid(node), message), False
            var = self.lookup(node.ident[0])
            if len(node.ident) == 1:
                return var.expr, var.wrapped
            return self.field(
                var.expr, node.ident[1:], var.wrapped, self.nid(node), False, ""
            ), True
        if isinstance(node, PipeNode):
            return self.pipeline(node, scope, convert=True, hoist=False), False
        if isinstance(node, IdentifierNode):
            return self.call(node, [], None, scope, node), node.ident == "index"
        if isinstance(node, ChainNode):
            return self.command(CommandNode(node.pos, [node]), scope, None, node), True
        return self.constant(node, scope), False

    def string_arg(self, node: Node, scope: _Scope) -> str:
        """An argument for a ``string`` parameter (``printf``'s format)."""
        if isinstance(node, StringNode):
            return jinja_str(node.text)
        if isinstance(node, NilNode):
            return self.fail(None, self.nid(node), "cannot assign nil to string")
        if isinstance(node, (BoolNode, NumberNode)):
            return self.fail(None, self.nid(node), f"expected string; found {node.string()}")
        value, _ = self.arg(node, scope)
        ref = self.node_ref(node)
        return f"({value})|GS({'-1, S' if ref is None else ref})"

    def call(
        self, ident: IdentifierNode, args: list[Node], final: str | None, scope: _Scope, site: Node
    ) -> str:
        name = ident.ident
        fixed, variadic = SIGNATURES[name]
        num_in = len(args) + (1 if final is not None else 0)
        id_ident = self.nid(ident)
        if variadic and num_in < fixed:
            return self.fail(
                final,
                id_ident,
                f"wrong number of args for {name}: want at least {fixed} got {len(args)}",
            )
        if not variadic and num_in != fixed:
            return self.fail(
                final, id_ident, f"wrong number of args for {name}: want {fixed} got {num_in}"
            )
        if name in ("and", "or"):
            parts = []
            for a in args:
                part = self.arg(a, scope)[0]
                if len(args) > 1 and not dynamic_last(a):
                    part = f"({part})|GAT(S, {self.nid(last_node(a))})"
                parts.append(part)
            if final is not None:
                parts.append(final)
                joined = f" {name} ".join(f"({p})" for p in parts)
                return f"(({final})|GT and ({joined}))"
            return "(" + f" {name} ".join(f"({p})" for p in parts) + ")"
        if name == "not":
            value = self.arg(args[0], scope)[0] if args else final
            return f"(not ({value}))"
        call_id = self.nid(site) if site is not ident else id_ident
        values: list[str] = []
        wrapped: list[bool] = []
        if name == "printf" and args:
            values.append(self.string_arg(args[0], scope))
            wrapped.append(False)
            rest = args[1:]
        else:
            rest = args
        for a in rest:
            expr, w = self.arg(a, scope)
            values.append(expr)
            wrapped.append(w)
        final_pos = -1
        if final is not None:
            if name == "printf" and not args:
                last = self.nid(ident)
                values.append(f"({final})|GS({last})")
            else:
                values.append(final)
            wrapped.append(False)
            final_pos = len(values) - 1
        if name in ("print", "println", "html", "js", "urlquery"):
            layout = [str(call_id), *values]
            fpos = final_pos + 1 if final_pos >= 0 else -1
        elif name == "printf":
            layout = values
            fpos = final_pos
        elif name == "slice":
            flags = "(" + "".join("true, " if w else "false, " for w in wrapped[1:]) + ")"
            layout = [values[0], str(call_id), flags, *values[1:]]
            fpos = (final_pos + 2 if final_pos > 0 else 0) if final_pos >= 0 else -1
        else:
            layout = [values[0], str(call_id), *values[1:]]
            fpos = (final_pos + 1 if final_pos > 0 else 0) if final_pos >= 0 else -1
        fname = f"G{name}"
        if fpos > 0 and not layout[fpos].isidentifier():
            # Go evaluated the previous pipeline command before this command's
            # arguments; evaluate it first here too, then put it in its place.
            others = [p for i, p in enumerate(layout) if i != fpos]
            return f"({layout[fpos]})|GFIN({jinja_str(fname)}, {fpos}, " + ", ".join(others) + ")"
        head, *tail_args = layout
        return f"({head})|{fname}(" + ", ".join(tail_args) + ")"

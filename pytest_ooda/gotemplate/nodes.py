"""Parse-tree nodes of a Go template, with Go's ``String()`` renderings.

The renderings matter: Go quotes them in execution errors (``at <.x.y>``) and in some
parse errors, so they follow ``text/template/parse/node.go`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Node:
    pos: int

    def string(self) -> str:
        raise NotImplementedError


@dataclass(eq=False)
class TextNode(Node):
    text: str

    def string(self) -> str:
        return self.text


@dataclass(eq=False)
class CommentNode(Node):
    text: str

    def string(self) -> str:
        return "{{" + self.text + "}}"


@dataclass(eq=False)
class IdentifierNode(Node):
    ident: str

    def string(self) -> str:
        return self.ident


@dataclass(eq=False)
class VariableNode(Node):
    ident: list[str]

    def string(self) -> str:
        return ".".join(self.ident)


@dataclass(eq=False)
class DotNode(Node):
    def string(self) -> str:
        return "."


@dataclass(eq=False)
class NilNode(Node):
    def string(self) -> str:
        return "nil"


@dataclass(eq=False)
class FieldNode(Node):
    ident: list[str]

    def string(self) -> str:
        return "".join("." + i for i in self.ident)


@dataclass(eq=False)
class BoolNode(Node):
    value: bool

    def string(self) -> str:
        return "true" if self.value else "false"


@dataclass(eq=False)
class NumberNode(Node):
    text: str
    is_int: bool = False
    is_uint: bool = False
    is_float: bool = False
    is_complex: bool = False
    int64: int = 0
    uint64: int = 0
    float64: float = 0.0
    complex128: complex = 0j

    def string(self) -> str:
        return self.text


@dataclass(eq=False)
class StringNode(Node):
    quoted: str
    text: str

    def string(self) -> str:
        return self.quoted


@dataclass(eq=False)
class CommandNode(Node):
    args: list[Node] = field(default_factory=list)

    def string(self) -> str:
        parts = []
        for arg in self.args:
            if isinstance(arg, PipeNode):
                parts.append("(" + arg.string() + ")")
            else:
                parts.append(arg.string())
        return " ".join(parts)


@dataclass(eq=False)
class PipeNode(Node):
    line: int
    decl: list[VariableNode] = field(default_factory=list)
    cmds: list[CommandNode] = field(default_factory=list)
    is_assign: bool = False

    def string(self) -> str:
        out = ""
        if self.decl:
            out = ", ".join(v.string() for v in self.decl) + " := "
        return out + " | ".join(c.string() for c in self.cmds)


@dataclass(eq=False)
class ChainNode(Node):
    node: Node
    fields: list[str] = field(default_factory=list)

    def string(self) -> str:
        if isinstance(self.node, PipeNode):
            base = "(" + self.node.string() + ")"
        else:
            base = self.node.string()
        return base + "".join("." + f for f in self.fields)


@dataclass(eq=False)
class ListNode(Node):
    nodes: list[Node] = field(default_factory=list)
    is_else_if: bool = False

    def string(self) -> str:
        return "".join(n.string() for n in self.nodes)


@dataclass(eq=False)
class ActionNode(Node):
    line: int
    pipe: PipeNode

    def string(self) -> str:
        return "{{" + self.pipe.string() + "}}"


@dataclass(eq=False)
class BranchNode(Node):
    line: int
    pipe: PipeNode
    list: ListNode
    else_list: ListNode | None
    keyword = ""

    def string(self) -> str:
        out = "{{" + self.keyword + " " + self.pipe.string() + "}}" + self.list.string()
        if self.else_list is not None:
            out += "{{else}}" + self.else_list.string()
        return out + "{{end}}"


@dataclass(eq=False)
class IfNode(BranchNode):
    keyword = "if"


@dataclass(eq=False)
class RangeNode(BranchNode):
    keyword = "range"


@dataclass(eq=False)
class WithNode(BranchNode):
    keyword = "with"


@dataclass(eq=False)
class TemplateNode(Node):
    line: int
    name: str
    pipe: PipeNode | None

    def string(self) -> str:
        from pytest_ooda.gotemplate.gofmt import quote

        out = "{{template " + quote(self.name)
        if self.pipe is not None:
            out += " " + self.pipe.string()
        return out + "}}"


@dataclass(eq=False)
class BreakNode(Node):
    line: int

    def string(self) -> str:
        return "{{break}}"


@dataclass(eq=False)
class ContinueNode(Node):
    line: int

    def string(self) -> str:
        return "{{continue}}"


@dataclass(eq=False)
class EndNode(Node):
    def string(self) -> str:
        return "{{end}}"


@dataclass(eq=False)
class ElseNode(Node):
    line: int

    def string(self) -> str:
        return "{{else}}"

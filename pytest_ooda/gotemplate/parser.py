"""Parser for Go ``text/template``: a port of Go 1.19's recursive-descent parser.

The structure (three-token lookahead, one ``Tree`` per ``define``/``block`` sharing the
lexer) is kept because Go's error messages quote the line of whatever token the
parser last read; reproducing the messages byte for byte needs the same reading order.
"""

from __future__ import annotations

import re
from typing import NoReturn

from pytest_ooda.gotemplate import lexer as lx
from pytest_ooda.gotemplate.gofmt import quote, quote_trunc
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
    ElseNode,
    EndNode,
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

GO_SPACE = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
BUILTIN_FUNCS = frozenset(
    [
        "and",
        "call",
        "html",
        "index",
        "slice",
        "js",
        "len",
        "not",
        "or",
        "print",
        "printf",
        "println",
        "urlquery",
        "eq",
        "ge",
        "gt",
        "le",
        "lt",
        "ne",
    ]
)


class ParseError(Exception):
    """A Go parse error; ``line`` is the template line Go reports."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _Bail(Exception):
    """Internal: a Go-level error raised deep in the parser."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def item_string(item: lx.Item) -> str:
    if item.typ == lx.EOF:
        return "EOF"
    if item.typ == lx.ERROR:
        return item.val
    if item.typ > lx.KEYWORD:
        return f"<{item.val}>"
    if len(item.val.encode("utf-8", "surrogateescape")) > 10:
        return quote_trunc(item.val, 10) + "..."
    return quote(item.val)


def is_empty_tree(node: Node | None) -> bool:
    if node is None or isinstance(node, CommentNode):
        return True
    if isinstance(node, ListNode):
        return all(is_empty_tree(n) for n in node.nodes)
    if isinstance(node, TextNode):
        return node.text.strip(GO_SPACE) == ""
    return False


class _Shared:
    def __init__(self, items: list[lx.Item]) -> None:
        self.items = items
        self.index = 0

    def next_item(self) -> lx.Item:
        item = self.items[self.index]
        if self.index < len(self.items) - 1:
            self.index += 1
        return item


class Tree:
    """One named template being parsed (the top level, a ``define`` or a ``block``)."""

    def __init__(self, name: str, parse_name: str, shared: _Shared, tree_set: dict[str, Tree]):
        self.name = name
        self.parse_name = parse_name
        self.shared = shared
        self.tree_set = tree_set
        self.root: ListNode | None = None
        self.token: list[lx.Item] = [lx.Item(lx.EOF, 0, "", 0)] * 3
        self.peek_count = 0
        self.vars: list[str] = ["$"]
        self.action_line = 0
        self.range_depth = 0

    # -- token plumbing --------------------------------------------------------
    def next(self) -> lx.Item:
        if self.peek_count > 0:
            self.peek_count -= 1
        else:
            self.token[0] = self.shared.next_item()
        return self.token[self.peek_count]

    def backup(self) -> None:
        self.peek_count += 1

    def backup2(self, t1: lx.Item) -> None:
        self.token[1] = t1
        self.peek_count = 2

    def backup3(self, t2: lx.Item, t1: lx.Item) -> None:
        self.token[1] = t1
        self.token[2] = t2
        self.peek_count = 3

    def peek(self) -> lx.Item:
        if self.peek_count > 0:
            return self.token[self.peek_count - 1]
        self.peek_count = 1
        self.token[0] = self.shared.next_item()
        return self.token[0]

    def next_non_space(self) -> lx.Item:
        while True:
            token = self.next()
            if token.typ != lx.SPACE:
                return token

    def peek_non_space(self) -> lx.Item:
        token = self.next_non_space()
        self.backup()
        return token

    # -- errors ----------------------------------------------------------------
    def errorf(self, msg: str) -> NoReturn:
        self.root = None
        raise ParseError(
            f"template: {self.parse_name}:{self.token[0].line}: {msg}", self.token[0].line
        )

    def expect(self, expected: int, context: str) -> lx.Item:
        token = self.next_non_space()
        if token.typ != expected:
            self.unexpected(token, context)
        return token

    def expect_one_of(self, e1: int, e2: int, context: str) -> lx.Item:
        token = self.next_non_space()
        if token.typ not in (e1, e2):
            self.unexpected(token, context)
        return token

    def unexpected(self, token: lx.Item, context: str) -> None:
        if token.typ == lx.ERROR:
            extra = ""
            if self.action_line != 0 and self.action_line != token.line:
                extra = f" in action started at {self.parse_name}:{self.action_line}"
                if token.val.endswith(" action"):
                    extra = extra[len(" in action") :]
            self.errorf(f"{item_string(token)}{extra}")
        self.errorf(f"unexpected {item_string(token)} in {context}")

    # -- grammar ---------------------------------------------------------------
    def add(self) -> None:
        tree = self.tree_set.get(self.name)
        if tree is None or is_empty_tree(tree.root):
            self.tree_set[self.name] = self
            return
        if not is_empty_tree(self.root):
            self.errorf(f"template: multiple definition of template {quote(self.name)}")

    def parse(self) -> None:
        self.root = ListNode(self.peek().pos)
        while self.peek().typ != lx.EOF:
            if self.peek().typ == lx.LEFT_DELIM:
                delim = self.next()
                if self.next_non_space().typ == lx.DEFINE:
                    new_t = Tree("definition", self.parse_name, self.shared, self.tree_set)
                    new_t.parse_definition()
                    continue
                self.backup2(delim)
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                self.errorf(f"unexpected {node.string()}")
            self.root.nodes.append(node)

    def parse_definition(self) -> None:
        context = "define clause"
        name = self.expect_one_of(lx.STRING, lx.RAW_STRING, context)
        self.name = self.unquote(name.val)
        self.expect(lx.RIGHT_DELIM, context)
        self.root, end = self.item_list()
        if not isinstance(end, EndNode):
            self.errorf(f"unexpected {end.string()} in {context}")
        self.add()

    def item_list(self) -> tuple[ListNode, Node]:
        lst = ListNode(self.peek_non_space().pos)
        while self.peek_non_space().typ != lx.EOF:
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                return lst, node
            lst.nodes.append(node)
        self.errorf("unexpected EOF")
        raise AssertionError("unreachable")

    def text_or_action(self) -> Node:
        token = self.next_non_space()
        if token.typ == lx.TEXT:
            return TextNode(token.pos, token.val)
        if token.typ == lx.LEFT_DELIM:
            self.action_line = token.line
            try:
                return self.action()
            finally:
                self.action_line = 0
        if token.typ == lx.COMMENT:
            return CommentNode(token.pos, token.val)
        self.unexpected(token, "input")
        raise AssertionError("unreachable")

    def action(self) -> Node:
        token = self.next_non_space()
        typ = token.typ
        if typ == lx.BLOCK:
            return self.block_control()
        if typ == lx.BREAK:
            return self.break_control(token.pos, token.line, "break")
        if typ == lx.CONTINUE:
            return self.break_control(token.pos, token.line, "continue")
        if typ == lx.ELSE:
            return self.else_control()
        if typ == lx.END:
            return EndNode(self.expect(lx.RIGHT_DELIM, "end").pos)
        if typ == lx.IF:
            return self.parse_control(IfNode, True, "if")
        if typ == lx.RANGE:
            return self.parse_control(RangeNode, False, "range")
        if typ == lx.TEMPLATE:
            return self.template_control()
        if typ == lx.WITH:
            return self.parse_control(WithNode, False, "with")
        self.backup()
        token = self.peek()
        return ActionNode(token.pos, token.line, self.pipeline("command", lx.RIGHT_DELIM))

    def break_control(self, pos: int, line: int, word: str) -> Node:
        token = self.next_non_space()
        if token.typ != lx.RIGHT_DELIM:
            self.unexpected(token, "{{" + word + "}}")
        if self.range_depth == 0:
            self.errorf("{{" + word + "}} outside {{range}}")
        return BreakNode(pos, line) if word == "break" else ContinueNode(pos, line)

    def pipeline(self, context: str, end: int) -> PipeNode:
        token = self.peek_non_space()
        pipe = PipeNode(token.pos, token.line)
        while True:  # the "decls" label of Go's parser
            v = self.peek_non_space()
            if v.typ != lx.VARIABLE:
                break
            self.next()
            after = self.peek()
            nxt = self.peek_non_space()
            if nxt.typ in (lx.ASSIGN, lx.DECLARE):
                pipe.is_assign = nxt.typ == lx.ASSIGN
                self.next_non_space()
                pipe.decl.append(VariableNode(v.pos, v.val.split(".")))
                self.vars.append(v.val)
            elif nxt.typ == lx.CHAR and nxt.val == ",":
                self.next_non_space()
                pipe.decl.append(VariableNode(v.pos, v.val.split(".")))
                self.vars.append(v.val)
                if context == "range" and len(pipe.decl) < 2:
                    if self.peek_non_space().typ in (lx.VARIABLE, lx.RIGHT_DELIM, lx.RIGHT_PAREN):
                        continue
                    self.errorf("range can only initialize variables")
                self.errorf(f"too many declarations in {context}")
            elif after.typ == lx.SPACE:
                self.backup3(v, after)
            else:
                self.backup2(v)
            break
        while True:
            token = self.next_non_space()
            if token.typ == end:
                self.check_pipeline(pipe, context)
                return pipe
            if token.typ in (
                lx.BOOL,
                lx.CHAR_CONSTANT,
                lx.COMPLEX,
                lx.DOT,
                lx.FIELD,
                lx.IDENTIFIER,
                lx.NUMBER,
                lx.NIL,
                lx.RAW_STRING,
                lx.STRING,
                lx.VARIABLE,
                lx.LEFT_PAREN,
            ):
                self.backup()
                pipe.cmds.append(self.command())
            else:
                self.unexpected(token, context)

    def check_pipeline(self, pipe: PipeNode, context: str) -> None:
        if not pipe.cmds:
            self.errorf(f"missing value for {context}")
        for i, cmd in enumerate(pipe.cmds[1:]):
            if isinstance(cmd.args[0], (BoolNode, DotNode, NilNode, NumberNode, StringNode)):
                self.errorf(f"non executable command in pipeline stage {i + 2}")

    def parse_control(self, cls: type[BranchNode], allow_else_if: bool, context: str) -> Node:
        mark = len(self.vars)
        try:
            pipe = self.pipeline(context, lx.RIGHT_DELIM)
            if context == "range":
                self.range_depth += 1
            lst, nxt = self.item_list()
            if context == "range":
                self.range_depth -= 1
            else_list: ListNode | None = None
            if isinstance(nxt, ElseNode):
                if allow_else_if and self.peek().typ == lx.IF:
                    self.next()
                    else_list = ListNode(nxt.pos, is_else_if=True)
                    else_list.nodes.append(self.parse_control(IfNode, True, "if"))
                else:
                    else_list, nxt = self.item_list()
                    if not isinstance(nxt, EndNode):
                        self.errorf(f"expected end; found {nxt.string()}")
            return cls(pipe.pos, pipe.line, pipe, lst, else_list)
        finally:
            del self.vars[mark:]

    def else_control(self) -> Node:
        peek = self.peek_non_space()
        if peek.typ == lx.IF:
            return ElseNode(peek.pos, peek.line)
        token = self.expect(lx.RIGHT_DELIM, "else")
        return ElseNode(token.pos, token.line)

    def block_control(self) -> Node:
        context = "block clause"
        token = self.next_non_space()
        name = self.parse_template_name(token, context)
        pipe = self.pipeline(context, lx.RIGHT_DELIM)
        block = Tree(name, self.parse_name, self.shared, self.tree_set)
        block.root, end = block.item_list()
        if not isinstance(end, EndNode):
            self.errorf(f"unexpected {end.string()} in {context}")
        block.add()
        return TemplateNode(token.pos, token.line, name, pipe)

    def template_control(self) -> Node:
        context = "template clause"
        token = self.next_non_space()
        name = self.parse_template_name(token, context)
        pipe = None
        if self.next_non_space().typ != lx.RIGHT_DELIM:
            self.backup()
            pipe = self.pipeline(context, lx.RIGHT_DELIM)
        return TemplateNode(token.pos, token.line, name, pipe)

    def parse_template_name(self, token: lx.Item, context: str) -> str:
        if token.typ in (lx.STRING, lx.RAW_STRING):
            return self.unquote(token.val)
        self.unexpected(token, context)
        raise AssertionError("unreachable")

    def command(self) -> CommandNode:
        cmd = CommandNode(self.peek_non_space().pos)
        while True:
            self.peek_non_space()
            operand = self.operand()
            if operand is not None:
                cmd.args.append(operand)
            token = self.next()
            if token.typ == lx.SPACE:
                continue
            if token.typ in (lx.RIGHT_DELIM, lx.RIGHT_PAREN):
                self.backup()
            elif token.typ != lx.PIPE:
                self.unexpected(token, "operand")
            break
        if not cmd.args:
            self.errorf("empty command")
        return cmd

    def operand(self) -> Node | None:
        node = self.term()
        if node is None:
            return None
        if self.peek().typ == lx.FIELD:
            chain = ChainNode(self.peek().pos, node)
            while self.peek().typ == lx.FIELD:
                chain.fields.append(self.next().val[1:])
            if isinstance(node, FieldNode):
                return FieldNode(chain.pos, chain.string()[1:].split("."))
            if isinstance(node, VariableNode):
                return VariableNode(chain.pos, chain.string().split("."))
            if isinstance(node, (BoolNode, StringNode, NumberNode, NilNode, DotNode)):
                self.errorf(f"unexpected . after term {quote(node.string())}")
            return chain
        return node

    def term(self) -> Node | None:
        token = self.next_non_space()
        typ = token.typ
        if typ == lx.IDENTIFIER:
            if token.val not in BUILTIN_FUNCS:
                self.errorf(f"function {quote(token.val)} not defined")
            return IdentifierNode(token.pos, token.val)
        if typ == lx.DOT:
            return DotNode(token.pos)
        if typ == lx.NIL:
            return NilNode(token.pos)
        if typ == lx.VARIABLE:
            return self.use_var(token.pos, token.val)
        if typ == lx.FIELD:
            return FieldNode(token.pos, token.val[1:].split("."))
        if typ == lx.BOOL:
            return BoolNode(token.pos, token.val == "true")
        if typ in (lx.CHAR_CONSTANT, lx.COMPLEX, lx.NUMBER):
            try:
                return new_number(token.pos, token.val, typ)
            except _Bail as err:
                self.errorf(err.message)
        if typ == lx.LEFT_PAREN:
            return self.pipeline("parenthesized pipeline", lx.RIGHT_PAREN)
        if typ in (lx.STRING, lx.RAW_STRING):
            return StringNode(token.pos, token.val, self.unquote(token.val))
        self.backup()
        return None

    def unquote(self, text: str) -> str:
        try:
            return go_unquote(text)
        except _Bail as err:
            self.errorf(err.message)
            raise AssertionError("unreachable") from err

    def use_var(self, pos: int, name: str) -> Node:
        v = VariableNode(pos, name.split("."))
        if v.ident[0] in self.vars:
            return v
        self.errorf(f"undefined variable {quote(v.ident[0])}")
        raise AssertionError("unreachable")


# -- literals -------------------------------------------------------------------

_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}
_HEX = "0123456789abcdefABCDEF"


def _unquote_char(s: str, i: int, q: str) -> tuple[str, int]:
    """Go's ``strconv.UnquoteChar`` from ``s[i:]``: (decoded text, next index)."""
    ch = s[i]
    if ch == q and q in "'\"":
        raise _Bail("invalid syntax")
    if ch != "\\":
        return ch, i + 1
    if i + 1 >= len(s):
        raise _Bail("invalid syntax")
    c = s[i + 1]
    i += 2
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], i
    if c in "xuU":
        n = {"x": 2, "u": 4, "U": 8}[c]
        digits = s[i : i + n]
        if len(digits) < n or any(d not in _HEX for d in digits):
            raise _Bail("invalid syntax")
        value = int(digits, 16)
        if c == "x":
            return (
                chr(value) if value < 0x80 else bytes([value]).decode("utf-8", "surrogateescape")
            ), i + n
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            raise _Bail("invalid syntax")
        return chr(value), i + n
    if c in "01234567":
        digits = s[i - 1 : i + 2]
        if len(digits) < 3 or any(d not in "01234567" for d in digits):
            raise _Bail("invalid syntax")
        value = int(digits, 8)
        if value > 255:
            raise _Bail("invalid syntax")
        return (
            chr(value) if value < 0x80 else bytes([value]).decode("utf-8", "surrogateescape")
        ), i + 2
    if c in "'\"":
        if c != q:
            raise _Bail("invalid syntax")
        return c, i
    raise _Bail("invalid syntax")


def go_unquote(text: str) -> str:
    """Go's ``strconv.Unquote`` for the two string forms the lexer produces."""
    if len(text) < 2 or text[0] != text[-1]:
        raise _Bail("invalid syntax")
    body = text[1:-1]
    if text[0] == "`":
        if "`" in body:
            raise _Bail("invalid syntax")
        return body.replace("\r", "")
    if text[0] != '"':
        raise _Bail("invalid syntax")
    if "\\" not in body and '"' not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        piece, i = _unquote_char(body, i, '"')
        out.append(piece)
    joined = "".join(out)
    if any("\udc80" <= ch <= "\udcff" for ch in joined):
        # \x escapes can form valid UTF-8 together; re-decode the byte sequence.
        raw = joined.encode("utf-8", "surrogateescape")
        joined = raw.decode("utf-8", "surrogateescape")
    return joined


def _underscore_ok(s: str) -> bool:
    saw = "^"
    i = 0
    if len(s) >= 1 and s[0] in "+-":
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == "0" and s[1].lower() in "box":
        i = 2
        saw = "0"
        hexa = s[1].lower() == "x"
    while i < len(s):
        c = s[i]
        if c.isdigit() or (hexa and c in _HEX):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


def parse_go_int(text: str, signed: bool) -> int | None:
    """``strconv.ParseInt/ParseUint(text, 0, 64)``; None on any error."""
    s = text
    neg = False
    if s[:1] in ("+", "-"):
        if not signed:
            return None
        neg = s[0] == "-"
        s = s[1:]
    if not s:
        return None
    base = 10
    body = s
    if s[0] == "0" and len(s) > 1:
        p = s[1].lower()
        if p == "x":
            base, body = 16, s[2:]
        elif p == "o":
            base, body = 8, s[2:]
        elif p == "b":
            base, body = 2, s[2:]
        else:
            base, body = 8, s[1:]
    if "_" in text and not _underscore_ok(text):
        return None
    body = body.replace("_", "")
    if not body:
        return None
    try:
        value = int(body, base)
    except ValueError:
        return None
    if neg:
        value = -value
    if signed:
        return value if -(1 << 63) <= value < (1 << 63) else None
    return value if value < (1 << 64) else None


_DEC_FLOAT = re.compile(r"[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?")
_HEX_FLOAT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+"
)


def parse_go_float(text: str) -> float | None:
    if "_" in text and not _underscore_ok(text):
        return None
    clean = text.replace("_", "")
    try:
        if _HEX_FLOAT.fullmatch(text):
            value = float.fromhex(clean)
        elif _DEC_FLOAT.fullmatch(text) and any(c.isdigit() for c in clean):
            value = float(clean)
        else:
            return None
    except (ValueError, OverflowError):
        return None
    if value in (float("inf"), float("-inf")):
        return None
    return value


def _simplify_complex(n: NumberNode) -> None:
    n.is_float = n.complex128.imag == 0
    if n.is_float:
        n.float64 = n.complex128.real
        f = n.float64
        n.is_int = f.is_integer() and -(2**63) <= f < 2**63
        if n.is_int:
            n.int64 = int(f)
        n.is_uint = f.is_integer() and 0 <= f < 2**64
        if n.is_uint:
            n.uint64 = int(f)


def new_number(pos: int, text: str, typ: int) -> NumberNode:
    n = NumberNode(pos, text)
    if typ == lx.CHAR_CONSTANT:
        body = text[1:]
        ch, i = _unquote_char(body, 0, "'")
        if body[i:] != "'":
            raise _Bail(f"malformed character constant: {text}")
        code = (
            ord(ch)
            if len(ch) == 1 and not ("\udc80" <= ch <= "\udcff")
            else ch.encode("utf-8", "surrogateescape")[0]
        )
        n.int64 = n.uint64 = code
        n.is_int = n.is_uint = n.is_float = True
        n.float64 = float(code)
        return n
    if typ == lx.COMPLEX:
        value = _parse_complex(text)
        if value is None:
            raise _Bail(f"expected integer; found {text}")
        n.is_complex = True
        n.complex128 = value
        _simplify_complex(n)
        return n
    if text.endswith("i"):
        f = parse_go_float(text[:-1])
        if f is not None:
            n.is_complex = True
            n.complex128 = complex(0, f)
            _simplify_complex(n)
            return n
    u = parse_go_int(text, False)
    if u is not None:
        n.is_uint = True
        n.uint64 = u
    signed = parse_go_int(text, True)
    if signed is not None:
        n.is_int = True
        n.int64 = signed
        if signed == 0:
            n.is_uint = True
            n.uint64 = u or 0
    if n.is_int:
        n.is_float = True
        n.float64 = float(n.int64)
    elif n.is_uint:
        n.is_float = True
        n.float64 = float(n.uint64)
    else:
        f = parse_go_float(text)
        if f is not None:
            if not any(c in text for c in ".eEpP"):
                raise _Bail(f"integer overflow: {quote(text)}")
            n.is_float = True
            n.float64 = f
            if f.is_integer() and -(2**63) <= f < 2**63:
                n.is_int = True
                n.int64 = int(f)
            if f.is_integer() and 0 <= f < 2**64:
                n.is_uint = True
                n.uint64 = int(f)
    if not (n.is_int or n.is_uint or n.is_float):
        raise _Bail(f"illegal number syntax: {quote(text)}")
    return n


def _parse_complex(text: str) -> complex | None:
    m = re.fullmatch(r"([+-]?[^+-]+(?:[eEpP][+-][0-9_]+)?)([+-].*)i", text)
    if not m:
        return None
    re_part = parse_go_float(m.group(1))
    im_part = parse_go_float(m.group(2))
    if re_part is None or im_part is None:
        return None
    return complex(re_part, im_part)


def parse(source: str, name: str) -> dict[str, Tree]:
    """Parse ``source`` as template ``name``; return every template defined by it.

    Raises ``ParseError`` with Go's message.
    """
    items = lx.lex(source)
    tree_set: dict[str, Tree] = {}
    top = Tree(name, name, _Shared(items), tree_set)
    top.parse()
    top.add()
    return tree_set

"""Tokeniser for Go ``text/template`` source, mirroring Go 1.19's lexer state machine.

Positions are character offsets into the source; line numbers are 1-based. Lexical
errors become a final ``ERROR`` item, exactly where Go's lexer would emit one, so the
parser reports them with Go's wording.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

ERROR = 0
BOOL = 1
CHAR = 2
CHAR_CONSTANT = 3
COMMENT = 4
COMPLEX = 5
ASSIGN = 6
DECLARE = 7
EOF = 8
FIELD = 9
IDENTIFIER = 10
LEFT_DELIM = 11
LEFT_PAREN = 12
NUMBER = 13
PIPE = 14
RAW_STRING = 15
RIGHT_DELIM = 16
RIGHT_PAREN = 17
SPACE = 18
STRING = 19
TEXT = 20
VARIABLE = 21
KEYWORD = 22
BLOCK = 23
BREAK = 24
CONTINUE = 25
DOT = 26
DEFINE = 27
ELSE = 28
END = 29
IF = 30
NIL = 31
RANGE = 32
TEMPLATE = 33
WITH = 34

KEYWORDS = {
    ".": DOT,
    "block": BLOCK,
    "break": BREAK,
    "continue": CONTINUE,
    "define": DEFINE,
    "else": ELSE,
    "end": END,
    "if": IF,
    "range": RANGE,
    "nil": NIL,
    "template": TEMPLATE,
    "with": WITH,
}

LEFT = "{{"
RIGHT = "}}"
SPACE_CHARS = " \t\r\n"


class Item(NamedTuple):
    typ: int
    pos: int
    val: str
    line: int


def is_alnum(ch: str) -> bool:
    if ch.isascii():
        return ch == "_" or ch.isalnum()
    cat = unicodedata.category(ch)
    return cat.startswith("L") or cat == "Nd"


def is_space(ch: str) -> bool:
    return ch in SPACE_CHARS and ch != ""


def _has_left_trim(s: str, i: int) -> bool:
    return len(s) >= i + 2 and s[i] == "-" and s[i + 1] in SPACE_CHARS


def _has_right_trim(s: str, i: int) -> bool:
    return len(s) >= i + 2 and s[i] in SPACE_CHARS and s[i + 1] == "-"


def format_rune_u(ch: str) -> str:
    """Go's ``%#U``: ``U+0021 '!'`` (the quoted form only for printable runes)."""
    code = ord(ch)
    text = f"U+{code:04X}"
    from pytest_ooda.gotemplate.gofmt import is_print

    if is_print(code):
        text += f" '{ch}'"
    return text


class Lexer:
    """Produces the complete item list for a template source."""

    def __init__(self, text: str) -> None:
        self.input = text
        self.pos = 0
        self.start = 0
        self.at_eof = False
        self.items: list[Item] = []
        self.paren_depth = 0
        self.line = 1
        self.start_line = 1

    # -- primitives ---------------------------------------------------------------
    def next(self) -> str:
        if self.pos >= len(self.input):
            self.at_eof = True
            return ""
        ch = self.input[self.pos]
        self.pos += 1
        if ch == "\n":
            self.line += 1
        return ch

    def peek(self) -> str:
        if self.pos >= len(self.input):
            return ""
        return self.input[self.pos]

    def backup(self) -> None:
        if not self.at_eof and self.pos > 0:
            self.pos -= 1
            if self.input[self.pos] == "\n":
                self.line -= 1

    def emit(self, typ: int) -> None:
        self.items.append(Item(typ, self.start, self.input[self.start : self.pos], self.start_line))
        self.start = self.pos
        self.start_line = self.line

    def ignore(self) -> None:
        self.line += self.input.count("\n", self.start, self.pos)
        self.start = self.pos
        self.start_line = self.line

    def accept(self, valid: str) -> bool:
        ch = self.next()
        if ch and ch in valid:
            return True
        self.backup()
        return False

    def accept_run(self, valid: str) -> None:
        while True:
            ch = self.next()
            if not ch or ch not in valid:
                break
        self.backup()

    def errorf(self, msg: str) -> None:
        self.items.append(Item(ERROR, self.start, msg, self.start_line))

    def run(self) -> list[Item]:
        state = self.lex_text
        while state is not None:
            state = state()  # type: ignore[assignment]
        return self.items

    # -- states -------------------------------------------------------------------
    def lex_text(self) -> object:
        x = self.input.find(LEFT, self.pos)
        if x >= 0:
            self.pos = x
            trim = 0
            if _has_left_trim(self.input, self.pos + 2):
                seg = self.input[self.start : self.pos]
                trim = len(seg) - len(seg.rstrip(SPACE_CHARS))
            self.pos -= trim
            if self.pos > self.start:
                self.line += self.input.count("\n", self.start, self.pos)
                self.emit(TEXT)
            self.pos += trim
            self.ignore()
            return self.lex_left_delim
        self.pos = len(self.input)
        if self.pos > self.start:
            self.line += self.input.count("\n", self.start, self.pos)
            self.emit(TEXT)
        self.emit(EOF)
        return None

    def at_right_delim(self) -> tuple[bool, bool]:
        if _has_right_trim(self.input, self.pos) and self.input.startswith(RIGHT, self.pos + 2):
            return True, True
        if self.input.startswith(RIGHT, self.pos):
            return True, False
        return False, False

    def lex_left_delim(self) -> object:
        self.pos += 2
        trim = _has_left_trim(self.input, self.pos)
        after = 2 if trim else 0
        if self.input.startswith("/*", self.pos + after):
            self.pos += after
            self.ignore()
            return self.lex_comment
        self.emit(LEFT_DELIM)
        self.pos += after
        self.ignore()
        self.paren_depth = 0
        return self.lex_inside_action

    def lex_comment(self) -> object:
        self.pos += 2
        i = self.input.find("*/", self.pos)
        if i < 0:
            self.errorf("unclosed comment")
            return None
        self.pos = i + 2
        delim, trim = self.at_right_delim()
        if not delim:
            self.errorf("comment ends before closing delimiter")
            return None
        if trim:
            self.pos += 2
        self.pos += 2
        if trim:
            rest = self.input[self.pos :]
            self.pos += len(rest) - len(rest.lstrip(SPACE_CHARS))
        self.ignore()
        return self.lex_text

    def lex_right_delim(self) -> object:
        trim = _has_right_trim(self.input, self.pos)
        if trim:
            self.pos += 2
            self.ignore()
        self.pos += 2
        self.emit(RIGHT_DELIM)
        if trim:
            rest = self.input[self.pos :]
            self.pos += len(rest) - len(rest.lstrip(SPACE_CHARS))
            self.ignore()
        return self.lex_text

    def lex_inside_action(self) -> object:
        delim, _ = self.at_right_delim()
        if delim:
            if self.paren_depth == 0:
                return self.lex_right_delim
            self.errorf("unclosed left paren")
            return None
        ch = self.next()
        if ch == "":
            self.errorf("unclosed action")
            return None
        if is_space(ch):
            self.backup()
            return self.lex_space
        if ch == "=":
            self.emit(ASSIGN)
        elif ch == ":":
            if self.next() != "=":
                self.errorf("expected :=")
                return None
            self.emit(DECLARE)
        elif ch == "|":
            self.emit(PIPE)
        elif ch == '"':
            return self.lex_quote
        elif ch == "`":
            return self.lex_raw_quote
        elif ch == "$":
            return self.lex_variable
        elif ch == "'":
            return self.lex_char
        elif ch == "." and self.pos < len(self.input) and not ("0" <= self.input[self.pos] <= "9"):
            return self.lex_field
        elif ch in "+-." or "0" <= ch <= "9":
            self.backup()
            return self.lex_number
        elif is_alnum(ch):
            self.backup()
            return self.lex_identifier
        elif ch == "(":
            self.emit(LEFT_PAREN)
            self.paren_depth += 1
        elif ch == ")":
            self.emit(RIGHT_PAREN)
            self.paren_depth -= 1
            if self.paren_depth < 0:
                self.errorf(f"unexpected right paren {format_rune_u(ch)}")
                return None
        elif ord(ch) <= 0x7F and ch.isprintable():
            self.emit(CHAR)
        else:
            self.errorf(f"unrecognized character in action: {format_rune_u(ch)}")
            return None
        return self.lex_inside_action

    def lex_space(self) -> object:
        num = 0
        while True:
            ch = self.peek()
            if not is_space(ch):
                break
            self.next()
            num += 1
        if _has_right_trim(self.input, self.pos - 1) and self.input.startswith(RIGHT, self.pos + 1):
            self.backup()
            if num == 1:
                return self.lex_right_delim
        self.emit(SPACE)
        return self.lex_inside_action

    def lex_identifier(self) -> object:
        while True:
            ch = self.next()
            if ch and is_alnum(ch):
                continue
            self.backup()
            word = self.input[self.start : self.pos]
            if not self.at_terminator():
                self.errorf(f"bad character {format_rune_u(ch)}")
                return None
            kw = KEYWORDS.get(word)
            if kw is not None and kw > KEYWORD:
                self.emit(kw)
            elif word[0] == ".":
                self.emit(FIELD)
            elif word in ("true", "false"):
                self.emit(BOOL)
            else:
                self.emit(IDENTIFIER)
            return self.lex_inside_action

    def lex_field(self) -> object:
        return self.lex_field_or_variable(FIELD)

    def lex_variable(self) -> object:
        if self.at_terminator():
            self.emit(VARIABLE)
            return self.lex_inside_action
        return self.lex_field_or_variable(VARIABLE)

    def lex_field_or_variable(self, typ: int) -> object:
        if self.at_terminator():
            self.emit(VARIABLE if typ == VARIABLE else DOT)
            return self.lex_inside_action
        ch = ""
        while True:
            ch = self.next()
            if not ch or not is_alnum(ch):
                self.backup()
                break
        if not self.at_terminator():
            self.errorf(f"bad character {format_rune_u(ch)}")
            return None
        self.emit(typ)
        return self.lex_inside_action

    def at_terminator(self) -> bool:
        ch = self.peek()
        if ch == "" or is_space(ch) or ch in ".,|:)(":
            return True
        return self.input.startswith(RIGHT, self.pos)

    def lex_char(self) -> object:
        return self.lex_escaped("'", "unterminated character constant", CHAR_CONSTANT)

    def lex_escaped(self, close: str, unterminated: str, token: int) -> object:
        """A quoted constant with backslash escapes, ended by ``close`` on the same line."""
        while True:
            ch = self.next()
            if ch == "\\":
                if self.next() not in ("", "\n"):
                    continue
                self.errorf(unterminated)
                return None
            if ch in ("", "\n"):
                self.errorf(unterminated)
                return None
            if ch == close:
                break
        self.emit(token)
        return self.lex_inside_action

    def lex_number(self) -> object:
        if not self.scan_number():
            self.errorf(f"bad number syntax: {_goq(self.input[self.start : self.pos])}")
            return None
        sign = self.peek()
        if sign in ("+", "-"):
            if not self.scan_number() or self.input[self.pos - 1] != "i":
                self.errorf(f"bad number syntax: {_goq(self.input[self.start : self.pos])}")
                return None
            self.emit(COMPLEX)
        else:
            self.emit(NUMBER)
        return self.lex_inside_action

    def scan_number(self) -> bool:
        self.accept("+-")
        digits = "0123456789_"
        if self.accept("0"):
            if self.accept("xX"):
                digits = "0123456789abcdefABCDEF_"
            elif self.accept("oO"):
                digits = "01234567_"
            elif self.accept("bB"):
                digits = "01_"
        self.accept_run(digits)
        if self.accept("."):
            self.accept_run(digits)
        if len(digits) == 11 and self.accept("eE"):
            self.accept("+-")
            self.accept_run("0123456789_")
        if len(digits) == 23 and self.accept("pP"):
            self.accept("+-")
            self.accept_run("0123456789_")
        self.accept("i")
        ch = self.peek()
        if ch and is_alnum(ch):
            self.next()
            return False
        return True

    def lex_quote(self) -> object:
        return self.lex_escaped('"', "unterminated quoted string", STRING)

    def lex_raw_quote(self) -> object:
        while True:
            ch = self.next()
            if ch == "":
                self.errorf("unterminated raw quoted string")
                return None
            if ch == "`":
                break
        self.emit(RAW_STRING)
        return self.lex_inside_action


def _goq(s: str) -> str:
    from pytest_ooda.gotemplate.gofmt import quote

    return quote(s)


def lex(text: str) -> list[Item]:
    return Lexer(text).run()

"""Go's ``fmt`` and ``strconv`` formatting for the values a template can hold.

Values are the Python forms of what yaml.v3 decodes into ``interface{}``: ``None``
(nil), ``bool``, ``int`` (Go ``int``), ``float`` (``float64``), ``str``, ``list``
(``[]interface {}``), ``dict`` (``map[string]interface {}``), plus ``U8`` (the ``uint8``
that ``index`` on a string yields), ``complex`` (template constants like ``1i``) and
``NILW`` (a nil held in an interface, as a map entry or list element is).
"""

from __future__ import annotations

import datetime
import math
import re
import struct
import unicodedata
from decimal import Decimal
from typing import Any

from pytest_ooda.gotemplate.budget import BudgetExceeded, default_limits


class U8(int):
    """A Go ``uint8`` (a byte taken out of a string by ``index``)."""

    __slots__ = ()


class U64(int):
    """A Go ``uint64`` (what yaml.v3 makes of an integer above 2**63 - 1)."""

    __slots__ = ()


class _NilInterface:
    """A nil stored in an ``interface{}`` slot (map value or list element).

    Go distinguishes it from a missing value in a few places (``len``, field access).
    """

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NILW"


NILW: Any = _NilInterface()


class GoKey:
    """A key of a Go map that Python would equate with another key of the same map.

    ``1``, ``1.0`` and ``true`` are one ``dict`` key in Python and three map keys in Go;
    a map holding such a clash keeps every non-string key wrapped in a ``GoKey`` (equal
    only to a key of the same type and value). ``sorted_items`` hands keys back unwrapped.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is GoKey
            and type(other.value) is type(self.value)
            and other.value == self.value
        )

    def __repr__(self) -> str:
        return f"GoKey({self.value!r})"


class GoTime:
    """A Go ``time.Time`` (what yaml.v3 decodes an unquoted timestamp into).

    Only printing (``Time.String``), equality and truthiness are modelled; Go templates
    could also call its methods (``.Year``), which this engine does not offer.
    """

    __slots__ = ("moment", "nanosecond", "offset")

    def __init__(
        self, moment: datetime.datetime, offset: int | None, nanosecond: int | None = None
    ) -> None:
        self.moment = moment  # wall clock in the zone below
        self.offset = offset  # seconds east of UTC; None for UTC itself
        # Go keeps nanoseconds and Python's datetime only microseconds; this is the
        # fraction of the second that counts (the moment's microseconds are its prefix).
        self.nanosecond = moment.microsecond * 1000 if nanosecond is None else nanosecond

    @classmethod
    def from_python(cls, value: datetime.date) -> GoTime:
        if not isinstance(value, datetime.datetime):
            return cls(datetime.datetime(value.year, value.month, value.day), None)
        off = value.utcoffset()
        naive = value.replace(tzinfo=None)
        if off is None or (off == datetime.timedelta(0) and value.tzname() in ("UTC", None)):
            return cls(naive, None)
        return cls(naive, int(off.total_seconds()))

    def __str__(self) -> str:
        m = self.moment
        text = f"{m.year:04d}-{m.month:02d}-{m.day:02d} {m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        if self.nanosecond:
            text += ("." + f"{self.nanosecond:09d}").rstrip("0")
        if self.offset is None:
            return text + " +0000 UTC"
        sign = "-" if self.offset < 0 else "+"
        hours, rest = divmod(abs(self.offset), 3600)
        zone = f"{sign}{hours:02d}{rest // 60:02d}"
        return f"{text} {zone} {zone}"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GoTime)
            and self.moment == other.moment
            and self.nanosecond == other.nanosecond
            and self.offset == other.offset
        )

    def __hash__(self) -> int:
        return hash((self.moment, self.nanosecond, self.offset))


_LOWER = "0123456789abcdefx"
_UPPER = "0123456789ABCDEFX"


def is_print(code: int) -> bool:
    """Go's ``unicode.IsPrint`` (letters, marks, numbers, punctuation, symbols, ASCII space)."""
    if code == 0x20:
        return True
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return False
    return unicodedata.category(chr(code))[0] in "LMNPS"


def _escape_rune(code: int, q: str, ascii_only: bool, out: list[str]) -> None:
    ch = chr(code)
    if ch == q or ch == "\\":
        out.append("\\" + ch)
        return
    if ascii_only:
        if code < 0x80 and is_print(code):
            out.append(ch)
            return
    elif is_print(code):
        out.append(ch)
        return
    special = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
    if code in special:
        out.append(special[code])
    elif code < 0x20 or code == 0x7F:
        out.append(f"\\x{code:02x}")
    elif code < 0x10000:
        out.append(f"\\u{code:04x}")
    else:
        out.append(f"\\U{code:08x}")


def quote(s: str, ascii_only: bool = False) -> str:
    """Go's ``strconv.Quote`` (``QuoteToASCII`` with ``ascii_only``)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = ['"']
    for ch in s:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        else:
            _escape_rune(code, '"', ascii_only, out)
    out.append('"')
    return "".join(out)


def quote_trunc(s: str, runes: int) -> str:
    """Go's ``%.Nq``: quote the first N runes."""
    return quote(s[:runes])


def quote_rune(code: int, ascii_only: bool = False) -> str:
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        code = 0xFFFD
    out = ["'"]
    _escape_rune(code, "'", ascii_only, out)
    out.append("'")
    return "".join(out)


def can_backquote(s: str) -> bool:
    for ch in s:
        code = ord(ch)
        if ch == "`" or code == 0xFEFF or 0xDC80 <= code <= 0xDCFF:
            return False
        if (code < 0x20 and ch != "\t") or code == 0x7F:
            return False
    return True


def go_bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def type_name(v: Any) -> str:
    """The Go type of a value as ``%T`` and error messages print it."""
    t = type(v)
    if t is str:
        return "string"
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float64"
    if t is list:
        return "[]interface {}"
    if t is dict:
        return _map_type(v)
    if t is U8:
        return "uint8"
    if t is U64:
        return "uint64"
    if t is complex:
        return "complex128"
    if t is GoTime:
        return "time.Time"
    return "interface {}"


def _map_type(v: dict[Any, Any]) -> str:
    if all(type(k) is str for k in v):
        return "map[string]interface {}"
    return "map[interface {}]interface {}"


#: Go's ``fmtsort`` orders the keys of a ``map[interface{}]interface{}`` by their dynamic
#: type first (the order of the type descriptors in a Go 1.19 binary, as the oracle
#: shows: bool, float64, int, string, uint64, uint8, time.Time), then by value.
_TYPE_RANK = {bool: 0, float: 1, int: 2, str: 3, U64: 4, U8: 5, GoTime: 6}


def _key_order(k: Any) -> tuple[int, Any]:
    if k is None:
        return (-1, 0)  # a nil key sorts first
    rank = _TYPE_RANK.get(type(k), 7)
    return (rank, k if rank < _TYPE_RANK[GoTime] else str(k))


def sorted_items(m: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """Map entries in Go's ``fmtsort`` order, keys unwrapped (see :class:`GoKey`)."""
    kinds = {type(k) for k in m}
    if len(kinds) == 1 and GoKey not in kinds:
        try:
            return sorted(m.items(), key=lambda kv: kv[0])
        except TypeError:
            pass
    pairs = [(k.value if type(k) is GoKey else k, v) for k, v in m.items()]
    return sorted(pairs, key=lambda kv: _key_order(kv[0]))


# -- floats ---------------------------------------------------------------------


def _shortest_digits(v: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``abs(v)`` and the decimal-point position."""
    if v == 0:
        return "", 0
    _, digits, exp = Decimal(repr(abs(v))).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0")
    lead = len("".join(map(str, digits))) - len("".join(map(str, digits)).lstrip("0"))
    ds = ds.lstrip("0")
    assert isinstance(exp, int)
    dp = len(digits) + exp - lead
    return ds, dp


def _fmt_e(digs: str, dp: int, prec: int, echar: str) -> str:
    first = digs[0] if digs else "0"
    out = first
    if prec > 0:
        rest = digs[1 : 1 + prec]
        out += "." + rest + "0" * (prec - len(rest))
    exp = dp - 1 if digs else 0
    sign = "+"
    if exp < 0:
        sign = "-"
        exp = -exp
    return out + echar + sign + (f"{exp:02d}")


def _fmt_f(digs: str, dp: int, prec: int) -> str:
    whole = digs[:dp] + "0" * max(dp - len(digs), 0) if dp > 0 else "0"
    if prec > 0:
        frac = ""
        for i in range(prec):
            j = dp + i
            frac += digs[j] if 0 <= j < len(digs) else "0"
        return whole + "." + frac
    return whole


def format_float(v: float, fmt: str, prec: int) -> str:
    """Go's ``strconv.FormatFloat(v, fmt, prec, 64)`` for fmt in e E f F g G."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    if fmt in "xX":
        return format_float_x(v, fmt, prec)
    if fmt == "b":
        return format_float_b(v)
    neg = v < 0 or (v == 0 and str(v).startswith("-"))
    sign = "-" if neg else ""
    lower = fmt.lower()
    if prec < 0:
        digs, dp = _shortest_digits(v)
        if lower == "e":
            body = _fmt_e(digs, dp, max(len(digs) - 1, 0), fmt)
        elif lower == "f":
            body = _fmt_f(digs, dp, max(len(digs) - dp, 0))
        else:
            exp = dp - 1
            if digs and (exp < -4 or exp >= 6):
                body = _fmt_e(digs, dp, len(digs) - 1, "e" if fmt == "g" else "E")
            else:
                body = _fmt_f(digs, dp, max(len(digs) - dp, 0))
        return sign + body
    a = abs(v)
    if lower == "e":
        body = f"{a:.{prec}e}"
        if fmt == "E":
            body = body.upper()
    elif lower == "f":
        body = f"{a:.{prec}f}"
    else:
        body = f"{a:.{max(prec, 1)}g}"
        if fmt == "G":
            body = body.upper()
    return sign + body


def _float_bits(v: float) -> tuple[int, int]:
    """(mantissa, exponent) with ``abs(v) == mantissa * 2**exponent``, 53-bit mantissa."""
    bits = struct.unpack(">Q", struct.pack(">d", v))[0]
    exp_bits = (bits >> 52) & 0x7FF
    frac = bits & ((1 << 52) - 1)
    if exp_bits == 0:
        return frac, -1074
    return frac | (1 << 52), exp_bits - 1075


def format_float_b(v: float) -> str:
    mant, exp = _float_bits(v)
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    return f"{sign}{mant}p{exp:+d}"


def format_float_x(v: float, fmt: str, prec: int) -> str:
    """Go's ``%x``/``%X`` hexadecimal float: ``-0x1.yyyp±dd``."""
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    mant, exp = _float_bits(v)
    if mant == 0:
        exp = 0
    else:
        exp += 52
        while mant < (1 << 52):
            mant <<= 1
            exp -= 1
    if 0 <= prec < 13 and mant:
        shift = 52 - 4 * prec
        q, r = divmod(mant, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        mant = q << shift
        if mant >> 53:
            mant >>= 1
            exp += 1
    frac = mant & ((1 << 52) - 1)
    lead = mant >> 52
    digits = f"{frac:013x}"
    digits = digits.rstrip("0") if prec < 0 else (digits + "0" * prec)[:prec]
    body = f"0x{lead}" + ("." + digits if digits else "")
    esign = "-" if exp < 0 else "+"
    text = f"{sign}{body}p{esign}{abs(exp):02d}"
    return text.upper() if fmt == "X" else text


def sprint_value(v: Any) -> str:
    """``fmt.Sprint(v)`` for one value (what ``{{.x}}`` prints)."""
    t = type(v)
    if t is str:
        return v  # type: ignore[no-any-return]
    if t is int or t is U8 or t is U64:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        if 1e-4 <= abs(v) < 1e6:
            # Go and Python agree on the shortest digits; Go drops the ".0"
            text = repr(v)
            return text[:-2] if text.endswith(".0") else text
        return format_float(v, "g", -1)
    if v is None or v is NILW:
        return "<nil>"
    p = Printer()
    p.print_arg(v, "v")
    return "".join(p.buf)


def sprint(args: list[Any]) -> str:
    """``fmt.Sprint``: spaces between operands when neither side is a string."""
    out: list[str] = []
    prev_string = False
    for i, arg in enumerate(args):
        is_string = type(arg) is str
        if i > 0 and not is_string and not prev_string:
            out.append(" ")
        out.append(sprint_value(arg))
        prev_string = is_string
    return "".join(out)


def sprintln(args: list[Any]) -> str:
    return " ".join(sprint_value(a) for a in args) + "\n"


_SIMPLE_VERB = re.compile(r"%([-+ 0]*)([0-9]{0,3})(?:\.([0-9]{1,3}))?([sdvqxXofeEt%])")
_plans: dict[str, list[tuple[str, str, str, str, str]] | None] = {}


def _plan(fmt: str) -> list[tuple[str, str, str, str, str]] | None:
    """Split a format into (literal, flags, width, precision, verb) steps when every
    verb is one the fast path can do exactly like Go; None otherwise."""
    plan: list[tuple[str, str, str, str, str]] = []
    pos = 0
    for m in _SIMPLE_VERB.finditer(fmt):
        literal = fmt[pos : m.start()]
        if "%" in literal:
            return None
        flags, width, prec, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if verb == "%":
            if flags or width or prec is not None:
                return None
            plan.append((literal + "%", "", "", "", ""))
        else:
            plan.append((literal, flags, width, prec if prec is not None else "", verb))
        pos = m.end()
    if "%" in fmt[pos:]:
        return None
    plan.append((fmt[pos:], "", "", "", ""))
    return plan


def _fast_arg(arg: Any, flags: str, width: str, prec: str, verb: str) -> str | None:
    """One verb formatted with Python's %-operator where that provably equals Go."""
    t = type(arg)
    spec = "%" + flags + width + ("." + prec if prec else "")
    if t is str:
        if verb in "sv" and "0" not in flags:
            return arg if spec == "%" else (spec + "s") % arg  # type: ignore[no-any-return]
        if verb == "q" and spec == "%":
            return quote(arg)
        return None
    if t is int:
        if prec and ("0" in flags or int(prec) == 0):
            return None  # Go drops zero padding when a precision is given
        if verb == "d" or (verb == "v" and "+" not in flags):
            return (spec + "d") % arg  # type: ignore[no-any-return]
        if verb in "xXo":
            return (spec + verb) % arg  # type: ignore[no-any-return]
        return None
    if t is float:
        if verb in "feE" and math.isfinite(arg):
            return (spec + verb) % arg  # type: ignore[no-any-return]
        if verb == "v" and spec == "%":
            return format_float(arg, "g", -1)
        return None
    if t is bool and verb in "tv" and spec == "%":
        return "true" if arg else "false"
    return None


def sprintf(fmt: str, args: list[Any]) -> str:
    plan = _plans.get(fmt, _ABSENT_PLAN)
    if plan is _ABSENT_PLAN:
        plan = _plan(fmt)
        if len(_plans) < 4096:
            _plans[fmt] = plan
    if plan is not None and sum(1 for step in plan if step[4]) == len(args):
        out: list[str] = []
        i = 0
        for literal, flags, width, prec, verb in plan:
            out.append(literal)
            if verb:
                piece = _fast_arg(args[i], flags, width, prec, verb)
                if piece is None:
                    break
                out.append(piece)
                i += 1
        else:
            return "".join(out)
    p = Printer()
    p.do_printf(fmt, args)
    return "".join(p.buf)


_ABSENT_PLAN: Any = object()


def _is_nil(v: Any) -> bool:
    return v is None or v is NILW


class Printer:
    """A port of the parts of ``fmt.pp`` reachable with template values."""

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.padding = 0
        self.clear_flags()
        self.arg: Any = None
        self.value: Any = None
        self.has_value = False

    def clear_flags(self) -> None:
        self.plus = self.minus = self.sharp = self.space = self.zero = False
        self.plus_v = self.sharp_v = False
        self.wid = self.prec = 0
        self.wid_present = self.prec_present = False

    # -- padding ----------------------------------------------------------------
    def write_padding(self, n: int) -> None:
        if n > 0:
            # Go caps one width at 1e6; many verbs could still build gigabytes in one
            # call, so the padding is refused before it is built past the output limit.
            self.padding += n
            if self.padding > default_limits().max_output:
                raise BudgetExceeded(
                    f"printf padding is larger than {default_limits().max_output} bytes "
                    "(a pytest-ooda limit; OODA_TEMPLATE_MAX_OUTPUT changes it)"
                )
            self.buf.append(("0" if self.zero else " ") * n)

    def pad(self, s: str) -> None:
        if not self.wid_present or self.wid == 0:
            self.buf.append(s)
            return
        width = self.wid - len(s)
        if not self.minus:
            self.write_padding(width)
            self.buf.append(s)
        else:
            self.buf.append(s)
            self.write_padding(width)

    # -- primitives -------------------------------------------------------------
    def fmt_boolean(self, v: bool, verb: str) -> None:
        if verb in "tv":
            self.pad("true" if v else "false")
        else:
            self.bad_verb(verb)

    def fmt_integer(self, v: int, signed: bool, verb: str) -> None:
        if verb == "v":
            if self.sharp_v and not signed:
                saved = self.sharp
                self.sharp = True
                self._integer(v, 16, signed, "v", _LOWER)
                self.sharp = saved
            else:
                self._integer(v, 10, signed, verb, _LOWER)
        elif verb == "d":
            self._integer(v, 10, signed, verb, _LOWER)
        elif verb == "b":
            self._integer(v, 2, signed, verb, _LOWER)
        elif verb in "oO":
            self._integer(v, 8, signed, verb, _LOWER)
        elif verb == "x":
            self._integer(v, 16, signed, verb, _LOWER)
        elif verb == "X":
            self._integer(v, 16, signed, verb, _UPPER)
        elif verb == "c":
            code = v if 0 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF else 0xFFFD
            self.pad(chr(code))
        elif verb == "q":
            self.pad(quote_rune(v if v >= 0 else 0xFFFD, self.plus))
        elif verb == "U":
            self._unicode(v)
        else:
            self.bad_verb(verb)

    def _unicode(self, u: int) -> None:
        if u < 0:
            u += 1 << 64
        prec = 4
        if self.prec_present and self.prec > 4:
            prec = self.prec
        digits = f"{u:X}".rjust(prec, "0")
        s = "U+" + digits
        if self.sharp and 0 <= u <= 0x10FFFF and is_print(u):
            s += " '" + chr(u) + "'"
        saved = self.zero
        self.zero = False
        self.pad(s)
        self.zero = saved

    def _integer(self, v: int, base: int, signed: bool, verb: str, digits: str) -> None:
        negative = signed and v < 0
        u = -v if negative else v
        prec = 0
        if self.prec_present:
            prec = self.prec
            if prec == 0 and u == 0:
                saved = self.zero
                self.zero = False
                self.write_padding(self.wid)
                self.zero = saved
                return
        elif self.zero and self.wid_present:
            prec = self.wid
            if negative or self.plus or self.space:
                prec -= 1
        if base == 10:
            s = str(u)
        elif base == 16:
            s = format(u, "x")
            if digits is _UPPER:
                s = s.upper()
        elif base == 8:
            s = format(u, "o")
        else:
            s = format(u, "b")
        if len(s) < prec:
            s = "0" * (prec - len(s)) + s
        if self.sharp:
            if base == 2:
                s = "0b" + s
            elif base == 8:
                if s[0] != "0":
                    s = "0" + s
            elif base == 16:
                s = "0" + digits[16] + s
        if verb == "O":
            s = "0o" + s
        if negative:
            s = "-" + s
        elif self.plus:
            s = "+" + s
        elif self.space:
            s = " " + s
        saved = self.zero
        self.zero = False
        self.pad(s)
        self.zero = saved

    def fmt_float(self, v: float, verb: str) -> None:
        if verb == "v":
            self._float(v, "g", -1)
        elif verb in "gGxXb":
            self._float(v, verb, -1)
        elif verb in "feE":
            self._float(v, verb, 6)
        elif verb == "F":
            self._float(v, "f", 6)
        else:
            self.bad_verb(verb)

    def _float(self, v: float, verb: str, prec: int) -> None:
        if self.prec_present:
            prec = self.prec
        num = format_float(v, verb, prec)
        if num[0] not in "+-":
            num = "+" + num
        if self.space and num[0] == "+" and not self.plus:
            num = " " + num[1:]
        if num[1] in "IN":
            saved = self.zero
            self.zero = False
            if num[1] == "N" and not self.space and not self.plus:
                num = num[1:]
            self.pad(num)
            self.zero = saved
            return
        if self.sharp and verb != "b":
            num = self._sharp_float(num, verb, prec)
        if self.plus or num[0] != "+":
            if self.zero and self.wid_present and self.wid > len(num):
                self.buf.append(num[0])
                self.write_padding(self.wid - len(num))
                self.buf.append(num[1:])
                return
            self.pad(num)
            return
        self.pad(num[1:])

    @staticmethod
    def _sharp_float(num: str, verb: str, prec: int) -> str:
        """The ``#`` flag: keep a decimal point and pad significant digits (fmt's rules,
        including its counting of the ``x`` of a hex float as a digit)."""
        digits = 0
        if verb in ("v", "g", "G", "x"):
            digits = prec if prec != -1 else 6
        tail = ""
        end = len(num)
        has_point = False
        saw_nonzero = False
        for i in range(1, len(num)):
            c = num[i]
            if c == ".":
                has_point = True
            elif c in "pP" or (c in "eE" and verb not in "xX"):
                tail = num[i:]
                end = i
                break
            else:
                if c != "0":
                    saw_nonzero = True
                if saw_nonzero:
                    digits -= 1
        body = num[:end]
        if not has_point:
            if len(body) == 2 and body[1] == "0":
                digits -= 1
            body += "."
        if digits > 0:
            body += "0" * digits
        return body + tail

    def fmt_complex(self, v: complex, verb: str) -> None:
        if verb not in "vbgGxXfFeE":
            self.bad_verb(verb)
            return
        saved_plus = self.plus
        self.buf.append("(")
        self.fmt_float(v.real, verb)
        self.plus = True
        self.fmt_float(v.imag, verb)
        self.buf.append("i)")
        self.plus = saved_plus

    def fmt_string(self, v: str, verb: str) -> None:
        if verb == "v":
            if self.sharp_v:
                self._fmt_q(v)
            else:
                self._fmt_s(v)
        elif verb == "s":
            self._fmt_s(v)
        elif verb in "xX":
            self._fmt_sx(v, _LOWER if verb == "x" else _UPPER)
        elif verb == "q":
            self._fmt_q(v)
        else:
            self.bad_verb(verb)

    def _truncate(self, s: str) -> str:
        if self.prec_present:
            return s[: self.prec]
        return s

    def _fmt_s(self, s: str) -> None:
        self.pad(self._truncate(s))

    def _fmt_q(self, s: str) -> None:
        s = self._truncate(s)
        if self.sharp and can_backquote(s):
            self.pad("`" + s + "`")
            return
        self.pad(quote(s, self.plus))

    def _fmt_sx(self, s: str, digits: str) -> None:
        b = go_bytes(s)
        length = len(b)
        if self.prec_present and self.prec < length:
            length = self.prec
        width = 2 * length
        if width > 0:
            if self.space:
                if self.sharp:
                    width *= 2
                width += length - 1
            elif self.sharp:
                width += 2
        else:
            if self.wid_present:
                self.write_padding(self.wid)
            return
        if self.wid_present and self.wid > width and not self.minus:
            self.write_padding(self.wid - width)
        out: list[str] = []
        if self.sharp:
            out.append("0" + digits[16])
        for i in range(length):
            if self.space and i > 0:
                out.append(" ")
                if self.sharp:
                    out.append("0" + digits[16])
            c = b[i]
            out.append(digits[c >> 4] + digits[c & 0xF])
        self.buf.append("".join(out))
        if self.wid_present and self.wid > width and self.minus:
            self.write_padding(self.wid - width)

    # -- dispatch ---------------------------------------------------------------
    def bad_verb(self, verb: str) -> None:
        self.buf.append("%!" + verb + "(")
        if self.arg is not None:
            self.buf.append(type_name(self.arg) + "=")
            self.print_arg(self.arg, "v")
        elif self.has_value:
            self.buf.append(type_name(self.value) + "=")
            self.print_value(self.value, "v", 0)
        else:
            self.buf.append("<nil>")
        self.buf.append(")")

    def print_arg(self, arg: Any, verb: str) -> None:
        self.arg = arg
        self.has_value = False
        if _is_nil(arg):
            self.arg = None
            if verb in "Tv":
                self.pad("<nil>")
            else:
                self.bad_verb(verb)
            return
        if verb == "T":
            self._fmt_s(type_name(arg))
            return
        if verb == "p":
            self.bad_verb(verb)
            return
        self._basic_or_value(arg, verb, 0)

    def _basic_or_value(self, v: Any, verb: str, depth: int) -> None:
        t = type(v)
        if t is bool:
            self.fmt_boolean(v, verb)
        elif t is int:
            self.fmt_integer(v, True, verb)
        elif t is U8 or t is U64:
            self.fmt_integer(int(v), False, verb)
        elif t is float:
            self.fmt_float(v, verb)
        elif t is str:
            self.fmt_string(v, verb)
        elif t is complex:
            self.fmt_complex(v, verb)
        elif t is GoTime:
            self.fmt_string(str(v), verb)
        else:
            self.print_value(v, verb, depth)

    def print_value(self, v: Any, verb: str, depth: int) -> None:
        if depth > 0:
            self.arg = None
        self.arg = None
        self.value = v
        self.has_value = True
        t = type(v)
        if t is list:
            if self.sharp_v:
                self.buf.append("[]interface {}{")
                for i, item in enumerate(v):
                    if i:
                        self.buf.append(", ")
                    self._element(item, verb, depth + 1)
                self.buf.append("}")
            else:
                self.buf.append("[")
                for i, item in enumerate(v):
                    if i:
                        self.buf.append(" ")
                    self._element(item, verb, depth + 1)
                self.buf.append("]")
        elif t is dict:
            if self.sharp_v:
                self.buf.append(_map_type(v) + "{")
            else:
                self.buf.append("map[")
            str_keys = all(type(k) is str for k in v)
            for i, (key, item) in enumerate(sorted_items(v)):
                if i:
                    self.buf.append(", " if self.sharp_v else " ")
                if str_keys:
                    self._concrete(key, verb, depth + 1)
                else:
                    self._element(key, verb, depth + 1)
                self.buf.append(":")
                self._element(item, verb, depth + 1)
            self.buf.append("}" if self.sharp_v else "]")
        else:
            self._concrete(v, verb, depth)

    def _element(self, item: Any, verb: str, depth: int) -> None:
        """An ``interface{}`` slot inside a container."""
        if _is_nil(item):
            self.buf.append("interface {}(nil)" if self.sharp_v else "<nil>")
            return
        self._concrete(item, verb, depth)

    def _concrete(self, v: Any, verb: str, depth: int) -> None:
        self.arg = None
        self.value = v
        self.has_value = True
        t = type(v)
        if t is list or t is dict:
            self.print_value(v, verb, depth)
        else:
            self._basic_or_value(v, verb, depth)

    def do_printf(self, fmt: str, a: list[Any]) -> None:
        end = len(fmt)
        arg_num = 0
        after_index = False
        self.reordered = False
        i = 0
        while i < end:
            self.good_arg_num = True
            lasti = i
            while i < end and fmt[i] != "%":
                i += 1
            if i > lasti:
                self.buf.append(fmt[lasti:i])
            if i >= end:
                break
            i += 1
            self.clear_flags()
            simple_done = False
            while i < end:
                c = fmt[i]
                if c == "#":
                    self.sharp = True
                elif c == "0":
                    self.zero = not self.minus
                elif c == "+":
                    self.plus = True
                elif c == "-":
                    self.minus = True
                    self.zero = False
                elif c == " ":
                    self.space = True
                else:
                    if "a" <= c <= "z" and arg_num < len(a):
                        if c == "v":
                            self.sharp_v = self.sharp
                            self.sharp = False
                            self.plus_v = self.plus
                            self.plus = False
                        self.print_arg(a[arg_num], c)
                        arg_num += 1
                        i += 1
                        simple_done = True
                    break
                i += 1
            if simple_done:
                continue
            arg_num, i, after_index = self._arg_number(arg_num, fmt, i, len(a))
            if i < end and fmt[i] == "*":
                i += 1
                self.wid, self.wid_present, arg_num = self._int_from_arg(a, arg_num)
                if not self.wid_present:
                    self.buf.append("%!(BADWIDTH)")
                if self.wid < 0:
                    self.wid = -self.wid
                    self.minus = True
                    self.zero = False
                after_index = False
            else:
                self.wid, self.wid_present, i = _parsenum(fmt, i, end)
                if after_index and self.wid_present:
                    self.good_arg_num = False
            if i + 1 < end and fmt[i] == ".":
                i += 1
                if after_index:
                    self.good_arg_num = False
                arg_num, i, after_index = self._arg_number(arg_num, fmt, i, len(a))
                if i < end and fmt[i] == "*":
                    i += 1
                    self.prec, self.prec_present, arg_num = self._int_from_arg(a, arg_num)
                    if self.prec < 0:
                        self.prec = 0
                        self.prec_present = False
                    if not self.prec_present:
                        self.buf.append("%!(BADPREC)")
                    after_index = False
                else:
                    self.prec, self.prec_present, i = _parsenum(fmt, i, end)
                    if not self.prec_present:
                        self.prec = 0
                        self.prec_present = True
            if not after_index:
                arg_num, i, after_index = self._arg_number(arg_num, fmt, i, len(a))
            if i >= end:
                self.buf.append("%!(NOVERB)")
                break
            verb = fmt[i]
            i += 1
            if verb == "%":
                self.buf.append("%")
            elif not self.good_arg_num:
                self.buf.append("%!" + verb + "(BADINDEX)")
            elif arg_num >= len(a):
                self.buf.append("%!" + verb + "(MISSING)")
            else:
                if verb == "v":
                    self.sharp_v = self.sharp
                    self.sharp = False
                    self.plus_v = self.plus
                    self.plus = False
                self.print_arg(a[arg_num], verb)
                arg_num += 1
        if not self.reordered and arg_num < len(a):
            self.clear_flags()
            self.buf.append("%!(EXTRA ")
            for j, arg in enumerate(a[arg_num:]):
                if j:
                    self.buf.append(", ")
                if _is_nil(arg):
                    self.buf.append("<nil>")
                else:
                    self.buf.append(type_name(arg) + "=")
                    self.print_arg(arg, "v")
            self.buf.append(")")

    def _arg_number(self, arg_num: int, fmt: str, i: int, num_args: int) -> tuple[int, int, bool]:
        if len(fmt) <= i or fmt[i] != "[":
            return arg_num, i, False
        self.reordered = True
        index, wid, ok = _parse_arg_number(fmt[i:])
        if ok and 0 <= index < num_args:
            return index, i + wid, True
        self.good_arg_num = False
        return arg_num, i + wid, ok

    @staticmethod
    def _int_from_arg(a: list[Any], arg_num: int) -> tuple[int, bool, int]:
        num, is_int, new = 0, False, arg_num
        if arg_num < len(a):
            v = a[arg_num]
            if type(v) is int or type(v) is U8:
                num, is_int = int(v), True
            new = arg_num + 1
            if num > 1_000_000 or num < -1_000_000:
                num, is_int = 0, False
        return num, is_int, new


def _parsenum(s: str, start: int, end: int) -> tuple[int, bool, int]:
    if start >= end:
        return 0, False, end
    num = 0
    isnum = False
    i = start
    while i < end and "0" <= s[i] <= "9":
        if num > 1_000_000:
            return 0, False, end
        num = num * 10 + ord(s[i]) - 48
        isnum = True
        i += 1
    return num, isnum, i


def _parse_arg_number(fmt: str) -> tuple[int, int, bool]:
    if len(fmt) < 3:
        return 0, 1, False
    for i in range(1, len(fmt)):
        if fmt[i] == "]":
            width, ok, newi = _parsenum(fmt, 1, i)
            if not ok or newi != i:
                return 0, i + 1, False
            return width - 1, i + 1, True
    return 0, 1, False

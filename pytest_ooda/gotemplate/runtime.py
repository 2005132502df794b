"""Go ``text/template`` execution semantics, called from the compiled Jinja2 templates.

Every function here is installed as a Jinja2 *filter*: the sandbox checks attribute
access and calls made by template expressions, while filters are plain calls, so the
runtime pays no sandbox toll and templates can reach nothing but these functions.
Errors are ``GoExecError(node_id, message)``; the caller turns the node id into Go's
``template: NAME:LINE:COL: executing "T" at <NODE>:`` prefix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote as _urlquote

from pytest_ooda.gotemplate.budget import BudgetExceeded

if TYPE_CHECKING:
    from collections.abc import Callable

from pytest_ooda.gotemplate.gofmt import (
    NILW,
    U8,
    U64,
    GoKey,
    GoTime,
    go_bytes,
    sorted_items,
    sprint,
    sprint_value,
    sprintf,
    sprintln,
    type_name,
)


class GoExecError(Exception):
    """An execution error at parse-tree node ``nid`` (an index into the node table)."""

    def __init__(self, nid: int, message: str) -> None:
        super().__init__(message)
        self.nid = nid
        self.message = message


def fail(nid: int, message: str) -> NoReturn:
    raise GoExecError(nid, message)


def _ind(v: Any) -> Any:
    """``indirectInterface``: a nil held in an interface becomes no value at all."""
    return None if v is NILW else v


# -- printing, conversion, fields ---------------------------------------------------


def f_print(v: Any) -> str:
    """What an action prints: ``fmt.Fprint`` of the value, ``<no value>`` for none."""
    if type(v) is str:
        return v
    if v is None or v is NILW:
        return "<no value>"
    return sprint_value(v)


def f_conv(v: Any) -> Any:
    """The end of a pipeline command: Go re-boxes ``interface{}`` results."""
    return None if v is NILW else v


def f_field1(
    recv: Any,
    name: str,
    wrapped: bool,
    nid: int,
    has_args: bool = False,
    _final: Any = None,
    state: Any = None,
) -> Any:
    """``.name`` on ``recv`` (one field); the hot path of most templates."""
    if nid < 0:
        nid = state.at
    if type(recv) is dict:
        if has_args:
            fail(nid, f"{name} is not a method but has arguments")
        try:
            v = recv[name]
        except KeyError:
            return None
        return NILW if v is None else v
    return _field_slow(recv, (name,), wrapped, nid, has_args)


def f_print_field1(recv: Any, name: str, wrapped: bool, nid: int, has_args: bool = False) -> str:
    """``{{.name}}``: field access and printing in one call."""
    if type(recv) is dict:
        v = recv.get(name, _ABSENT)
        if type(v) is str:
            return v
        if v is _ABSENT or v is None:
            return "<no value>"
        return sprint_value(v)
    return f_print(_field_slow(recv, (name,), wrapped, nid, has_args))


_ABSENT = object()


def f_field(
    recv: Any,
    names: tuple[str, ...],
    wrapped: bool,
    nid: int,
    has_args: bool = False,
    _final: Any = None,
    state: Any = None,
) -> Any:
    """``.a.b.c`` on ``recv``."""
    return _field_slow(recv, names, wrapped, state.at if nid < 0 else nid, has_args)


def _field_slow(recv: Any, names: tuple[str, ...], wrapped: bool, nid: int, has_args: bool) -> Any:
    last = len(names) - 1
    for i, name in enumerate(names):
        if recv is None:
            return None
        if recv is NILW:
            fail(nid, f"nil pointer evaluating interface {{}}.{name}")
        if type(recv) is dict:
            if i == last and has_args:
                fail(nid, f"{name} is not a method but has arguments")
            if name in recv:
                v = recv[name]
                recv = NILW if v is None else v
            else:
                recv = None
            continue
        tname = "interface {}" if (wrapped or i > 0) else type_name(recv)
        fail(nid, f"can't evaluate field {name} in type {tname}")
    return recv


def f_fail(_prev: Any, nid: int, message: str, state: Any = None) -> NoReturn:
    """A statically known execution error, raised once ``_prev`` has been evaluated."""
    fail(state.at if nid < 0 else nid, message)


def f_true(_prev: Any) -> bool:
    return True


# -- range ------------------------------------------------------------------------------


def f_at(v: Any, state: Any, nid: int) -> Any:
    """Remember the node an ``and``/``or`` argument ended at (Go reports range errors
    at the last node it evaluated)."""
    state.at = nid
    return v


def _spent(items: Any, nid: int, state: Any) -> Any:
    """Charge one step per element of a ``range`` to the render's budget."""
    if items and state is not None:
        try:
            state.spend(len(items))
        except BudgetExceeded as exc:
            fail(state.at if nid < 0 else nid, str(exc))
    return items


def f_range(v: Any, nid: int, state: Any = None) -> Any:
    """Elements of a ``range`` over a list or a map (values in key order)."""
    t = type(v)
    if t is list:
        if None in v:
            return _spent([NILW if x is None else x for x in v], nid, state)
        return _spent(v, nid, state)
    if t is dict:
        return _spent([NILW if x is None else x for _, x in sorted_items(v)], nid, state)
    if v is None or v is NILW:
        return ()
    fail(state.at if nid < 0 else nid, f"range can't iterate over {sprint_value(v)}")


def f_range2(v: Any, nid: int, state: Any = None) -> Any:
    """(index or key, element) pairs of a ``range $i, $e :=``."""
    t = type(v)
    if t is list:
        return _spent([(i, NILW if x is None else x) for i, x in enumerate(v)], nid, state)
    if t is dict:
        return _spent([(k, NILW if x is None else x) for k, x in sorted_items(v)], nid, state)
    if v is None or v is NILW:
        return ()
    fail(state.at if nid < 0 else nid, f"range can't iterate over {sprint_value(v)}")


# -- argument checks ----------------------------------------------------------------------


def f_want_string(v: Any, nid: int, state: Any = None) -> str:
    """``validateType(value, string)`` for ``printf``'s format argument."""
    if nid < 0:
        nid = state.at
    if type(v) is str:
        return v
    if v is None:
        fail(nid, "invalid value; expected string")
    if v is NILW:
        fail(nid, "wrong type for value; expected string; got interface {}")
    fail(nid, f"wrong type for value; expected string; got {type_name(v)}")


# -- builtins -------------------------------------------------------------------------------


def _index_arg(x: Any, cap: int, wrapped: bool = False) -> int:
    t = type(x)
    if wrapped and x is not None:
        raise _CallError("cannot index slice/array with type interface {}")
    if t is int or t is U8 or t is U64:
        if x < 0 or x > cap:
            raise _CallError(f"index out of range: {x}")
        return int(x)
    if x is None or x is NILW:
        raise _CallError("cannot index slice/array with nil")
    raise _CallError(f"cannot index slice/array with type {type_name(x)}")


class _CallError(Exception):
    pass


def _call(name: str, nid: int, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except _CallError as err:
        fail(nid, f"error calling {name}: {err}")


def _index(item: Any, *indexes: Any) -> Any:
    item = _ind(item)
    if item is None:
        raise _CallError("index of untyped nil")
    for x in indexes:
        x = _ind(x)
        if item is NILW:
            raise _CallError("index of nil pointer")
        t = type(item)
        if t is list or t is str:
            size = len(item) if t is list else len(go_bytes(item))
            n = _index_arg(x, size)
            if n == size:
                kind = "slice" if t is list else "string"
                raise _CallError(f"reflect: {kind} index out of range")
            if t is list:
                v = item[n]
                item = NILW if v is None else v
            else:
                item = U8(go_bytes(item)[n])
        elif t is dict:
            str_keys = all(type(k) is str for k in item)
            if str_keys:
                if x is None:
                    raise _CallError("value is nil; should be of type string")
                if type(x) is not str:
                    raise _CallError(f"value has type {type_name(x)}; should be string")
            try:
                v = item.get(x)
                if v is None and type(x) is not str and x is not None:
                    # A map whose keys clash in Python holds them as GoKeys.
                    v = item.get(GoKey(x))
            except TypeError:
                v = None
            item = NILW if v is None else v
        else:
            raise _CallError(f"can't index item of type {type_name(item)}")
    return item


def f_index(item: Any, nid: int, *indexes: Any) -> Any:
    if len(indexes) == 1:
        t, x = type(item), indexes[0]
        if t is dict and type(x) is str:
            v = item.get(x)
            return NILW if v is None else v
        if t is list and type(x) is int and 0 <= x < len(item):
            v = item[x]
            return NILW if v is None else v
    return _call("index", nid, _index, item, *indexes)


def _slice(item: Any, wrapped: tuple[bool, ...], *indexes: Any) -> Any:
    item = _ind(item)
    if item is None:
        raise _CallError("slice of untyped nil")
    if len(indexes) > 3:
        raise _CallError(f"too many slice indexes: {len(indexes)}")
    t = type(item)
    if t is str:
        if len(indexes) == 3:
            raise _CallError("cannot 3-index slice a string")
        raw = go_bytes(item)
        cap = len(raw)
    elif t is list:
        cap = len(item)
    else:
        raise _CallError(f"can't slice item of type {type_name(item)}")
    idx = [0, cap, cap]
    for i, x in enumerate(indexes):
        idx[i] = _index_arg(x, cap, wrapped[i])
    if idx[0] > idx[1]:
        raise _CallError(f"invalid slice index: {idx[0]} > {idx[1]}")
    if len(indexes) == 3 and idx[1] > idx[2]:
        raise _CallError(f"invalid slice index: {idx[1]} > {idx[2]}")
    if t is str:
        return raw[idx[0] : idx[1]].decode("utf-8", "surrogateescape")
    return item[idx[0] : idx[1]]


def f_slice(item: Any, nid: int, wrapped: tuple[bool, ...], *indexes: Any) -> Any:
    return _call("slice", nid, _slice, item, wrapped, *indexes)


def _len(item: Any) -> int:
    if item is NILW:
        raise _CallError("len of nil pointer")
    if item is None:
        raise _CallError("reflect: call of reflect.Value.Type on zero Value")
    t = type(item)
    if t is str:
        return len(go_bytes(item))
    if t is list or t is dict:
        return len(item)
    raise _CallError(f"len of type {type_name(item)}")


def f_len(item: Any, nid: int) -> int:
    t = type(item)
    if t is list or t is dict:
        return len(item)
    if t is str and item.isascii():
        return len(item)
    return int(_call("len", nid, _len, item))


def _kind(v: Any) -> str | None:
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is U8 or t is U64:
        return "uint"
    if t is float:
        return "float"
    if t is str:
        return "string"
    if t is complex:
        return "complex"
    return None


def _reflect_kind(v: Any) -> str:
    if type(v) is GoTime:
        return "struct"
    if v is None:
        return "invalid"
    if type(v) is list:
        return "slice"
    if type(v) is dict:
        return "map"
    return type(v).__name__


def _eq(arg1: Any, *args: Any) -> bool:
    arg1 = _ind(arg1)
    if not args:
        raise _CallError("missing argument for comparison")
    k1 = _kind(arg1)
    for arg in args:
        arg = _ind(arg)
        k2 = _kind(arg)
        truth = False
        if k1 != k2:
            if k1 == "int" and k2 == "uint":
                truth = arg1 >= 0 and arg1 == arg
            elif k1 == "uint" and k2 == "int":
                truth = arg >= 0 and arg1 == arg
            elif arg1 is not None and arg is not None:
                raise _CallError("incompatible types for comparison")
        elif k1 is not None:
            truth = arg1 == arg
        else:
            r1, r2 = _reflect_kind(arg1), _reflect_kind(arg)
            if r1 != r2 and "invalid" not in (r1, r2):
                raise _CallError(
                    sprintf(
                        "non-comparable types %s: %v, %s: %v",
                        [arg1, type_name(arg1), type_name(arg), arg],
                    )
                )
            if arg1 is None or arg is None:
                truth = (arg is None) == (arg1 is None)
            elif type(arg) is GoTime:
                truth = arg1 == arg
            else:
                raise _CallError(sprintf("non-comparable type %s: %v", [arg, type_name(arg)]))
        if truth:
            return True
    return False


def _lt(arg1: Any, arg2: Any) -> bool:
    arg1 = _ind(arg1)
    k1 = _kind(arg1)
    if k1 is None:
        raise _CallError("invalid type for comparison")
    arg2 = _ind(arg2)
    k2 = _kind(arg2)
    if k2 is None:
        raise _CallError("invalid type for comparison")
    if k1 != k2:
        if k1 == "int" and k2 == "uint":
            return bool(arg1 < 0 or arg1 < arg2)
        if k1 == "uint" and k2 == "int":
            return bool(arg2 >= 0 and arg1 < arg2)
        raise _CallError("incompatible types for comparison")
    if k1 in ("bool", "complex"):
        raise _CallError("invalid type for comparison")
    return bool(arg1 < arg2)


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


_SAME_KIND_FAST = (str, int, float)


def f_eq(a: Any, nid: int, *rest: Any) -> bool:
    if len(rest) == 1:
        t = type(a)
        if t is type(rest[0]) and t in _SAME_KIND_FAST:
            return bool(a == rest[0])
    return bool(_call("eq", nid, _eq, a, *rest))


def f_ne(a: Any, nid: int, b: Any) -> bool:
    t = type(a)
    if t is type(b) and t in _SAME_KIND_FAST:
        return bool(a != b)
    return not _call("ne", nid, _eq, a, b)


def f_lt(a: Any, nid: int, b: Any) -> bool:
    t = type(a)
    if t is type(b) and t in _SAME_KIND_FAST:
        return bool(a < b)
    return bool(_call("lt", nid, _lt, a, b))


def f_le(a: Any, nid: int, b: Any) -> bool:
    return bool(_call("le", nid, _le, a, b))


def f_gt(a: Any, nid: int, b: Any) -> bool:
    return not _call("gt", nid, _le, a, b)


def f_ge(a: Any, nid: int, b: Any) -> bool:
    return not _call("ge", nid, _lt, a, b)


def f_not(a: Any) -> bool:
    return not a


def f_sprint(_nid: int, *args: Any) -> str:
    return sprint([_ind(a) for a in args])


def f_sprintln(_nid: int, *args: Any) -> str:
    return sprintln([_ind(a) for a in args])


def f_sprintf(fmt: str, *args: Any) -> str:
    return sprintf(fmt, [_ind(a) for a in args])


def _eval_args(args: tuple[Any, ...]) -> str:
    if len(args) == 1 and type(args[0]) is str:
        return args[0]
    return sprint(["<no value>" if a is None or a is NILW else a for a in args])


_HTML = {
    0: "\ufffd",
    ord('"'): "&#34;",
    ord("'"): "&#39;",
    ord("&"): "&amp;",
    ord("<"): "&lt;",
    ord(">"): "&gt;",
}


def f_html(_nid: int, *args: Any) -> str:
    return _eval_args(args).translate(_HTML)


_JS_ASCII = {
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
    "<": "\\u003C",
    ">": "\\u003E",
    "&": "\\u0026",
    "=": "\\u003D",
}


def f_js(_nid: int, *args: Any) -> str:
    from pytest_ooda.gotemplate.gofmt import is_print

    s = _eval_args(args)
    out: list[str] = []
    for ch in s:
        code = ord(ch)
        if ch in _JS_ASCII:
            out.append(_JS_ASCII[ch])
        elif code < 0x20:
            out.append(f"\\u00{code:02X}")
        elif code < 0x80:
            out.append(ch)
        elif not is_print(code) and not 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    return "".join(out)


def f_urlquery(_nid: int, *args: Any) -> str:
    return _urlquote(go_bytes(_eval_args(args)), safe="-_.~").replace("%20", "+")


def _callfn(fn: Any, *_args: Any) -> Any:
    fn = _ind(fn)
    if fn is None:
        raise _CallError("call of nil")
    raise _CallError(f"non-function of type {type_name(fn)}")


def f_call(fn: Any, nid: int, *args: Any) -> Any:
    return _call("call", nid, _callfn, fn, *args)


FILTERS: dict[str, Callable[..., Any]] = {
    "P": f_print,
    "CX": lambda re, im: complex(re, im),
    "CV": f_conv,
    "F1": f_field1,
    "PF1": f_print_field1,
    "F": f_field,
    "E": f_fail,
    "T": f_true,
    "RL": f_range,
    "AT": f_at,
    "R2": f_range2,
    "S": f_want_string,
    "index": f_index,
    "slice": f_slice,
    "len": f_len,
    "eq": f_eq,
    "ne": f_ne,
    "lt": f_lt,
    "le": f_le,
    "gt": f_gt,
    "ge": f_ge,
    "NOT": f_not,
    "print": f_sprint,
    "println": f_sprintln,
    "printf": f_sprintf,
    "html": f_html,
    "js": f_js,
    "urlquery": f_urlquery,
    "call": f_call,
}


def f_late_final(final: Any, fname: str, pos: int, *others: Any) -> Any:
    """Call filter ``fname`` with ``final`` (evaluated first) inserted at ``pos``."""
    layout = list(others)
    layout.insert(pos, final)
    return FILTERS[fname[1:]](*layout)


FILTERS["FIN"] = f_late_final

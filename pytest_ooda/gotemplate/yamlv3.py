"""A PyYAML loader that types plain scalars the way Go's yaml.v3 does for ``interface{}``.

PyYAML follows YAML 1.1 (``yes``/``on`` are booleans, ``1e3`` and ``0o17`` are strings);
yaml.v3, which the Go implementation decodes fragment parameters with, does not. Loading
``parameters:`` with ``GoYamlLoader`` gives templates the values Go would see.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

import yaml

from pytest_ooda.gotemplate.gofmt import U64, GoTime
from pytest_ooda.gotemplate.parser import parse_go_float, parse_go_int

_TAG = "tag:yaml.org,2002:"
_GO = "!go-v3-plain"
_SPECIAL: dict[str, Any] = {
    **dict.fromkeys(["true", "True", "TRUE"], True),
    **dict.fromkeys(["false", "False", "FALSE"], False),
    **dict.fromkeys(["", "~", "null", "Null", "NULL"], None),
    **dict.fromkeys([".nan", ".NaN", ".NAN"], math.nan),
    **dict.fromkeys([".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"], math.inf),
    **dict.fromkeys(["-.inf", "-.Inf", "-.INF"], -math.inf),
}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_STAMP = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[+-]\d{2}:\d{2}))"
    r"|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?))?"
)
_MISSING = object()


def _timestamp(text: str) -> GoTime | None:
    m = _STAMP.fullmatch(text)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    hh, mm, ss, frac, zone = m[4] or m[9], m[5] or m[10], m[6] or m[11], m[7] or m[12], m[8]
    digits = (frac or ".")[1:]
    if len(digits) > 9:
        # yaml.v3's layouts end in .999999999; Go's time.Parse refuses a longer fraction,
        # so the scalar stays a string.
        return None
    nanosecond = int((digits + "000000000")[:9])
    try:
        moment = datetime.datetime(
            year, month, day, int(hh or 0), int(mm or 0), int(ss or 0), nanosecond // 1000
        )
    except ValueError:
        return None
    if zone is None or zone == "Z":
        return GoTime(moment, None, nanosecond)
    sign = -1 if zone[0] == "-" else 1
    return GoTime(moment, sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60), nanosecond)


def resolve_plain(text: str) -> Any:
    """The ``interface{}`` value yaml.v3 gives an untagged plain scalar."""
    special = _SPECIAL.get(text, _MISSING)
    if special is not _MISSING:
        return special
    first = text[:1]
    if first == ".":
        value = parse_go_float(text)
        return text if value is None else value
    if first and (first.isdigit() or first in "+-"):
        stamp = _timestamp(text)
        if stamp is not None:
            return stamp
        plain = text.replace("_", "")
        for signed in (True, False):
            number = parse_go_int(plain, signed) if plain else None
            if number is not None:
                return number if signed else U64(number)
        if _YAML_FLOAT.fullmatch(plain):
            value = parse_go_float(plain)
            if value is not None:
                return value
        for prefix, base in (("0b", 2), ("-0b", 2), ("0o", 8), ("-0o", 8)):
            if plain.startswith(prefix):
                digits = plain[len(prefix) :]
                try:
                    number = int(digits, base) * (-1 if prefix[0] == "-" else 1)
                except ValueError:
                    break
                if -(1 << 63) <= number < (1 << 63):
                    return number
                if 0 <= number < (1 << 64):
                    return U64(number)
                break
    return text


class GoYamlLoader(yaml.SafeLoader):
    """SafeLoader with yaml.v3's typing of plain scalars (see module docstring)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            if value == "<<":
                return _TAG + "merge"
            return _GO
        parent: Any = super()
        return parent.resolve(kind, value, implicit)


def _construct_plain(loader: GoYamlLoader, node: yaml.ScalarNode) -> Any:
    return resolve_plain(str(loader.construct_scalar(node)))


GoYamlLoader.add_constructor(_GO, _construct_plain)


def load_params(text: str) -> Any:
    """Decode YAML text into the values Go's ``yaml.Unmarshal`` into ``interface{}`` gives."""
    return yaml.load(text, Loader=GoYamlLoader)

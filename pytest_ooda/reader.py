"""Located reading of a file's values: the one reader of config, scenario, judge and
results files.

A :class:`Reader` knows its file and the error its mistakes raise (``ConfigError``,
``ScenarioError``, ``ResultsError``). Each check takes a value, where it sits and what
messages call it, and returns the value as Python wants it, or raises that error at
that place, saying what was expected and what was found::

    votes = check.integer(*check.get(block, "votes"), "expect.judge.votes", 1)
    # s.yml:7:12: expect.judge.votes: expected an integer >= 1, got 0

Where a value sits is a :class:`~pytest_ooda.yamlnodes.Mark` (line and column) in a YAML
file, whose loader (:mod:`.yamlload`) already refused nesting deeper than
``MAX_DEPTH``. A JSON document carries no marks: a results record is located by its
line (``Reader(file, ResultsError, line=n)`` and ``mark=None``), and
:func:`deeper_than` bounds the nesting of the values a reader keeps as they are.

A ``lenient`` reader lets keys it does not know pass (a ``rooda-config.yml``, which
rooda reads that way): each is a located warning in ``warnings`` instead of an error.

A ``collect`` reader reports every mistake of a file in one pass: a caller reads each
independent part through :meth:`Reader.attempt`, which keeps the part's mistake and goes
on, and unknown keys are all kept; :meth:`Reader.raise_collected` then raises one error
carrying them all (``OodaError.also``). A person fixing a file sees its three mistakes
at once, not one per run.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ooda._util import did_you_mean, type_name
from pytest_ooda.errors import OodaError, OodaWarning
from pytest_ooda.yamlnodes import Mark, YamlMapping, YamlSequence

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["MAX_DEPTH", "QUOTE_KEY_HINT", "Reader", "deeper_than"]

_T = TypeVar("_T")
_D = TypeVar("_D")

#: The deepest nesting any reader follows (the YAML loader's bound too).
MAX_DEPTH = 100

#: Why a YAML key is not a string, and what to do about it.
QUOTE_KEY_HINT = 'quote the key, e.g. "on": or "1":'


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON: dicts, lists, scalars) nests more than ``limit``
    lists and mappings. Walked with a stack of its own, so a value nested far deeper
    than Python's recursion limit is measured, not crashed on."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class Reader:
    """Located reading of the values of one file.

    ``file`` is the file as errors name it, ``error`` the class of its mistakes and
    ``warning`` of its warnings (collected in :attr:`warnings`), ``line`` where a value
    without a mark is (a JSON record's line); ``lenient`` makes unknown keys warnings.
    """

    #: How messages name a mapping (a JSON reader says "an object").
    MAPPING = "a mapping"

    def __init__(
        self,
        file: str | None,
        error: type[OodaError] = OodaError,
        warning: type[OodaWarning] = OodaWarning,
        *,
        line: int | None = None,
        lenient: bool = False,
        collect: bool = False,
    ) -> None:
        self.file = file
        self.error = error
        self.warning = warning
        self.line = line
        self.lenient = lenient
        self.collect = collect
        self.warnings: list[OodaWarning] = []
        self.errors: list[OodaError] = []

    @property
    def base(self) -> Path | None:
        """The file's folder: paths written in it (rubrics, examples) are relative to it."""
        return Path(self.file).parent if self.file is not None else None

    # ------------------------------------------------------------------ errors

    def fail(
        self,
        message: str,
        mark: Mark | None = None,
        hint: str | None = None,
        error: type[OodaError] | None = None,
    ) -> OodaError:
        """The error to raise for the value at ``mark`` (at the reader's line without
        one); ``error`` overrides the reader's class (a ``FragmentError`` in a config)."""
        line, column = (mark.line, mark.column) if mark is not None else (self.line, None)
        return (error or self.error)(message, file=self.file, line=line, column=column, hint=hint)

    def attempt(self, read: Callable[..., _T], *args: Any, default: _D) -> _T | _D:
        """``read(*args)``; in a collecting reader, a mistake it raises is kept and
        ``default`` returned, so the parts after it are read too."""
        try:
            return read(*args)
        except OodaError as exc:
            if not self.collect:
                raise
            self.errors.append(exc)
            return default

    def raise_collected(self) -> None:
        """Raise the mistakes kept so far as one error (the first, carrying the rest)."""
        if self.errors:
            raise OodaError.gathered(self.errors)

    def warn(self, message: str, mark: Mark | None = None, hint: str | None = None) -> None:
        """Keep a located warning."""
        line, column = (mark.line, mark.column) if mark is not None else (self.line, None)
        self.warnings.append(
            self.warning(message, file=self.file, line=line, column=column, hint=hint)
        )

    # ------------------------------------------------------------------ containers

    def keys(self, mapping: YamlMapping, known: Sequence[str], where: str) -> set[Any]:
        """Refuse a key ``known`` lacks, at the key, with the closest known one; a lenient
        reader warns instead and returns the keys to ignore."""
        ignored: set[Any] = set()
        # A JSON object has no marks: its mistakes are at the reader's line.
        marks = mapping.key_marks if isinstance(mapping, YamlMapping) else {}
        for key in mapping:
            if not isinstance(key, str):
                message = f"{where}: keys must be strings, got {type_name(key)}"
                hint = QUOTE_KEY_HINT
            elif key not in known:
                message = f"{where}: unknown key {key!r}"
                hint = did_you_mean(key, known, label="expected one of")
            else:
                continue
            mark = marks.get(key, getattr(mapping, "mark", None))
            if self.collect and not self.lenient:
                self.errors.append(self.fail(message, mark, hint))
                ignored.add(key)
                continue
            if not self.lenient:
                raise self.fail(message, mark, hint)
            ignored.add(key)
            first = hint.splitlines()[0]
            self.warn(f"{message} (ignored, as rooda does); {first}", mark)
        return ignored

    def mapping(self, value: Any, mark: Mark | None, where: str) -> YamlMapping:
        """A mapping: a located YAML one, or a JSON object (a plain ``dict``, which
        ``keys`` and the value checks take, but ``get``/``optional`` do not: no marks)."""
        if not isinstance(value, dict):
            raise self.fail(f"{where}: expected {self.MAPPING}, got {type_name(value)}", mark)
        return value  # type: ignore[return-value]  # a JSON object is a plain dict

    def get(self, mapping: YamlMapping, key: str) -> tuple[Any, Mark]:
        """The value of ``key`` and where it is (the mapping's place when it is absent)."""
        return mapping.get(key), mapping.value_marks.get(key, mapping.mark)

    def optional(
        self,
        container: YamlMapping,
        key: str,
        where: str,
        read: Callable[[Any, Mark, str], _T],
        default: _D,
    ) -> _T | _D:
        """``read`` the value of ``key`` when it is set (not null), else ``default``."""
        if container.get(key) is None:
            return default
        return read(*self.get(container, key), f"{where}.{key}")

    def items(self, value: Any, mark: Mark | None, where: str) -> list[tuple[Any, Mark | None]]:
        """A list's items, each with its own place."""
        if not isinstance(value, list):
            raise self.fail(f"{where}: expected a list, got {type_name(value)}", mark)
        marks = value.item_marks if isinstance(value, YamlSequence) else [mark] * len(value)
        return list(zip(value, marks, strict=True))

    # ------------------------------------------------------------------ scalars

    def text(self, value: Any, mark: Mark | None, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{where}: expected a string, got {type_name(value)}", mark)
        return value

    def texts(self, value: Any, mark: Mark | None, where: str) -> tuple[str, ...]:
        """One string, or a list of strings (each located on its own item)."""
        if isinstance(value, list):
            return tuple(
                self.text(item, at, f"{where}[{index}]")
                for index, (item, at) in enumerate(self.items(value, mark, where))
            )
        return (self.text(value, mark, where),)

    def integer(self, value: Any, mark: Mark | None, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}: expected an integer, got {type_name(value)}", mark)
        if minimum is not None and value < minimum:
            raise self.fail(f"{where}: expected an integer >= {minimum}, got {value}", mark)
        return value

    def number(self, value: Any, mark: Mark | None, where: str, minimum: float | None = 0) -> float:
        """A finite number >= ``minimum`` (a rate, a cost, a duration), or any finite
        number when ``minimum`` is ``None``."""
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or (minimum is not None and value < minimum)
        ):
            expected = "a number" if minimum is None else f"a number >= {minimum:g}"
            raise self.fail(f"{where}: expected {expected}, got {value!r}", mark)
        return float(value)

    def positive(self, value: Any, mark: Mark | None, where: str) -> float:
        """A number > 0 (a budget in dollars, a timeout in seconds)."""
        number = self.number(value, mark, where)
        if number <= 0:
            raise self.fail(f"{where}: expected a number > 0, got {value!r}", mark)
        return number

    def flag(self, value: Any, mark: Mark | None, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(f"{where}: expected true or false, got {type_name(value)}", mark)
        return value

    def choice(self, value: Any, mark: Mark | None, where: str, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            hint = did_you_mean(value, choices) if isinstance(value, str) else ""
            raise self.fail(
                f"{where}: expected one of {', '.join(choices)}, got {value!r}", mark, hint or None
            )
        return value

    def names(self, value: Any, mark: Mark | None, where: str) -> tuple[str, ...]:
        """A list of tool names (one name alone is accepted too)."""
        listed = isinstance(value, list)
        found = []
        for index, (item, at) in enumerate(
            self.items(value, mark, where) if listed else [(value, mark)]
        ):
            name = self.text(item, at, f"{where}[{index}]" if listed else where)
            if not name.strip():
                raise self.fail(
                    f"{where}[{index}]: a tool name cannot be empty"
                    if listed
                    else f"{where}: a tool name cannot be empty",
                    at,
                )
            found.append(name)
        return tuple(found)

    def pattern(self, value: Any, mark: Mark | None, where: str) -> str:
        """A regular expression, compiled here so that a bad one is located."""
        text = self.text(value, mark, where)
        try:
            re.compile(text)
        except re.error as exc:
            raise self.fail(
                f"{where}: {text!r} is not a regular expression: {exc}",
                mark,
                "Python `re` syntax; quote the pattern in YAML",
            ) from None
        return text

    def patterns(self, value: Any, mark: Mark | None, where: str) -> tuple[str, ...]:
        """One regular expression or a list of them."""
        if isinstance(value, list):
            return tuple(
                self.pattern(item, at, f"{where}[{index}]")
                for index, (item, at) in enumerate(self.items(value, mark, where))
            )
        return (self.pattern(value, mark, where),)

    def nested(self, value: Any, mark: Mark | None, where: str) -> Any:
        """A value kept as it is (a JSON object a record carries), refused when it nests
        deeper than ``MAX_DEPTH``: what renders it later recurses on it."""
        if deeper_than(value):
            raise self.fail(f"{where}: nesting deeper than {MAX_DEPTH} levels", mark)
        return value

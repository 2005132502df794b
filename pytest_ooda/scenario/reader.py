"""Reading a scenario file's values: each reader checks one YAML node (its type, its
range) and returns it as a Python value, or raises a ``ScenarioError`` at the node's
line and column, saying what was expected. The readers of the file's sections
(:mod:`.schema`, :mod:`.expect_schema`, :mod:`.recording_schema`, and
``judge.schema`` for ``expect.judge``) are written with it; so is
:func:`load_examples`, a judge's labelled-examples file a scenario may name."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ooda._util import closest, type_name
from pytest_ooda.errors import ScenarioError
from pytest_ooda.yamlload import load_yaml_file
from pytest_ooda.yamlnodes import Mark, YamlMapping, YamlSequence

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.judge import LabelledExample

__all__ = ["Reader", "load_examples"]

_T = TypeVar("_T")
_D = TypeVar("_D")


class Reader:
    """Located reading of the values of one file (``file``: its name in errors)."""

    def __init__(self, file: str | None) -> None:
        #: The file the values come from, as its errors name it.
        self.file = file

    @property
    def base(self) -> Path | None:
        """The scenario file's folder: paths in it (rubrics, examples) are relative to it."""
        return Path(self.file).parent if self.file is not None else None

    def examples_file(self, path: Path) -> tuple[LabelledExample, ...]:
        """A separate file of labelled examples (``expect.judge.examples: FILE``)."""
        return load_examples(path)

    def fail(self, message: str, mark: Mark, hint: str | None = None) -> ScenarioError:
        """The error to raise for the node at ``mark``."""
        return ScenarioError(message, file=self.file, line=mark.line, column=mark.column, hint=hint)

    def keys(self, mapping: YamlMapping, known: Sequence[str], where: str) -> None:
        """Refuse a key ``known`` lacks, at the key, suggesting the closest one."""
        for key in mapping:
            if key not in known:
                close = closest(str(key), known)
                hint = (
                    f"did you mean {close!r}?" if close else f"expected one of: {', '.join(known)}"
                )
                raise self.fail(
                    f"unknown key {key!r} in {where}",
                    mapping.key_marks.get(key, mapping.mark),
                    hint,
                )

    def mapping(self, value: Any, mark: Mark, where: str) -> YamlMapping:
        if not isinstance(value, YamlMapping):
            raise self.fail(f"{where}: expected a mapping, got {type_name(value)}", mark)
        return value

    def get(self, mapping: YamlMapping, key: str) -> tuple[Any, Mark]:
        """The value of ``key`` and where it is (the mapping's place when it is absent)."""
        return mapping.get(key), mapping.value_marks.get(key, mapping.mark)

    def text(self, value: Any, mark: Mark, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{where}: expected a string, got {type_name(value)}", mark)
        return value

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

    def texts(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """One string, or a list of strings (each located on its own item)."""
        if isinstance(value, YamlSequence):
            return tuple(
                self.text(item, value.item_marks[i], f"{where}[{i}]")
                for i, item in enumerate(value)
            )
        return (self.text(value, mark, where),)

    def integer(self, value: Any, mark: Mark, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}: expected an integer, got {type_name(value)}", mark)
        if minimum is not None and value < minimum:
            raise self.fail(f"{where}: expected an integer >= {minimum}, got {value}", mark)
        return value

    def number(self, value: Any, mark: Mark, where: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise self.fail(f"{where}: expected a number >= 0, got {value!r}", mark)
        return float(value)

    def positive(self, value: Any, mark: Mark, where: str) -> float:
        """A number > 0 (a budget in dollars, a timeout in seconds)."""
        number = self.number(value, mark, where)
        if number <= 0:
            raise self.fail(f"{where}: expected a number > 0, got {value!r}", mark)
        return number

    def flag(self, value: Any, mark: Mark, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(f"{where}: expected true or false, got {type_name(value)}", mark)
        return value

    def names(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """A list of tool names (one name alone is accepted too)."""
        items = list(value) if isinstance(value, YamlSequence) else [value]
        marks = value.item_marks if isinstance(value, YamlSequence) else [mark]
        found = []
        for index, item in enumerate(items):
            at = f"{where}[{index}]" if isinstance(value, YamlSequence) else where
            name = self.text(item, marks[index], at)
            if not name.strip():
                raise self.fail(f"{at}: a tool name cannot be empty", marks[index])
            found.append(name)
        return tuple(found)

    def patterns(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """Regular expressions, each compiled here so a bad one is located."""
        found = self.texts(value, mark, where)
        for pattern in found:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise self.fail(
                    f"{where}: {pattern!r} is not a regular expression: {exc}",
                    mark,
                    "Python `re` syntax; quote the pattern in YAML",
                ) from None
        return found

    def choice(self, value: Any, mark: Mark, where: str, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(f"{where}: expected one of {', '.join(choices)}, got {value!r}", mark)
        return value


def load_examples(path: Path) -> tuple[LabelledExample, ...]:
    """A file of labelled examples for judge calibration: a YAML list, or a mapping
    with ``examples:`` (and an optional ``description``)."""
    from pytest_ooda.judge import MAX_JUDGE_FILE_BYTES, read_examples

    doc = load_yaml_file(path, error=ScenarioError, max_bytes=MAX_JUDGE_FILE_BYTES)
    check = Reader(str(path))
    if isinstance(doc, YamlMapping):
        check.keys(doc, ("examples", "description"), "examples file")
        if doc.get("examples") is None:
            raise check.fail("examples file: missing 'examples'", doc.mark)
        value, mark = check.get(doc, "examples")
    else:
        value, mark = doc, Mark(1, 1)
    return read_examples(check, value, mark, path.parent)

"""Located YAML values: what a loaded document is made of, without PyYAML.

:mod:`pytest_ooda.yamlload` builds these from a file; code that only reads loaded
values (the config schema, composition) imports them from here, so it never pays for
importing the YAML parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "ANY_ITEM",
    "ANY_KEY",
    "GoPathStep",
    "Mark",
    "YamlMapping",
    "YamlSequence",
    "key_mark",
    "mark_of",
    "to_plain",
    "value_mark",
]

ANY_KEY = "*"
ANY_ITEM = "[]"
GoPathStep: TypeAlias = "str | frozenset[str]"
"""One step of a ``go_typed`` path: a key, a set of keys, ``ANY_KEY`` or ``ANY_ITEM``."""


@dataclass(frozen=True)
class Mark:
    """A 1-based position inside a YAML file."""

    line: int
    column: int


class YamlMapping(dict[Any, Any]):
    """A ``dict`` that also knows where it, each key and each value sit in the file."""

    def __init__(self, mark: Mark) -> None:
        super().__init__()
        self.mark = mark
        self.key_marks: dict[Any, Mark] = {}
        self.value_marks: dict[Any, Mark] = {}
        #: Under yaml.v3 typing: each key as written (``0x10`` for the key 16).
        self.key_texts: dict[Any, str] = {}


class YamlSequence(list[Any]):
    """A ``list`` that also knows where it and each item sit in the file."""

    def __init__(self, mark: Mark) -> None:
        super().__init__()
        self.mark = mark
        self.item_marks: list[Mark] = []


def key_mark(container: YamlMapping, key: Any) -> Mark:
    """Where ``key`` is written in ``container`` (the container's own mark if unknown)."""
    return container.key_marks.get(key, container.mark)


def value_mark(container: YamlMapping, key: Any) -> Mark:
    """Where the value of ``key`` starts in ``container``."""
    return container.value_marks.get(key, container.mark)


def mark_of(value: Any, default: Mark | None = None) -> Mark:
    """The mark of a located mapping or sequence, else ``default`` (or 1:1)."""
    if isinstance(value, YamlMapping | YamlSequence):
        return value.mark
    return default if default is not None else Mark(1, 1)


def to_plain(value: Any) -> Any:
    """A deep copy of located values as plain ``dict``/``list`` objects."""
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    return value

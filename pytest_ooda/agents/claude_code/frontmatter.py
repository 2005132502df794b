"""A Markdown file's YAML front matter, read as Claude Code reads it — and located.

Claude Code reads the block between a first line ``---`` and the next line ``---`` as
YAML and the rest as the body. It is lenient where a person is not: a block it cannot
parse is read key by key as plain text (``description: [unclosed`` lists the skill as
``[unclosed``), an unclosed block is body text. Here every such mistake is a
:class:`Problem` at its line and column, and the values keep their marks so a later
check (a tool name, a key's type) can point at them too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ooda._util import type_name
from pytest_ooda.errors import ConfigError
from pytest_ooda.yamlnodes import Mark, YamlMapping, mark_of

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FrontMatter", "Problem", "split_front_matter"]

#: The rule of a located mistake Claude Code would misread or drop (an error), and of
#: one it reads otherwise than the author probably meant (a warning).
ERROR_RULE = "OODA005"
WARNING_RULE = "OODA006"


@dataclass(frozen=True)
class Problem:
    """A located mistake in a command, skill, subagent, hook or plugin file: the lint
    rule it is reported under, the message, where, and a hint."""

    rule: str
    message: str
    file: Path
    line: int | None = None
    column: int | None = None
    hint: str | None = None

    @property
    def is_error(self) -> bool:
        return self.rule == ERROR_RULE

    def format(self) -> str:
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: {self.message}"
        return text + (f"\n  {self.hint}" if self.hint else "")


@dataclass(frozen=True)
class FrontMatter:
    """A file split as Claude Code splits it: the front matter's values (an empty
    mapping when there is none or it does not parse), the body, and the 1-based line
    the body starts on."""

    values: YamlMapping
    body: str
    body_line: int
    #: Whether the file opens a front matter block at all.
    present: bool = False
    problems: tuple[Problem, ...] = field(default=())

    def mark(self, key: str) -> Mark:
        """Where the value of ``key`` is written (the block's start when it is not)."""
        return self.values.value_marks.get(key, self.values.mark)

    def key_mark(self, key: str) -> Mark:
        return self.values.key_marks.get(key, self.values.mark)


_KEY_LINE = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)\Z")


def _line_by_line(lines: list[str]) -> YamlMapping:
    """The front matter as Claude Code reads a block that is not YAML: each line
    ``key: value`` a key with its value as text (what it then lists and checks)."""
    values = YamlMapping(Mark(2, 1))
    for index, line in enumerate(lines):
        found = _KEY_LINE.match(line.rstrip("\r"))
        if found is None or found.group(1) in values:
            continue
        key, text = found.group(1), found.group(2).strip()
        values[key] = text
        values.key_marks[key] = Mark(index + 2, 1)
        values.value_marks[key] = Mark(index + 2, found.start(2) + 1)
    return values


def split_front_matter(text: str, file: Path) -> FrontMatter:
    """``text`` (a whole ``.md`` file) split into its front matter and body."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        return FrontMatter(YamlMapping(Mark(1, 1)), text, 1)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r").rstrip() == "---"), None)
    if end is None:
        problem = Problem(
            ERROR_RULE,
            "the front matter opened here is never closed with a line '---': Claude Code "
            "reads the whole file as the body, its keys as text",
            file,
            1,
            1,
        )
        return FrontMatter(YamlMapping(Mark(1, 1)), text, 1, True, (problem,))
    body = "\n".join(lines[end + 1 :])
    # One blank line per line before the block keeps the YAML's marks the file's own.
    source = "\n" + "\n".join(lines[1:end]) + "\n"
    try:
        from pytest_ooda.yamlload import load_yaml_text  # the YAML parser, when read

        values = load_yaml_text(source, file=str(file), error=ConfigError)
    except ConfigError as error:
        problem = Problem(
            ERROR_RULE,
            f"front matter is not YAML: {error.message.removeprefix('invalid YAML: ')}",
            file,
            error.line,
            error.column,
            "Claude Code then reads each 'key: value' line as text (quote a value that "
            "starts with [ or {, or holds ': ')",
        )
        return FrontMatter(_line_by_line(lines[1:end]), body, end + 2, True, (problem,))
    if values is None:
        return FrontMatter(YamlMapping(Mark(2, 1)), body, end + 2, True)
    if not isinstance(values, YamlMapping):
        at = mark_of(values, Mark(2, 1))
        problem = Problem(
            ERROR_RULE,
            "front matter: expected a mapping of keys (name: …, description: …), "
            f"got {type_name(values)}",
            file,
            at.line,
            at.column,
        )
        return FrontMatter(YamlMapping(Mark(2, 1)), body, end + 2, True, (problem,))
    return FrontMatter(values, body, end + 2, True)

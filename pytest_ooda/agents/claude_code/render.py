"""A command, skill or subagent rendered as Claude Code 2.1.197 renders it.

What the model receives, measured with the agent mock (docs/claude-code.md):

- ``/name ARGS`` as the prompt: a user message of two text blocks, the invocation
  (``<command-message>name</command-message>``, ``<command-name>/name</command-name>``,
  ``<command-args>ARGS</command-args>``) and the body with its front matter dropped and
  ``$ARGUMENTS`` (the text as typed), ``$ARGUMENTS[N]`` and ``$N`` (the N-th argument,
  from 0, split as a shell splits words) replaced; a body with none of them gets
  ``\\n\\nARGUMENTS: ARGS`` appended when arguments are given. Each ``!`cmd``` is run
  in the working directory first and replaced by its output, trimmed (one that fails
  stops the command: nothing is sent); each ``@file`` stays as written and the file is
  attached, as a Read, to the system-role message after it.
- A skill (``/skill ARGS``, or the ``Skill`` tool): its body after ``Base directory for
  this skill: DIR``, with ``${CLAUDE_SKILL_DIR}`` replaced by DIR.
- The listing the model chooses from: ``- name: description`` per command and skill
  (``disable-model-invocation: true`` leaves one out; a description is cut at 1,536
  characters), ``- name: description (Tools: …)`` per subagent.

A snapshot shows ``!`cmd``` as written and runs nothing; a live run is Claude Code's own.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code.checks import references

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.agents.claude_code.material import Item, Material

__all__ = [
    "LISTING_LIMIT",
    "bang_commands",
    "expand_arguments",
    "invocation_text",
    "listing_line",
    "render_snapshot",
    "split_arguments",
]

#: How much of a description the listing keeps (measured: 1,535 characters and "…").
LISTING_LIMIT = 1536
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")
_BANG = re.compile(r"!`([^`\n]+)`")


def split_arguments(text: str) -> list[str]:
    """The arguments as Claude Code splits them: words, quotes grouping (``"Alice
    Smith" happy`` is two); text a shell could not split falls back to whitespace."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def has_placeholder(body: str) -> bool:
    return _PLACEHOLDER.search(body) is not None


def expand_arguments(body: str, arguments: str) -> str:
    """``body`` with ``$ARGUMENTS``, ``$ARGUMENTS[N]`` and ``$N`` replaced, or
    ``ARGUMENTS: …`` appended when it has none of them and arguments are given."""
    words = split_arguments(arguments)

    def replace(match: re.Match[str]) -> str:
        index = match.group(1) or match.group(2)
        if index is None:
            return arguments
        position = int(index)
        return words[position] if position < len(words) else ""

    if has_placeholder(body):
        return _PLACEHOLDER.sub(replace, body)
    if arguments:
        return f"{body}\n\nARGUMENTS: {arguments}"
    return body


def bang_commands(item: Item) -> list[tuple[int, str]]:
    """``(line, command)`` of each ``!`command``` the body runs before it is sent."""
    found: list[tuple[int, str]] = []
    for offset, line in enumerate(item.front.body.split("\n")):
        for match in _BANG.finditer(line):
            found.append((item.front.body_line + offset, match.group(1)))
    return found


def invocation_text(item: Item, arguments: str = "", *, skill_dir: str | None = None) -> str:
    """The text Claude Code sends when ``item`` fires with ``arguments``: a command's
    invocation block and body, a skill's ``Base directory`` line and body (``skill_dir``:
    how the directory is written; default its path), a subagent's system prompt (its
    body; Claude Code appends notes and the environment). ``!`cmd``` stays as written."""
    body = item.front.body
    if item.kind == "subagent":
        return body.strip("\n") + "\n"
    directory = skill_dir if skill_dir is not None else str(item.directory)
    if item.kind == "skill":
        text = body.replace("${CLAUDE_SKILL_DIR}", directory)
        text = expand_arguments(text.lstrip("\n"), arguments)
        return f"Base directory for this skill: {directory}\n\n{text}"
    head = (
        f"<command-message>{item.name}</command-message>\n"
        f"<command-name>/{item.name}</command-name>\n"
        f"<command-args>{arguments}</command-args>\n"
    )
    return head + "\n" + expand_arguments(body.lstrip("\n"), arguments)


def listing_line(item: Item) -> str | None:
    """How the model's listing shows ``item`` (``None``: it is not listed)."""
    if not item.model_invocable:
        return None
    description = item.description
    if len(description) > LISTING_LIMIT:
        description = description[: LISTING_LIMIT - 1] + "…"
    if item.kind == "subagent":
        tools = item.tools
        shown = ", ".join(tools) if tools else "*"
        return f"- {item.name}: {description} (Tools: {shown})"
    return f"- {item.name}: {description}"


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    return "`" * max(longest + 1, 3)


def render_snapshot(
    item: Item, material: Material, arguments: str = "", *, label: str | None = None
) -> str:
    """The Markdown snapshot of ``item``: how it is listed, the text Claude Code sends
    when it fires with ``arguments``, the commands it runs first and the files it
    attaches. Paths are written relative to the material's parent, so the snapshot is
    the same on every machine."""
    base = material.root.parent
    where = _relative(item.file, base)
    title = {"command": f"/{item.name}", "skill": f"skill {item.name}"}.get(
        item.kind, f"subagent {item.name}"
    )
    lines = [f"# {title}", "", f"{item.kind} file: `{where}`"]
    if label is not None:
        lines.append(f"as a scenario invokes it: `{label}`")
    lines += ["", "## How the model sees it listed", ""]
    listed = listing_line(item)
    lines.append(
        f"    {listed}"
        if listed
        else "not listed: disable-model-invocation: true (a person invokes it by name)"
    )
    model = item.text("model")
    if model:
        lines += ["", f"model: {model}"]
    text = invocation_text(item, arguments, skill_dir=_relative(item.directory, base))
    heading = {
        "command": f"## The user message for `/{item.name}{' ' + arguments if arguments else ''}`",
        "skill": "## What Claude Code adds when it fires",
        "subagent": "## Its system prompt (Claude Code appends its notes and environment)",
    }[item.kind]
    fence = _fence(text)
    lines += ["", heading, "", f"{fence}text", text.rstrip("\n"), fence]
    commands = bang_commands(item)
    if commands:
        lines += ["", "## Run before it is sent (a live run runs them; shown as written)", ""]
        lines += [f"- line {line}: `{command}`" for line, command in commands]
    attached = [target for kind, _line, _column, target in references(item) if kind == "at"]
    if attached and item.kind == "command":
        lines += ["", "## Attached as a Read of each file", ""]
        lines += [f"- @{target}" for target in dict.fromkeys(attached)]
    return "\n".join(lines) + "\n"


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()

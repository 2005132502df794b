"""Lint rules for Claude Code material: descriptions that will not trigger well, two
that collide, and tools a command allows but never needs.

The measures, as docs/lint-rules.md states them:

- **too long** (``OODA303``): a description over 1,024 characters, the Agent Skills
  format's limit (Claude Code cuts its listing at 1,536 and every skill's description
  is in every request);
- **too vague** (``OODA304``): a skill's or subagent's description of fewer than four
  content words, or one that never says when to use it (``use when``, ``when …``,
  ``use for/after/before/to``, ``whenever``, ``if …``) — the model picks by it alone;
- **overlap** (``OODA305``): two items the model chooses among in one listing (commands
  and skills share the ``Skill`` tool's; subagents the ``Agent`` tool's) whose
  descriptions share at least 60% of their content words (Jaccard similarity of the
  word sets: lowercase words of three letters or more, stop words and ``use when``
  phrasing left out, a plural ``s``/``es`` and ``ed``/``ing`` endings cut) and at least
  three words;
- **unneeded tool** (``OODA404``): a tool in a command's or skill's ``allowed-tools``
  its body never names and whose actions it never mentions (the words listed per tool
  in :data:`NEEDS`; ``!`cmd``` needs Bash, ``@file`` Read). A heuristic: a hit is a
  question to ask, and ``OODA404`` is a warning.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code.frontmatter import Problem
from pytest_ooda.agents.claude_code.render import bang_commands
from pytest_ooda.agents.claude_code.tools import check_tool
from pytest_ooda.yamlnodes import Mark

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.agents.claude_code.material import Item, Material

__all__ = ["NEEDS", "OVERLAP", "content_words", "lint_material", "overlap"]

#: The longest description the Agent Skills format allows.
DESCRIPTION_LIMIT = 1024
#: Fewer content words than this say too little to be chosen by.
MIN_WORDS = 4
#: The Jaccard similarity at which two descriptions collide.
OVERLAP = 0.6
MIN_SHARED = 3

_STOP_WORDS = (
    "the and for with from into this that these those its are was were can will should "
    "must not only also any all each use used using when whenever user users asks ask "
    "you your via per other than then them they their what which who how has have had "
    "been being does did about after before more most such"
)
_STOP = frozenset(_STOP_WORDS.split())
_WHEN = re.compile(
    r"\b(use (it |this |them )?(when|for|after|before|to|if|whenever|on)|when\b|whenever|"
    r"if the|invoke (it )?(when|for|after|before)|trigger)",
    re.I,
)
#: What in a body shows that a command or skill needs a tool: its name, or one of these
#: words (lowercase, whole words; a trailing ``*`` matches any ending).
NEEDS: dict[str, tuple[str, ...]] = {
    "Bash": (
        "run*",
        "execut*",
        "command*",
        "shell",
        "script*",
        "test*",
        "install*",
        "git",
        "npm",
        "build*",
        "compil*",
        "pytest",
        "make",
        "bash",
    ),
    "Read": (
        "read*",
        "load*",
        "open*",
        "review*",
        "inspect*",
        "examin*",
        "analy*",
        "check*",
        "look*",
        "view*",
        "fetch*",
        "parse*",
        "understand*",
        "context",
    ),
    "Write": (
        "writ*",
        "creat*",
        "generat*",
        "sav*",
        "output*",
        "produc*",
        "initializ*",
        "add*",
        "new",
    ),
    "Edit": (
        "edit*",
        "updat*",
        "modif*",
        "chang*",
        "fix*",
        "replac*",
        "mark*",
        "apply*",
        "refactor*",
        "correct*",
        "amend*",
        "patch*",
        "append*",
    ),
    "MultiEdit": ("edit*", "updat*", "modif*", "chang*", "fix*", "replac*", "mark*", "apply*"),
    "Glob": (
        "find*",
        "list*",
        "glob*",
        "locat*",
        "discover*",
        "scan*",
        "director*",
        "folder*",
        "exist*",
        "pattern*",
        "files",
        "search*",
        "structur*",
        "tree",
    ),
    "Grep": ("search*", "grep*", "find*", "look*", "scan*", "pattern*", "match*", "occurrence*"),
    "WebSearch": ("web", "internet", "online", "research*", "search*", "latest", "current"),
    "WebFetch": ("url*", "fetch*", "http*", "link*", "web", "documentation", "page*", "site*"),
    "Agent": ("subagent*", "agent*", "delegat*", "dispatch*", "parallel", "spawn*"),
    "Task": ("subagent*", "agent*", "delegat*", "dispatch*", "parallel", "spawn*"),
    "Skill": ("skill*", "invok*"),
    "SlashCommand": ("command*", "invok*"),
    "AskUserQuestion": ("ask*", "question*", "clarif*", "confirm*", "approv*", "interactiv*"),
    "TodoWrite": ("todo*", "task*", "progress", "track*", "plan*"),
    "TaskCreate": ("todo*", "task*", "progress", "track*", "plan*"),
}


def _stem(word: str) -> str:
    for ending in ("ing", "ed", "es", "s"):
        if len(word) > 4 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def content_words(text: str) -> frozenset[str]:
    """The words a description is compared by (see the module docstring)."""
    return frozenset(
        _stem(word)
        for word in re.findall(r"[a-z]+", text.lower())
        if len(word) >= 3 and word not in _STOP
    )


def overlap(first: str, second: str) -> tuple[float, int, tuple[str, ...]]:
    """The Jaccard similarity of two descriptions' content words, how many they share,
    and the shared words as ``second`` writes them."""
    a, b = content_words(first), content_words(second)
    if not a or not b:
        return 0.0, 0, ()
    shared = a & b
    written = tuple(
        dict.fromkeys(
            word
            for word in re.findall(r"[a-z]+", second.lower())
            if len(word) >= 3 and word not in _STOP and _stem(word) in shared
        )
    )
    return len(shared) / len(a | b), len(shared), written


def _problem(rule: str, item: Item, message: str, hint: str | None = None) -> Problem:
    values = item.front.values
    mark = values.value_marks.get("description", values.mark if item.front.present else Mark(1, 1))
    return Problem(rule, f"{item.shown}: {message}", item.file, mark.line, mark.column, hint)


def lint_material(material: Material) -> tuple[Problem, ...]:
    """Every ``OODA303``–``OODA305`` and ``OODA404`` finding of ``material``."""
    out: list[Problem] = []
    for item in material.items:
        if not item.model_invocable:
            continue
        description = item.description
        if len(description) > DESCRIPTION_LIMIT:
            out.append(
                _problem(
                    "OODA303",
                    item,
                    f"its description is {len(description)} characters, over the "
                    f"{DESCRIPTION_LIMIT} the Agent Skills format allows (Claude Code lists "
                    "1,536 of it, in every request)",
                    "say what it does and when to use it in a sentence or two",
                )
            )
        if item.kind == "subagent" and not (item.text("description") or "").strip():
            continue  # dropped without one: an OODA005 error already
        if item.kind != "command":
            words = content_words(description)
            missing = []
            if len(words) < MIN_WORDS:
                missing.append(f"it has {len(words)} content word(s)")
            if not _WHEN.search(description):
                missing.append("it never says when to use it")
            if missing:
                out.append(
                    _problem(
                        "OODA304",
                        item,
                        f"its description is too vague to be chosen by: {' and '.join(missing)} "
                        f"({description!r})",
                        "add the situations it is for: 'Use when …'",
                    )
                )
    out.extend(_overlaps(material.items))
    for item in material.items:
        out.extend(_unneeded_tools(item))
    return tuple(out)


def _overlaps(items: Sequence[Item]) -> list[Problem]:
    out: list[Problem] = []
    listings = (
        [item for item in items if item.kind != "subagent" and item.model_invocable],
        [item for item in items if item.kind == "subagent"],
    )
    for listed in listings:
        words = [content_words(item.description) for item in listed]
        for (i, first), (j, second) in itertools.combinations(enumerate(listed), 2):
            shared = words[i] & words[j]
            if len(shared) < MIN_SHARED or len(shared) < OVERLAP * len(words[i] | words[j]):
                continue
            score, _count, written = overlap(first.description, second.description)
            out.append(
                _problem(
                    "OODA305",
                    second,
                    f"its description overlaps {first.shown}'s ({score:.0%} of their "
                    f"content words shared: {', '.join(written[:8])}): the model "
                    "cannot tell them apart",
                    f"{first.file}: say what each is for that the other is not",
                )
            )
    return out


def _mentions(body: str, words: Sequence[str]) -> bool:
    lowered = body.lower()
    for word in words:
        if word.endswith("*"):
            if re.search(rf"\b{re.escape(word[:-1])}\w*", lowered):
                return True
        elif re.search(rf"\b{re.escape(word)}\b", lowered):
            return True
    return False


def _needed(item: Item, tool: str) -> bool:
    body = item.front.body
    if re.search(rf"\b{re.escape(tool)}\b", body):
        return True
    if tool == "Bash" and (
        bang_commands(item) or re.search(r"```(ba)?sh|```shell|```console", body)
    ):
        return True
    if tool == "Read" and re.search(r"(?<![\w`])@[\w./-]+\.\w+", body):
        return True
    words = NEEDS.get(tool)
    return words is None or _mentions(body, words)


def _unneeded_tools(item: Item) -> list[Problem]:
    if item.kind == "subagent":
        return []
    tools = item.tools
    if not tools:
        return []
    out: list[Problem] = []
    values = item.front.values
    mark = values.value_marks.get("allowed-tools", values.mark)
    for entry in tools:
        name, problem, _hint = check_tool(entry)
        if name is None or problem is not None or name.startswith("mcp__"):
            continue
        if not _needed(item, name):
            out.append(
                Problem(
                    "OODA404",
                    f"{item.shown}: allowed-tools: {entry} is never needed: its text neither "
                    f"names {name} nor says to do what it does",
                    item.file,
                    mark.line,
                    mark.column,
                    "allow only the tools the procedure uses (each one allowed is one the "
                    "agent may use unasked)",
                )
            )
    return out

"""No module outside ``pytest_ooda/agents/`` names an agent in code (issue 36): what the
code knows about an agent lives in the agent's module, and everything else asks it.

The rule, precisely. The names are every built-in agent's ``name``, ``alias``,
``programs``, ``display`` name and output-format names, read from the registry itself
(so a new agent extends the rule), except the catch-all ``command`` agent, whose name is
an ordinary word. In every ``.py`` file of the package outside ``agents/``:

- no **string literal** (f-string parts included) contains one as a word
  (case-insensitive: ``"claude"``, ``f"{x} claude-json"``, ``"Claude Code"``), whether
  it is compared with (``argv[0] == "claude"``), a dictionary key, a default value or a
  message: a message that must name an agent asks the agent (``agent.display``);
- no **identifier** (a name, an attribute, a function, class, argument or import) contains
  one (``_CLAUDE_API_ERROR``, ``ClaudeStream``).

Allowed: docstrings and comments (they explain, they decide nothing), and whatever the
agent modules themselves declare — a user-facing value such as ``ai_output:
claude-stream-json`` is spelled once, in its agent's module, and read everywhere else
through the registry. Model APIs (``anthropic``, ``openai``) are not agents: the HTTP
backend (``ai_api: {provider: …}``) talks to them directly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pytest_ooda.agents import all_agents

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ooda"
CATCH_ALL = "command"


def _names() -> set[str]:
    names: set[str] = set()
    for agent in all_agents():
        if agent.name == CATCH_ALL:
            continue
        names.update({agent.name, *agent.programs, *(fmt.name for fmt in agent.formats)})
        names.update(word for word in (agent.alias, agent.display) if word)
    return {name.lower() for name in names if name.lower() != "text"}


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of every docstring's constant node."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.asname or node.name]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def offences(source: str, names: set[str], where: str) -> list[str]:
    """``file:line: what`` for each agent name in ``source``'s code."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    words = [(name, re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.I)) for name in names]
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            found += [
                f"{where}:{line}: string {node.value[:60]!r} names {name}"
                for name, pattern in words
                if pattern.search(node.value)
            ]
        for identifier in _identifiers(node):
            lowered = identifier.lower().replace("_", "-")
            found += [
                f"{where}:{line}: identifier {identifier} names {name}"
                for name in names
                if " " not in name and name in lowered
            ]
    return found


def test_no_module_outside_agents_names_an_agent() -> None:
    names = _names()
    assert {"claude", "codex", "claude-stream-json"} <= names
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "agents":
            continue
        found += offences(path.read_text(encoding="utf-8"), names, str(relative))
    assert found == []


def test_the_check_sees_each_way_of_naming_one() -> None:
    names = {"claude", "claude-json", "claude code"}
    source = '''
"""A docstring may say claude."""
import os  # a comment may say claude too

def f(argv):
    """And so may this one: Claude Code."""
    if os.path.basename(argv[0]) == "claude":
        return "claude-json"
    label = f"{argv[0]} is Claude Code"
    _CLAUDE_RULE = 1
    return label, "claudette", "my-agent"
'''
    found = offences(source, names, "m.py")
    assert sorted(found) == [
        "m.py:10: identifier _CLAUDE_RULE names claude",
        "m.py:7: string 'claude' names claude",
        "m.py:8: string 'claude-json' names claude",
        "m.py:8: string 'claude-json' names claude-json",
        "m.py:9: string ' is Claude Code' names claude",
        "m.py:9: string ' is Claude Code' names claude code",
    ]

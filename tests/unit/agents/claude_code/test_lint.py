from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents.claude_code.lint import content_words, lint_material, overlap
from pytest_ooda.agents.claude_code.material import load_material

from .helpers import front, tree

if TYPE_CHECKING:
    from pathlib import Path

GOOD = "Writes GREETING.md for a named person. Use when the user asks to greet someone."


def _found(root: Path) -> list[tuple[str, str]]:
    return [(problem.rule, problem.message) for problem in lint_material(load_material(root))]


def test_a_good_skill_has_no_finding(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {".claude/skills/greet/SKILL.md": front("Write the greeting.\n", description=GOOD)},
    )
    assert _found(tmp_path) == []


def test_too_long(tmp_path: Path) -> None:
    text = GOOD + " More." * 200
    tree(tmp_path, {".claude/skills/long/SKILL.md": front("x\n", description=text)})
    ((rule, message),) = _found(tmp_path)
    assert rule == "OODA303"
    assert f"its description is {len(text)} characters, over the 1024" in message


def test_too_vague_says_why(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/a/SKILL.md": front("x\n", description="Helps with stuff"),
            ".claude/skills/b/SKILL.md": front(
                "x\n", description="Generate implementation tasks from requirements and design"
            ),
            ".claude/commands/c.md": front("x\n", description="Show"),
        },
    )
    found = dict(_found(tmp_path))
    assert set(found) == {"OODA304"}
    messages = [message for rule, message in _found(tmp_path)]
    assert messages == [
        "skill a: its description is too vague to be chosen by: it has 2 content word(s) and "
        "it never says when to use it ('Helps with stuff')",
        "skill b: its description is too vague to be chosen by: it never says when to use it "
        "('Generate implementation tasks from requirements and design')",
    ]


def test_overlap_is_the_jaccard_similarity_of_content_words() -> None:
    assert content_words("Use when reviewing the tests") == frozenset({"review", "test"})
    score, count, shared = overlap(
        "Initialize a new specification with detailed project description",
        "Initialize a new specification with detailed project description",
    )
    assert (score, count) == (1.0, 6)
    assert shared[0] == "initialize"
    score, count, _ = overlap("Review Python code for bugs", "Review Go code for style")
    assert count == 2
    assert round(score, 2) == round(2 / 5, 2)
    assert overlap("", "x") == (0.0, 0, ())


def test_overlapping_items_of_one_listing_collide(tmp_path: Path) -> None:
    text = "Initialize a new specification with detailed project description"
    tree(
        tmp_path,
        {
            ".claude/commands/kiro/spec-init.md": front("x\n", description=text),
            ".claude/skills/kiro-spec-init/SKILL.md": front(
                "x\n", description=text + ". Use when starting."
            ),
            ".claude/agents/init.md": front(
                "x\n", name="init", description=text + ". Use when asked."
            ),
        },
    )
    collisions = [message for rule, message in _found(tmp_path) if rule == "OODA305"]
    # The subagent is in the other listing: it collides with neither.
    assert len(collisions) == 1
    assert collisions[0].startswith(
        "skill kiro-spec-init: its description overlaps command /kiro:spec-init's (86% of"
    )


def test_a_hidden_item_neither_collides_nor_is_vague(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/skills/a/SKILL.md": front(
                "x\n", description="Show", disable_model_invocation="true"
            ),
            ".claude/skills/b/SKILL.md": front(
                "x\n", description="Show", disable_model_invocation="true"
            ),
        },
    )
    assert _found(tmp_path) == []


def test_allowed_tools_never_needed(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            ".claude/commands/c.md": front(
                "Summarise the diff: !`git diff`. Then Glob for docs.\nSee @README.md\n",
                description="Summarise",
                allowed_tools="Bash(git diff:*), Read, Write, Glob, WebFetch, mcp__gh__pr",
            ),
        },
    )
    found = _found(tmp_path)
    assert found == [
        (
            "OODA404",
            "command /c: allowed-tools: Write is never needed: its text neither names Write "
            "nor says to do what it does",
        ),
        (
            "OODA404",
            "command /c: allowed-tools: WebFetch is never needed: its text neither names "
            "WebFetch nor says to do what it does",
        ),
    ]

from __future__ import annotations

from pathlib import Path

from pytest_ooda.agents.claude_code.frontmatter import split_front_matter

FILE = Path("x.md")


def test_a_file_without_front_matter_is_all_body() -> None:
    front = split_front_matter("# Title\nbody\n", FILE)
    assert not front.present
    assert front.body == "# Title\nbody\n"
    assert front.body_line == 1
    assert dict(front.values) == {}


def test_values_keep_the_file_s_own_lines_and_columns() -> None:
    front = split_front_matter("---\nname: greet\ndescription:   Says hi\n---\nBody\n", FILE)
    assert front.present
    assert not front.problems
    assert dict(front.values) == {"name": "greet", "description": "Says hi"}
    assert front.mark("description").line == 3
    assert front.mark("description").column == 16
    assert front.key_mark("name").line == 2
    assert front.body == "Body\n"
    assert front.body_line == 5


def test_an_unclosed_block_is_an_error_and_the_file_is_body() -> None:
    front = split_front_matter("---\nname: x\nbody without end\n", FILE)
    assert front.body.startswith("---")
    (problem,) = front.problems
    assert problem.is_error
    assert (problem.line, problem.column) == (1, 1)
    assert "never closed" in problem.message


def test_broken_yaml_is_located_and_read_line_by_line_as_claude_code_does() -> None:
    text = "---\ndescription: Validate it\nargument-hint: [feature] [task]\n---\nBody\n"
    front = split_front_matter(text, FILE)
    (problem,) = front.problems
    assert problem.is_error
    assert problem.line == 3
    assert "not YAML" in problem.message
    # What Claude Code lists it by: the lines' text.
    assert front.values["description"] == "Validate it"
    assert front.values["argument-hint"] == "[feature] [task]"
    assert front.mark("argument-hint").line == 3


def test_a_block_that_is_not_a_mapping_is_an_error() -> None:
    front = split_front_matter("---\n- a\n- b\n---\nBody\n", FILE)
    (problem,) = front.problems
    assert "expected a mapping" in problem.message
    assert "a list" in problem.message
    assert front.body == "Body\n"


def test_an_empty_block_is_no_values() -> None:
    front = split_front_matter("---\n---\nBody", FILE)
    assert front.present
    assert not front.problems
    assert dict(front.values) == {}
    assert front.body == "Body"

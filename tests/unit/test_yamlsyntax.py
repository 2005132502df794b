"""``yamlsyntax``: which line of an indentation slip is out of step, in the words a
person uses, whichever line PyYAML stopped at."""

from __future__ import annotations

import pytest

from pytest_ooda.errors import ConfigError
from pytest_ooda.yamlload import load_yaml_text

DEEPER_THAN_A_VALUE = """\
procedures:
  other:
    display: Other
     observe:
      - content: x
"""

BETWEEN_LEVELS = """\
procedures:
  other:
    observe:
      - content: x
   act:
      - content: y
"""

FIRST_CHILD_TOO_DEEP = """\
procedures:
  greet:
    act: []
  other:
      display: O
    act: []
"""


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            DEEPER_THAN_A_VALUE,
            (4, 6),
            "inconsistent indentation: line 4 is indented 5 spaces, deeper than line 3 "
            "above it (4 spaces), whose value is complete: nothing can be nested under it",
        ),
        (
            BETWEEN_LEVELS,
            (5, 4),
            "inconsistent indentation: line 5 is indented 3 spaces, which matches no block "
            "above it (line 3 is indented 4 spaces, line 2 2)",
        ),
        (
            FIRST_CHILD_TOO_DEEP,
            (5, 7),
            "inconsistent indentation: line 5 is indented 6 spaces under line 4 (2), where "
            "this file indents by 2; line 6 below it, at 4, is indented as expected",
        ),
    ],
    ids=["deeper-than-a-value", "between-levels", "first-child-too-deep"],
)
def test_an_indentation_slip_is_named_at_its_line(
    text: str, where: tuple[int, int], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, file="c.yml")
    assert (info.value.line, info.value.column) == where
    assert info.value.message == f"invalid YAML: {message}"
    assert info.value.hint is not None
    assert "nothing in the file loaded until it is fixed" in info.value.hint


def test_other_syntax_errors_keep_the_parsers_words() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text("a: 'open\n", file="c.yml")
    assert info.value.message.startswith("invalid YAML: while scanning a quoted scalar")

"""Static analysis of templates from their parse trees (gotemplate.analysis)."""

from __future__ import annotations

import pytest

from pytest_ooda.gotemplate import (
    NO_VALUE,
    Branch,
    branches,
    first_use_line,
    no_value_reads,
    referenced_params,
    render,
    statement_lines,
    uses_whole_dot,
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('{{.a}} {{$.b}} {{index . "c"}}', {"a", "b", "c"}),
        ('{{printf "%s" ".notaparam"}} {{.real}}', {"real"}),  # a string, not a field
        ("{{/* .commented */}}{{.x}}", {"x"}),
        ("{{range .items}}{{.inner}}{{end}}", {"items"}),  # dot moved by range
        ("{{with .}}{{.kept}}{{end}}", {"kept"}),  # with of the map keeps it
        ('{{define "t"}}{{.deep}}{{end}}{{template "t" .}}', {"deep"}),
        ('{{define "t"}}{{.unreached}}{{end}}{{template "t" .other}}', {"other"}),
        ("{{if .c}}{{.then}}{{else}}{{.other}}{{end}}", {"c", "then", "other"}),
    ],
)
def test_referenced_params(source: str, expected: set[str]) -> None:
    assert referenced_params(source) == expected


def test_first_use_line_is_the_first_read_not_a_string_mentioning_it() -> None:
    source = '{{printf ".late"}}\nfirst line\n{{if .late}}\n{{.late}}{{end}}\n'
    assert first_use_line(source, "late") == 3
    assert first_use_line(source, "absent") is None


@pytest.mark.parametrize(
    ("source", "whole"),
    [
        ("{{.}}", True),
        ("{{len $}}", True),
        ('{{printf "%v" .}}', True),
        ("{{.a}} {{$.b}}", False),
        ('{{index . "k"}}', False),  # a named key: decidable
        ("{{range .xs}}{{.}}{{end}}", False),  # dot is an element here
        ('{{template "t" .}}{{define "t"}}{{.x}}{{end}}', False),  # followed into "t"
        ('{{template "t" .}}{{define "t"}}{{.}}{{end}}', True),
        ('{{printf "{{.}}"}}', False),  # braces inside a string are text
    ],
)
def test_uses_whole_dot(source: str, whole: bool) -> None:
    assert uses_whole_dot(source) is whole


def test_branches_number_else_if_arms_from_the_first_if() -> None:
    source = "{{if .a}}A\n{{else if .b}}B\n{{else if .c}}C\n{{end}}\n{{range .xs}}x{{end}}"
    assert branches(source) == (
        Branch(1, "if", "then"),
        Branch(1, "if", "else-if-1"),
        Branch(1, "if", "else-if-2"),
        Branch(1, "if", "else"),
        Branch(5, "range", "body"),
        Branch(5, "range", "empty"),
    )


def test_deeply_chained_templates_do_not_exhaust_the_stack() -> None:
    # The analysis walks with an explicit stack, not recursion.
    depth = 3000
    source = "".join(
        f'{{{{define "t{i}"}}}}{{{{template "t{i + 1}" .}}}}{{{{end}}}}' for i in range(depth)
    )
    source += f'{{{{define "t{depth}"}}}}{{{{.leaf}}}}{{{{end}}}}{{{{template "t0" .}}}}'
    assert referenced_params(source) == {"leaf"}


def test_statement_lines_follow_the_parse_tree() -> None:
    source = "Title\n{{if .x}}\n  {{.x}}\n{{end}}\n\n{{- /* trimmed */ -}}\ntail {{.y}}\n"
    assert statement_lines(source) == {1, 3, 7}


@pytest.mark.parametrize(
    ("source", "params", "expected"),
    [
        # A printed misspelling is blamed at its first read (line, column).
        ("Read {{.kind}}.\nAlso {{.pathz}}, {{.pathz}}\n", {"kind": "a"}, [("pathz", 2, 8)]),
        # Only tested or ranged over: nothing printed, nothing blamed.
        ("{{if .verbose}}v{{end}}{{range .items}}{{.}}{{end}}", {}, []),
        ('{{$.x}} {{index . "y"}}', {}, [("x", 1, 4), ("y", 1, 17)]),
        # The template's own words are not counted.
        ("Go prints <no value> for {{.a}}.", {"a": 1}, []),
        # A field missing inside a supplied value: no parameter to blame.
        ("{{.cfg.pathz}}", {"cfg": {"paths": 1}}, [(None, 1, 1)]),
    ],
)
def test_no_value_reads(
    source: str, params: dict[str, object], expected: list[tuple[str | None, int, int]]
) -> None:
    found = no_value_reads(source, params)
    assert [(read.name, read.line, read.column) for read in found] == expected
    assert (NO_VALUE in render(source, params).replace(NO_VALUE, "", source.count(NO_VALUE))) == (
        bool(expected)
    )

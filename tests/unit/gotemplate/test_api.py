"""Unit tests for the public API of pytest_ooda.gotemplate (byte-level Go conformance is
checked against the oracle goldens in tests/conformance)."""

from __future__ import annotations

import pytest

from pytest_ooda.errors import OodaError, TemplateError
from pytest_ooda.gotemplate import (
    Branch,
    RenderTrace,
    branches,
    check,
    referenced_params,
    render,
)


def test_render_substitutes_parameters() -> None:
    assert render("Hello {{.name}}!", {"name": "World"}) == "Hello World!"


def test_missing_key_prints_no_value() -> None:
    assert render("[{{.nope}}]", {}) == "[<no value>]"


def test_text_without_actions_is_verbatim_including_crlf_and_jinja_syntax() -> None:
    src = "a\r\n{% raw %}{# x #} {{- .x -}} }}{"
    assert render(src, {"x": 1}) == "a\r\n{% raw %}{# x #}1}}{"


def test_parse_error_is_template_error_with_kind_and_line() -> None:
    with pytest.raises(TemplateError) as info:
        render("line1\n{{if .x}}\nunterminated", {})
    err = info.value
    assert isinstance(err, OodaError)
    assert err.kind == "parse"
    assert err.template_line == 3
    assert err.message == "template: fragment:3: unexpected EOF"


def test_exec_error_names_node_like_go() -> None:
    with pytest.raises(TemplateError) as info:
        render("ok\n  {{index .l 3}}", {"l": [1, 2]})
    err = info.value
    assert err.kind == "exec"
    assert err.template_line == 2
    assert err.message == (
        'template: fragment:2:4: executing "fragment" at <index .l 3>: '
        "error calling index: index out of range: 3"
    )


def test_name_keyword_changes_messages() -> None:
    with pytest.raises(TemplateError, match=r"^template: other:1: unexpected EOF"):
        render("{{if 1}}", {}, name="other")


def test_python_internals_are_unreachable() -> None:
    for src in ("{{.x.__class__}}", "{{.x.__class__.__mro__}}", "{{.x.upper}}"):
        with pytest.raises(TemplateError) as info:
            render(src, {"x": "s"})
        assert info.value.kind == "exec"
        assert "can't evaluate field" in info.value.message
    # a key that merely looks like a dunder is an ordinary map key
    assert render("{{.__globals__}}", {}) == "<no value>"
    with pytest.raises(TemplateError, match='function "cycler" not defined'):
        check("{{cycler}}")


def test_check_accepts_valid_and_rejects_invalid() -> None:
    check("{{range .x}}{{.}}{{end}}")
    with pytest.raises(TemplateError) as info:
        check("{{nofunc .x}}")
    assert info.value.kind == "parse"
    assert info.value.message == 'template: fragment:1: function "nofunc" not defined'


def test_referenced_params_top_level_only() -> None:
    src = (
        "{{.a}} {{.b.c}} {{range .items}}{{.inner}}{{$.d}}{{end}}"
        '{{with .e}}{{.f}}{{end}}{{index . "g"}}{{if .h}}{{.i}}{{end}}'
        '{{define "t"}}{{.j}}{{end}}{{template "t" .}}'
    )
    assert referenced_params(src) == frozenset("abdeghij".replace(" ", "")) | {"items"}


def test_branches_lists_every_arm() -> None:
    src = "{{if .a}}A{{else if .b}}B{{end}}\n{{range .l}}x{{end}}\n{{with .w}}w{{else}}n{{end}}"
    assert branches(src) == (
        Branch(1, "if", "then"),
        Branch(1, "if", "else-if-1"),
        Branch(1, "if", "else"),
        Branch(2, "range", "body"),
        Branch(2, "range", "empty"),
        Branch(3, "with", "then"),
        Branch(3, "with", "else"),
    )


def test_trace_records_output_lines_and_taken_arms() -> None:
    src = "head\n{{if .a}}\nyes\n{{else}}\nno\n{{end}}\n{{range .l}}{{.}}{{end}}\n{{.empty}}"
    trace = RenderTrace()
    out = render(src, {"a": True, "l": [], "empty": ""}, trace=trace)
    assert out == "head\n\nyes\n\n\n"
    assert trace.lines == {1, 3}
    assert trace.taken == {Branch(2, "if", "then"), Branch(7, "range", "empty")}
    # the traced and untraced compilations agree on output
    assert render(src, {"a": True, "l": [], "empty": ""}) == out


def test_trace_inside_defined_template_and_loop() -> None:
    src = '{{define "t"}}\nT{{.}}\n{{end}}{{range .l}}{{template "t" .}}{{end}}'
    trace = RenderTrace()
    assert render(src, {"l": [1, 2]}, trace=trace) == "\nT1\n\nT2\n"
    assert trace.lines == {2}
    assert trace.taken == {Branch(3, "range", "body")}


def test_outer_variable_assignment_inside_range() -> None:
    src = "{{$n := 0}}{{range .l}}{{$n = .}}{{end}}{{$n}}"
    assert render(src, {"l": [3, 4]}) == "4"


def test_break_on_first_iteration_does_not_run_else() -> None:
    assert render("{{range .l}}{{break}}{{else}}E{{end}}", {"l": [1]}) == ""
    assert render("{{range .l}}{{continue}}{{else}}E{{end}}", {"l": [1]}) == ""


def test_break_in_range_else_ends_only_that_range() -> None:
    src = "{{range .a}}[{{range $.b}}b{{else}}e{{break}}x{{end}}]{{end}}"
    assert render(src, {"a": [1, 2], "b": []}) == "[e][e]"
    src = "{{range .a}}[{{range $.b}}b{{else}}e{{continue}}x{{end}}]{{end}}"
    assert render(src, {"a": [1, 2], "b": []}) == "[e[e"


def test_params_from_mapping_types_and_dates() -> None:
    import datetime
    from types import MappingProxyType

    params = MappingProxyType(
        {"m": MappingProxyType({"k": (1, 2)}), "d": datetime.date(2024, 1, 2)}
    )
    assert render("{{.m.k}} {{.d}}", params) == "[1 2] 2024-01-02 00:00:00 +0000 UTC"


def test_repeated_render_uses_cache() -> None:
    from pytest_ooda.gotemplate import engine

    src = "cache-probe {{.x}}"
    render(src, {"x": 1})
    before = len(engine._cache)
    for i in range(5):
        assert render(src, {"x": i}) == f"cache-probe {i}"
    assert len(engine._cache) == before


def test_yamlv3_loader_types_scalars_like_go() -> None:
    from pytest_ooda.gotemplate.gofmt import GoTime
    from pytest_ooda.gotemplate.yamlv3 import load_params

    doc = load_params(
        "a: yes\nb: on\nc: 1e3\nd: 0o17\ne: 0x1F\nf: 1_000\ng: True\nh: ~\n"
        "i: 12345678901234567890123\nj: '1e3'\nk: 2024-01-02\nl: .5\nm: 0b101\n"
        "base: &b {x: 1}\nn:\n  <<: *b\n"
    )
    assert doc["a"] == "yes"
    assert doc["b"] == "on"
    assert doc["c"] == 1000.0
    assert type(doc["c"]) is float
    assert (doc["d"], doc["e"], doc["f"], doc["m"]) == (15, 31, 1000, 5)
    assert doc["g"] is True
    assert doc["h"] is None
    assert doc["i"] == 1.2345678901234568e22
    assert doc["j"] == "1e3"
    assert isinstance(doc["k"], GoTime)
    assert str(doc["k"]) == "2024-01-02 00:00:00 +0000 UTC"
    assert doc["l"] == 0.5
    assert doc["n"] == {"x": 1}
    assert render("{{.k}} {{.a}} {{.c}}", doc) == "2024-01-02 00:00:00 +0000 UTC yes 1000"


def test_infinite_template_recursion_reports_go_depth_error() -> None:
    src = '{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}'
    with pytest.raises(TemplateError) as info:
        render(src, {})
    assert info.value.kind == "exec"
    assert info.value.message == (
        'template: fragment:1:25: executing "r" at <{{template "r" .}}>: '
        "exceeded maximum template depth (100000)"
    )


def test_finite_recursion_through_nested_params() -> None:
    src = '{{define "r"}}{{.n}}{{with .child}},{{template "r" .}}{{end}}{{end}}{{template "r" .}}'
    params: dict[str, object] = {"n": 0}
    cur = params
    for i in range(1, 60):
        child: dict[str, object] = {"n": i}
        cur["child"] = child
        cur = child
    assert render(src, params) == ",".join(str(i) for i in range(60))


def test_nesting_beyond_python_limits_is_a_template_error() -> None:
    deep = "{{if 1}}" * 150 + "x" + "{{end}}" * 150
    with pytest.raises(TemplateError, match="nested too deeply") as info:
        render(deep, {})
    assert info.value.kind == "parse"
    assert render("{{if 1}}" * 60 + "x" + "{{end}}" * 60, {}) == "x"


def test_jinja_syntax_in_go_strings_and_text_is_literal() -> None:
    src = '{{"}} {{ x }} {% if %} {# #}"}}|{{`}}`}}|{{printf "%s}}" "{%"}}'
    assert render(src, {}) == "}} {{ x }} {% if %} {# #}|}}|{%}}"
    assert render("a{{/* }} {% */}}b{{.x}}{", {"x": "{{"}) == "ab{{{"


def test_trace_arms_of_else_if_chain_and_with() -> None:
    src = "{{if .a}}A{{else if .b}}B{{else if .c}}C{{end}}\n{{with .w}}{{.}}{{else}}none{{end}}"
    cases = [
        ({"a": 1}, Branch(1, "if", "then"), Branch(2, "with", "else")),
        ({"b": 1, "w": "x"}, Branch(1, "if", "else-if-1"), Branch(2, "with", "then")),
        ({"c": 1}, Branch(1, "if", "else-if-2"), Branch(2, "with", "else")),
        ({}, Branch(1, "if", "else"), Branch(2, "with", "else")),
    ]
    static = set(branches(src))
    for params, if_arm, with_arm in cases:
        trace = RenderTrace()
        render(src, params, trace=trace)
        assert trace.taken == {if_arm, with_arm}
        assert trace.taken <= static


def test_trace_and_branches_cover_defined_templates() -> None:
    src = '{{define "t"}}{{if .}}\nyes{{end}}{{end}}{{template "t" .x}}{{template "t" .y}}'
    trace = RenderTrace()
    assert render(src, {"x": 1, "y": 0}, trace=trace) == "\nyes"
    assert trace.taken == {Branch(1, "if", "then"), Branch(1, "if", "else")}
    assert set(branches(src)) == trace.taken
    assert trace.lines == {2}


def test_none_params_behave_like_an_empty_map() -> None:
    assert render("{{.x}}", None) == "<no value>"  # type: ignore[arg-type]

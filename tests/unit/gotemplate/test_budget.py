"""Template budgets: runaway renders stop with a located TemplateError, quickly and
without building huge strings; ordinary fragments are unaffected."""

from __future__ import annotations

import pytest

from pytest_ooda.errors import TemplateError
from pytest_ooda.gotemplate import Limits, check, default_limits, render
from pytest_ooda.gotemplate.budget import reset_default_limits


def _exec_error(source: str, params: dict[str, object], limits: Limits | None = None) -> str:
    with pytest.raises(TemplateError) as info:
        render(source, params, limits=limits)
    assert info.value.kind == "exec"
    return str(info.value)


def test_a_template_calling_itself_twice_per_level_stops_on_steps() -> None:
    levels = "".join(
        f'{{{{define "l{i}"}}}}{{{{template "l{i + 1}" .}}}}{{{{template "l{i + 1}" .}}}}'
        "{{end}}"
        for i in range(40)
    )
    source = levels + '{{define "l40"}}x{{end}}{{template "l0" .}}'
    message = _exec_error(source, {})
    assert "more than 1000000 steps" in message
    assert message.startswith("template: fragment:1:")


def test_nested_ranges_stop_on_steps_at_the_range() -> None:
    source = "a\n{{range .xs}}{{range $.xs}}{{range $.xs}}{{end}}{{end}}{{end}}"
    message = _exec_error(source, {"xs": list(range(200))})
    assert message.startswith("template: fragment:2:")
    assert "steps" in message


def test_huge_printf_widths_fail_before_the_string_is_built() -> None:
    source = '{{printf "%1000000d%1000000d" 1 2}}'
    assert len(render('{{printf "%1000d" 1}}', {})) == 1000
    # two widths of a million: the second passes a 1.5 MB limit before it is built
    reset_default_limits()
    message = _exec_error(source, {})
    assert "printf padding is larger than 1048576 bytes" in message
    many = '{{printf "' + "%1000000d" * 2000 + '"' + " 1" * 2000 + "}}"
    assert "printf padding is larger than" in _exec_error(many, {})


def test_output_past_the_limit_is_an_error() -> None:
    message = _exec_error("{{range .xs}}{{$.big}}{{end}}", {"xs": [1] * 50, "big": "y" * 100_000})
    assert "output is larger than 1048576 bytes" in message


def test_call_depth_has_a_limit_with_gos_message() -> None:
    source = '{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}'
    message = _exec_error(source, {}, Limits(max_depth=30))
    assert message.endswith("exceeded maximum template depth (100000)")
    # just inside the limit, a finite recursion renders
    chain = "".join(
        f'{{{{define "c{i}"}}}}{{{{template "c{i + 1}" .}}}}{{{{end}}}}' for i in range(25)
    )
    assert render(chain + '{{define "c25"}}ok{{end}}{{template "c0" .}}', {}) == "ok"


def test_limits_can_be_raised_and_lowered() -> None:
    source = "{{range .xs}}.{{end}}"
    params = {"xs": list(range(100))}
    assert render(source, params, limits=Limits(max_steps=1000)) == "." * 100
    assert "steps" in _exec_error(source, params, Limits(max_steps=50))
    assert "output" in _exec_error(source, params, Limits(max_output=10))


def test_environment_variables_set_the_process_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OODA_TEMPLATE_MAX_STEPS", "10")
    reset_default_limits()
    try:
        assert default_limits().max_steps == 10
        assert "more than 10 steps" in _exec_error("{{range .xs}}{{end}}", {"xs": [0] * 11})
    finally:
        monkeypatch.delenv("OODA_TEMPLATE_MAX_STEPS")
        reset_default_limits()
    assert default_limits() == Limits()


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_bad_limit_in_the_environment_is_a_config_error(value: str) -> None:
    from pytest_ooda.errors import ConfigError

    with pytest.raises(ConfigError, match="OODA_TEMPLATE_MAX_OUTPUT: expected an integer >= 1"):
        default_limits({"OODA_TEMPLATE_MAX_OUTPUT": value})


def test_ten_thousand_defines_render() -> None:
    # Compilation is linear in the number of templates (benchmarks/bench_gotemplate.py
    # measures 1,000 against 10,000); here: the large set works and calls the last one.
    n = 10_000
    source = "".join(f'{{{{define "t{i}"}}}}{i}{{{{end}}}}' for i in range(n))
    assert render(source + f'{{{{template "t{n - 1}" .}}}}', {}) == str(n - 1)


@pytest.mark.parametrize(
    "source",
    ["{{if 1}}" * 5000 + "x", "(" * 20000, "{{" + "(" * 20000 + "1" + ")" * 20000 + "}}"],
    ids=["nested-ifs", "parens-in-text", "nested-parens"],
)
def test_deep_nesting_is_a_clean_error_or_fine(source: str) -> None:
    # Only a TemplateError may come out (no RecursionError, no crash).
    errors: list[TemplateError] = []
    for step in (check, lambda text: render(text, {})):
        try:
            step(source)
        except TemplateError as error:
            errors.append(error)
    assert {error.kind for error in errors} <= {"parse", "exec"}

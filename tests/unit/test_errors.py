from __future__ import annotations

from pytest_ooda.errors import ConfigError, OodaError, TemplateError


def test_location_prefix_and_hint() -> None:
    err = ConfigError(
        "unknown key 'obsrve'",
        file="ooda-config.yml",
        line=4,
        column=5,
        hint="did you mean 'observe'?",
    )
    assert str(err) == "ooda-config.yml:4:5: unknown key 'obsrve'\n  did you mean 'observe'?"
    assert isinstance(err, OodaError)


def test_partial_location() -> None:
    assert str(OodaError("boom", file="x.yml")) == "x.yml: boom"
    assert str(OodaError("boom")) == "boom"


def test_template_error_kind() -> None:
    err = TemplateError("template: fragment:3: unexpected EOF", kind="parse", template_line=3)
    assert (err.kind, err.template_line) == ("parse", 3)


def test_relocated_copies_errors_with_required_keywords() -> None:
    from pytest_ooda.errors import TemplateError

    error = TemplateError("bad", kind="parse", template_line=3, file="a.yml", line=1, column=2)
    moved = error.relocated(line=5)
    assert (moved.kind, moved.template_line, moved.line, moved.column) == ("parse", 3, 5, 2)
    assert str(moved) == "a.yml:5:2: bad"
    assert error.line == 1
    assert error.relocated() is not error

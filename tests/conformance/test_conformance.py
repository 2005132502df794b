"""Our engine against the Go 1.19 oracle's recorded results (goldens.json); no Go needed.

Regenerate the goldens with ``python tools/gotemplate-oracle/regen.py``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.errors import TemplateError
from pytest_ooda.gotemplate import RenderTrace, render
from pytest_ooda.gotemplate.yamlv3 import load_params

GOLDENS: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("goldens.json")).read_text(encoding="utf-8")
)


def outcome(template: str, params_yaml: str) -> tuple[str, str]:
    """(kind, output-or-error) for our engine, in the golden's vocabulary."""
    params = load_params(params_yaml) or {}
    try:
        out = render(template, params)
    except TemplateError as err:
        return err.kind, err.message
    return "ok", out


def expected(case: dict[str, Any]) -> tuple[str, str]:
    if case["kind"] != "ok":
        return case["kind"], case["error"]
    if "output_b64" in case:
        return "ok", base64.b64decode(case["output_b64"]).decode("utf-8", "surrogateescape")
    return "ok", case["output"]


def test_corpus_is_large_and_covers_every_outcome() -> None:
    assert len(GOLDENS) >= 600
    kinds = {c["kind"] for c in GOLDENS}
    assert kinds == {"ok", "parse", "exec"}


@pytest.mark.parametrize("case", GOLDENS, ids=[c["id"] for c in GOLDENS])
def test_matches_go(case: dict[str, Any]) -> None:
    assert outcome(case["template"], case["params"]) == expected(case)


def test_traced_rendering_matches_go_too() -> None:
    """The coverage variant of every compiled template renders the same bytes."""
    mismatches = []
    for case in GOLDENS:
        params = load_params(case["params"]) or {}
        trace = RenderTrace()
        try:
            got = ("ok", render(case["template"], params, trace=trace))
        except TemplateError as err:
            got = (err.kind, err.message)
        if got != expected(case):
            mismatches.append(case["id"])
    assert mismatches == []

"""The comparison pages: two sides with rates, intervals, p-values, the detectable
difference, the prompt diff by fragment and links to the runs; variants ranked."""

from __future__ import annotations

from dataclasses import replace

from sample_records import changed, sample

from pytest_ooda.report import render_compare_html, render_variants_html
from pytest_ooda.report.compare_pages import prompt_diff
from pytest_ooda.stats import compare, compare_variants


def _prompt(*segments: tuple[str, str]) -> dict[str, object]:
    return {"prompt": [{"source": s, "text": t} for s, t in segments], "iterations": []}


def test_the_prompt_diff_goes_fragment_by_fragment() -> None:
    base = replace(
        sample(1, 1)[0],
        transcript=_prompt(("a.md", "Look.\n"), ("b.md", "Plan.\n"), ("inline", "Act.\n")),
    )
    new = replace(
        base,
        transcript=_prompt(("a.md", "Look around.\n"), ("inline", "Act.\n"), ("c.md", "Hi.\n")),
    )
    found = {item["source"]: item for item in prompt_diff(base, new)}
    assert [(item["source"], item["status"]) for item in prompt_diff(base, new)] == [
        ("a.md", "changed"),
        ("b.md", "removed"),
        ("c.md", "added"),
    ]
    assert ("del", "-Look.") in found["a.md"]["lines"]
    assert ("add", "+Look around.") in found["a.md"]["lines"]
    assert prompt_diff(base, base) == []
    assert prompt_diff(None, None) == []


def test_a_static_comparison_links_every_run_on_both_sides() -> None:
    base = [replace(item, transcript=_prompt(("a.md", "Old.\n"))) for item in sample(9, 10)]
    new = [
        replace(item, transcript=_prompt(("a.md", "New.\n")))
        for item in sample(2, 10, fragment="b" * 64)
    ]
    comparison = compare(base, new, detect=0.3)
    html = render_compare_html(comparison, title="A/B")
    assert '<tr data-scenario="build/happy" data-verdict="regressed">' in html
    assert "9/10 90%" in html
    assert "2/10 20%" in html
    assert '<td class="num p-value">0.0055</td>' in html
    assert '<th class="num">runs needed</th>' in html
    assert '<span class="add">+New.</span>' in html
    # Each side's runs, linked from their chips to their rows below.
    assert 'href="#base-build/happy/3"' in html
    assert 'id="base-build/happy/3"' in html
    assert 'id="new-build/happy/10"' in html
    assert "<script" not in html


def test_the_variants_page_ranks_tests_and_links_runs() -> None:
    runs = [
        *[changed(item, variant="good") for item in sample(10, 10)],
        *[changed(item, id=f"bad-{item.head.run}", variant="bad") for item in sample(1, 10)],
    ]
    html = render_variants_html(compare_variants(runs), runs, title="variants")
    ranking = html.split('<table class="ranking">')[1].split("</table>")[0]
    assert ranking.index('data-variant="good"') < ranking.index('data-variant="bad"')
    assert '<tr data-scenario="build/happy" data-winner="good">' in html
    assert 'href="#run-build/happy@bad/2"' in html
    assert 'id="run-build/happy@bad/2"' in html

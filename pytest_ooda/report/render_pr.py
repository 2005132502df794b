"""One pull-request comment (``ooda report --pr BASE NEW``): per scenario the change
touched, the verdict with the interval of the difference and the smallest change the
runs could detect, the cost and token deltas, the prompt diff by fragment (folded),
what the scenario's history says of it (and of this change's runs: broke, or within
its noise), and a link to the HTML report. A scenario whose
two sides were not made by the same agent (their fingerprints differ) or whose positive
control failed says so: its verdict measures that too, or nothing.

The comment starts with :data:`MARKER`, a hidden HTML comment: the action that posts it
finds its own comment by it and edits it on the next push instead of adding another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.report.compare_pages import _first_with_prompt, prompt_diff
from pytest_ooda.report.render_markdown import _cell
from pytest_ooda.report.render_text import money, pct
from pytest_ooda.stats import difference_interval

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import Comparison, ScenarioComparison, ScenarioHistory, ScenarioStats

__all__ = ["MARKER", "pr_markdown"]

#: How the action finds the comment it wrote before (GitHub shows nothing of it).
MARKER = "<!-- pytest-ooda:pr-comment -->"

_ICONS = {
    "regressed": ":x:",
    "improved": ":white_check_mark:",
    "inconclusive": ":grey_question:",
    "base-only": ":heavy_minus_sign:",
    "new-only": ":new:",
}
#: Lines of one fragment's diff a comment shows before it says how many it left out.
DIFF_LINES = 60


def _same(record: RunRecord) -> RunRecord:
    return record


def _verdict(item: ScenarioComparison, budget: Mapping[str, str]) -> str:
    word = item.verdict_text
    if item.verdict == "inconclusive" and item.label in budget:
        word = "inconclusive: budget spent"
    return f"{_ICONS.get(item.verdict, '')} {word}".strip()


def _change(item: ScenarioComparison, confidence: float) -> str:
    """``-40 pp (-62 … -10)``: the difference and its Newcombe interval."""
    base, new = item.base, item.new
    if base is None or new is None or not base.valid_runs or not new.valid_runs:
        return "-"
    low, high = difference_interval(
        base.successes, base.valid_runs, new.successes, new.valid_runs, confidence
    )
    change = new.rate - base.rate
    return f"{change * 100:+.0f} pp ({low * 100:+.0f} … {high * 100:+.0f})"


def _side(stats: ScenarioStats | None) -> str:
    if stats is None:
        return "-"
    return f"{stats.successes}/{stats.valid_runs} {pct(stats.rate if stats.valid_runs else None)}"


def _delta(before: float | None, after: float | None, money_: bool) -> str:
    if before is None or after is None:
        return "-"
    if money_:
        sign = "+" if after >= before else "-"
        return f"{money(before)} → {money(after)} ({sign}{money(abs(after - before))})"
    return f"{before:,.0f} → {after:,.0f} ({after - before:+,.0f})"


def _row(item: ScenarioComparison, budget: Mapping[str, str], confidence: float) -> list[str]:
    base, new = item.base, item.new
    return [
        item.label,
        _verdict(item, budget),
        _side(base),
        _side(new),
        _change(item, confidence),
        "-" if item.detectable is None else f"{item.detectable * 100:.0f} pp",
        _delta(base.cost_mean if base else None, new.cost_mean if new else None, True),
        _delta(base.tokens_mean if base else None, new.tokens_mean if new else None, False),
    ]


def _table(rows: list[list[str]]) -> list[str]:
    heads = ["scenario", "verdict", "base", "new", "change (95% CI)", "detectable"]
    heads += ["cost/run", "tokens/run"]
    align = ["---", "---", "---:", "---:", "---", "---:", "---", "---"]
    out = ["| " + " | ".join(heads) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return out


def _fence(text: str) -> str:
    """A fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    return "`" * max(3, longest + 1)


def _diff_block(
    item: ScenarioComparison,
    whole_base: Callable[[RunRecord], RunRecord],
    whole_new: Callable[[RunRecord], RunRecord],
) -> list[str]:
    """The prompt diff by fragment, folded in a ``<details>``."""
    base_run = _first_with_prompt(item.base, whole_base)
    new_run = _first_with_prompt(item.new, whole_new)
    diffs = prompt_diff(base_run, new_run)
    if not diffs:
        if item.changed_fragments:
            return [f"Fragments changed: {', '.join(item.changed_fragments)} (no transcript kept)."]
        return []
    sources = ", ".join(diff["source"] for diff in diffs)
    out = [
        "<details>",
        f"<summary>prompt diff: {len(diffs)} fragment(s) ({_cell(sources)})</summary>",
        "",
    ]
    for diff in diffs:
        lines = [line for _, line in diff["lines"]]
        shown = lines[:DIFF_LINES]
        if len(lines) > DIFF_LINES:
            shown.append(f"… {len(lines) - DIFF_LINES} more line(s) in the HTML report")
        text = "\n".join(shown)
        fence = _fence(text)
        out += [f"`{diff['source']}` ({diff['status']})", "", f"{fence}diff", text, fence, ""]
    out += ["</details>", ""]
    return out


def _history_note(item: ScenarioComparison, history: ScenarioHistory, alpha: float) -> str:
    """What the base side's history says of the scenario, then of this change's runs:
    broke (below its rate), within its noise, or better (``ScenarioHistory.judge``)."""
    text = f"history ({len(history.points)} session(s) on the base side): {history.note()}"
    new = item.new
    judged = history.judge(new.successes, new.valid_runs, alpha=alpha) if new else None
    if judged is not None:
        runs = f"{judged.successes}/{judged.valid} ({judged.rate:.0%}) here"
        p_value = f"p {judged.p_value:.3g}"
        if judged.call == "broke":
            below = "and it never failed before" if history.state == "stable-pass" else "below it"
            text += f"; this broke: {runs}, {below} ({p_value})"
        elif judged.call == "better":
            text += f"; better than its history: {runs} ({p_value})"
        elif history.state == "stable-fail":
            text += f"; as before: {runs} ({p_value}), it never passed"
        elif judged.successes < judged.valid:
            text += f"; within its noise: {runs} ({p_value}), a failure at this rate is not news"
    change = history.change_point
    if change is not None:
        before, after = change.rates
        moved = f", {'; '.join(change.differs)}" if change.differs else ""
        text += (
            f"; its rate moved without a prompt change at session "
            f"{history.points[change.index].session} ({before:.0%} → {after:.0%}, p "
            f"{change.p_value:.3g}{moved})"
        )
    return text


def pr_markdown(
    comparison: Comparison,
    *,
    touched: Collection[str] | None = None,
    untouched: Collection[str] = (),
    reasons: Mapping[str, str] | None = None,
    histories: Mapping[str, ScenarioHistory] | None = None,
    budget: Mapping[str, str] | None = None,
    drift: Mapping[str, str] | None = None,
    report_url: str | None = None,
    whole_base: Callable[[RunRecord], RunRecord] = _same,
    whole_new: Callable[[RunRecord], RunRecord] = _same,
    title: str = "pytest-ooda: prompt changes measured",
) -> str:
    """The comment's Markdown. ``touched``: the scenarios the change touched (``None``:
    every scenario compared); ``untouched``: the ones that replayed; ``reasons``: by
    label, why the change touched it; ``histories``: by label, the base side's history;
    ``budget``: by label, why a budget left its runs short; ``drift``: by label, how the
    two sides' agents differ (``stats.fingerprint_drift``)."""
    budget = budget or {}
    reasons = reasons or {}
    drift = drift or {}
    histories = histories or {}
    confidence = 1 - comparison.alpha
    items = [item for item in comparison.scenarios if touched is None or item.label in set(touched)]
    unmeasured = sorted(set(touched or ()) - {item.label for item in items})
    counts = {verdict: sum(item.verdict == verdict for item in items) for verdict in _ICONS}
    head = ", ".join(
        f"**{count} {verdict}**" if verdict == "regressed" else f"{count} {verdict}"
        for verdict, count in counts.items()
        if count or verdict in ("regressed", "improved", "inconclusive")
    )
    lines = [MARKER, f"## {_cell(title)}", ""]
    where = f"{len(items) + len(unmeasured)} scenario(s) touched by this change"
    if untouched:
        where += f" ({len(untouched)} untouched: replayed, not run)"
    test = f"two-sided Fisher's exact test, alpha {comparison.alpha:g}"
    lines.append(
        f"{head} of {where} · {test}" + (f" · [HTML report]({report_url})" if report_url else "")
    )
    lines.append("")
    if not items and not unmeasured:
        lines += ["No scenario's prompt or workspace changed: nothing was run live.", ""]
    elif items:
        lines += _table([_row(item, budget, confidence) for item in items])
        lines.append("")
    if unmeasured:
        names = ", ".join(
            f"{_cell(label)} ({_cell(reasons.get(label, ''))})" for label in unmeasured
        )
        lines += [f"Touched, but no run on either side to compare: {names}.", ""]
    for item in items:
        notes = []
        if reasons.get(item.label):
            notes.append(f"touched: {reasons[item.label]}")
        if item.label in drift:
            notes.append(
                f"not the same agent on both sides ({drift[item.label]}): the difference "
                "measures that too, not the prompt alone"
            )
        if item.harness is not None:
            notes.append(f"inconclusive: {item.harness}")
        elif item.verdict == "inconclusive" and item.detectable is not None:
            notes.append(
                f"these runs could only detect a change of {item.detectable * 100:.0f} pp or more"
            )
        if item.label in budget:
            notes.append(budget[item.label])
        elif item.budget_spent is not None:
            notes.append(item.budget_spent)
        history = histories.get(item.label)
        if history is not None:
            notes.append(_history_note(item, history, comparison.alpha))
        block = _diff_block(item, whole_base, whole_new)
        if not notes and not block:
            continue
        lines += [f"### {_cell(item.label)}", ""]
        lines += [f"- {_cell(note)}" for note in notes]
        lines += ["", *block] if notes else block
    regressed = [item for item in items if item.verdict == "regressed"]
    if regressed:
        names = ", ".join(f"**{_cell(item.label)}**" for item in regressed)
        lines.append(f":x: significant regression: {names}")
    else:
        lines.append(":white_check_mark: no touched scenario regressed significantly")
    return "\n".join(lines).rstrip("\n") + "\n"

"""What fired, in words: each assertion's pass rate with its interval (``skill greet
fired: 7/10 70% (40%–89%)``), a trigger set's recall and precision and what fired
instead, and a variant pair's lift — the lines the terminal table, the Markdown summary
and the HTML pages share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.stats import AssertionStats, PairTest, ScenarioStats, TriggerStats

__all__ = ["assertion_text", "fired_lines", "lift_lines", "lift_text", "trigger_text"]


def _share(part: int, whole: int, interval: tuple[float, float]) -> str:
    low, high = interval
    rate = f"{part / whole:.0%}" if whole else "n/a"
    return f"{part}/{whole} {rate} ({low:.0%}–{high:.0%})"


def assertion_text(item: AssertionStats) -> str:
    """``skill greet fired: 7/10 70% (40%–89%)``."""
    return f"{item.name}: {_share(item.passed, item.runs, item.interval)}"


def trigger_text(item: TriggerStats) -> str:
    """``triggers of skill greet: recall 7/10 70% (40%–89%), precision …; fired
    instead: skill:farewell 2``."""
    should = item.hits + item.misses
    fired = item.hits + item.false_alarms
    parts = [f"recall {_share(item.hits, should, item.recall_interval)}"]
    if fired:
        parts.append(f"precision {_share(item.hits, fired, item.precision_interval)}")
    else:
        parts.append("precision n/a (it never fired)")
    text = f"triggers of {item.target}: " + ", ".join(parts)
    if item.instead:
        text += "; fired instead: " + ", ".join(f"{k} {n}" for k, n in item.instead.items())
    return text


def fired_lines(stats: ScenarioStats) -> list[str]:
    """A line for the trigger set, then one per assertion, each under the scenario."""
    lines = [f"{stats.label}: {trigger_text(stats.triggers)}"] if stats.triggers else []
    lines += [f"{stats.label}: {assertion_text(item)}" for item in stats.assertions]
    return lines


def lift_text(pair: PairTest) -> str:
    """``lift of with over without: +35 pp (95% CI +5 to +60 pp)``."""
    difference, (low, high) = pair.lift
    if difference is None:
        return f"lift of {pair.b} over {pair.a}: n/a"
    return (
        f"lift of {pair.b} over {pair.a}: {difference * 100:+.0f} pp "
        f"(95% CI {low * 100:+.0f} to {high * 100:+.0f} pp)"
    )


def lift_lines(stats: Sequence[ScenarioStats]) -> list[str]:
    """``greet/ada: lift of edited over before: +100 pp (95% CI +40 to +100 pp)`` for
    each pair of variants a scenario ran under (the run without agent material as the
    baseline): what a session comparing two versions of a skill leads with; a pair
    with a side whose positive control failed says so (the lift measures nothing)."""
    records = [record for item in stats for record in item.records if record.head.variant]
    if len({record.head.variant for record in records}) < 2:
        return []
    from pytest_ooda.stats import compare_variants

    return [
        f"{pair.label}: {lift_text(pair)}"
        + (f" — inconclusive: {pair.blind}" if pair.blind else "")
        for pair in compare_variants(records).pairs
    ]

"""A scenario across sessions: flaky told from broken, and the moment a model moved
under an unchanged prompt.

Each session (one results file) is a point of a scenario's history: its date, the
commit it ran at, the agent it ran (its fingerprint where records carry one, else the
model the agent reported, the API model or the command line), the prompt version and
its successes over its valid runs. The scenario's **state** is judged over its
*current regime* — the runs of its latest prompt version since that version's last
change point:

- ``stable-pass``: every valid run succeeded (at least :data:`MIN_HISTORY_RUNS`);
- ``stable-fail``: none did;
- ``flaky``: some did and some did not — a failure is within its noise;
- ``too-few-runs``: fewer valid runs than that.

Its rate and Wilson interval say how flaky. Against it a new side's runs (a pull
request's) are judged: significantly below its rate, **broke**; not significantly
different, **within noise** — a failure a flaky scenario was going to have anyway;
significantly above, **better** (Fisher's exact test, the history's runs against the
new ones). A **change point** is where the runs of one
prompt version, in session order, split into a before and an after whose rates differ
(Fisher's exact test on the pooled runs of each side, Bonferroni-corrected over the
possible splits): the prompt did not change, so something under it did — the model, the
agent, the workspace's tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.stats.inference import CONFIDENCE, DEFAULT_ALPHA, fisher_exact, wilson_interval

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pytest_ooda._types import HistoryCall, HistoryState
    from pytest_ooda.results import RunRecord

__all__ = [
    "MIN_HISTORY_RUNS",
    "ChangePoint",
    "HistoryJudgement",
    "HistoryPoint",
    "ScenarioHistory",
    "agent_of",
    "history",
]

#: Valid runs a state needs (as a gate needs five).
MIN_HISTORY_RUNS = 5


def agent_of(record: RunRecord) -> str | None:
    """What ran the scenario, as precisely as the record says: its fingerprint's agent,
    version and model (``claude 2.1.197 (Claude Code), claude-opus-4-8``), else the model
    an agent CLI reported, else the HTTP API's ``provider:model``, else the command
    line."""
    fingerprint = record.fingerprint
    if fingerprint is not None:
        return ", ".join(
            part
            for part in (f"{fingerprint.agent} {fingerprint.version or ''}".strip(), record.model)
            if part
        )
    return record.model or record.head.ai.api or record.head.ai.command


@dataclass(frozen=True)
class HistoryPoint:
    """One session's runs of a scenario."""

    session: str
    #: When its first run started (ISO 8601, UTC).
    started: str
    commit: str | None
    agent: str | None
    #: The prompt version (``prompt_sha256``) of its runs; the latest when it mixed some.
    prompt: str | None
    successes: int
    valid: int
    errors: int

    @property
    def rate(self) -> float | None:
        return self.successes / self.valid if self.valid else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.valid, CONFIDENCE)


@dataclass(frozen=True)
class ChangePoint:
    """Where one prompt version's success rate moved between two sessions."""

    #: The first session after the change (an index into the history's points).
    index: int
    prompt: str | None
    before: tuple[int, int]
    after: tuple[int, int]
    #: Fisher's exact test of before against after, Bonferroni-corrected over the splits
    #: that were possible.
    p_value: float
    #: What else differed between the two sides (``agent claude-a -> claude-b``).
    differs: tuple[str, ...] = ()

    @property
    def rates(self) -> tuple[float, float]:
        return self.before[0] / self.before[1], self.after[0] / self.after[1]


@dataclass(frozen=True)
class HistoryJudgement:
    """What a scenario's history says of a new side's runs."""

    call: HistoryCall
    successes: int
    valid: int
    #: Fisher's exact test of the history's current regime against the new runs.
    p_value: float

    @property
    def rate(self) -> float:
        return self.successes / self.valid


@dataclass(frozen=True)
class ScenarioHistory:
    """A scenario (``procedure/scenario@variant``) over every session that ran it."""

    label: str
    points: tuple[HistoryPoint, ...]
    state: HistoryState
    #: The runs the state is judged over: the current regime.
    successes: int
    valid: int
    #: The first session of the current regime (an index into ``points``).
    since: int
    change_point: ChangePoint | None = None

    @property
    def rate(self) -> float | None:
        return self.successes / self.valid if self.valid else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.valid, CONFIDENCE)

    @property
    def prompt_changes(self) -> tuple[int, ...]:
        """The sessions (indexes) that ran another prompt version than the one before."""
        return tuple(
            index
            for index in range(1, len(self.points))
            if self.points[index].prompt != self.points[index - 1].prompt
        )

    def judge(
        self, successes: int, valid: int, *, alpha: float = DEFAULT_ALPHA
    ) -> HistoryJudgement | None:
        """``successes`` of ``valid`` new runs against the current regime: broke (its
        rate significantly lower), within noise, or better; ``None`` when either side
        has too few valid runs to say (the history fewer than :data:`MIN_HISTORY_RUNS`)."""
        if not valid or self.state == "too-few-runs":
            return None
        p_value = fisher_exact(
            self.successes, self.valid - self.successes, successes, valid - successes
        )
        call: HistoryCall = "within noise"
        if p_value < alpha:
            assert self.rate is not None
            call = "broke" if successes / valid < self.rate else "better"
        return HistoryJudgement(call, successes, valid, p_value)

    def note(self) -> str:
        """One sentence for a reader deciding whether a failure is news:
        ``flaky: 68% (34/50, 95% CI 54%–79%) over 5 session(s)``."""
        sessions = len(self.points) - self.since
        if self.state == "too-few-runs":
            return f"too few runs to say ({self.valid} valid over {sessions} session(s))"
        low, high = self.interval
        assert self.rate is not None
        return (
            f"{self.state}: {self.rate:.0%} ({self.successes}/{self.valid}, 95% CI "
            f"{low:.0%}–{high:.0%}) over {sessions} session(s)"
        )


def history(records: Iterable[RunRecord], *, alpha: float = DEFAULT_ALPHA) -> list[ScenarioHistory]:
    """Every scenario's history, sorted by label; sessions in the order they started."""
    by_label: dict[str, dict[str, list[RunRecord]]] = {}
    for record in records:
        session = record.session or record.series or "?"
        by_label.setdefault(record.label, {}).setdefault(session, []).append(record)
    return [_history(label, sessions, alpha) for label, sessions in sorted(by_label.items())]


def _point(session: str, runs: Sequence[RunRecord]) -> HistoryPoint:
    ordered = sorted(runs, key=lambda record: (record.started_at, record.head.run))
    valid = [record for record in ordered if record.valid]
    latest = ordered[-1]
    prompts = [record.prompt_sha256 for record in ordered if record.prompt_sha256]
    return HistoryPoint(
        session=session,
        started=ordered[0].started_at,
        commit=latest.git_commit,
        agent=agent_of(latest),
        prompt=prompts[-1] if prompts else None,
        successes=sum(record.outcome == "success" for record in valid),
        valid=len(valid),
        errors=len(ordered) - len(valid),
    )


def _history(label: str, sessions: dict[str, list[RunRecord]], alpha: float) -> ScenarioHistory:
    points = sorted(
        (_point(session, runs) for session, runs in sessions.items()),
        key=lambda point: (point.started, point.session),
    )
    # The current prompt version's sessions: from the last change of prompt on.
    start = len(points) - 1
    while start > 0 and points[start - 1].prompt == points[-1].prompt:
        start -= 1
    change = _change_point(points, start, alpha)
    since = change.index if change is not None else start
    regime = points[since:]
    successes = sum(point.successes for point in regime)
    valid = sum(point.valid for point in regime)
    return ScenarioHistory(
        label, tuple(points), _state(successes, valid), successes, valid, since, change
    )


def _state(successes: int, valid: int) -> HistoryState:
    if valid < MIN_HISTORY_RUNS:
        return "too-few-runs"
    if successes == valid:
        return "stable-pass"
    if successes == 0:
        return "stable-fail"
    return "flaky"


def _change_point(points: Sequence[HistoryPoint], start: int, alpha: float) -> ChangePoint | None:
    """The most significant split of ``points[start:]`` (one prompt version) into two
    runs of sessions with different rates, or ``None`` when none is significant."""
    splits = range(start + 1, len(points))
    if not splits:
        return None
    best: tuple[float, int, tuple[int, int], tuple[int, int]] | None = None
    for index in splits:
        before = _pooled(points[start:index])
        after = _pooled(points[index:])
        if not before[1] or not after[1]:
            continue
        p_value = fisher_exact(before[0], before[1] - before[0], after[0], after[1] - after[0])
        # The latest split wins a tie: the regime a reader cares about is the newest.
        if best is None or p_value <= best[0]:
            best = (p_value, index, before, after)
    if best is None:
        return None
    p_value = min(1.0, best[0] * len(splits))
    if p_value >= alpha:
        return None
    index = best[1]
    return ChangePoint(
        index, points[index].prompt, best[2], best[3], p_value, _differs(points, start, index)
    )


def _pooled(points: Sequence[HistoryPoint]) -> tuple[int, int]:
    return sum(point.successes for point in points), sum(point.valid for point in points)


def _differs(points: Sequence[HistoryPoint], start: int, index: int) -> tuple[str, ...]:
    """What the sessions before the change ran with and the ones after never did."""
    out = []
    for name, getter in (("agent", "agent"), ("commit", "commit")):
        before = {getattr(point, getter) for point in points[start:index]} - {None}
        after = {getattr(point, getter) for point in points[index:]} - {None}
        if before and after and not before & after:
            was, now = ", ".join(sorted(before)), ", ".join(sorted(after))
            if name == "commit":
                was = ", ".join(sorted(commit[:8] for commit in before))
                now = ", ".join(sorted(commit[:8] for commit in after))
            out.append(f"{name} {was} -> {now}")
    return tuple(out)

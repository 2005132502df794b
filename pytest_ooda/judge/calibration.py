"""Judge calibration: labelled examples graded N times each, and how far the judge can
be trusted — accuracy against the labels, agreement between its own repeated gradings,
and Cohen's kappa (agreement with the labels beyond what chance gives).

Every grading of every example counts: with E examples and N runs there are E·N
gradings. An errored grading (no usable answer) is counted apart, by kind, and left out
of the figures; the first one is shown in full, since a judge that cannot be asked at
all (a missing key) errs the same way every time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING

from pytest_ooda.judge.ask import ask_vote, judge_prompt
from pytest_ooda.judge.model import grading_key

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda._types import JudgeErrorKind
    from pytest_ooda.judge.ask import Asker
    from pytest_ooda.judge.grading import GradingCache
    from pytest_ooda.judge.model import JudgeSpec, LabelledExample, Vote


@dataclass(frozen=True)
class ExampleGrades:
    """One example's gradings."""

    example: LabelledExample
    votes: tuple[Vote, ...]

    @property
    def answered(self) -> list[str]:
        return [vote.verdict for vote in self.votes if vote.verdict is not None]

    @property
    def errors(self) -> int:
        return sum(1 for vote in self.votes if vote.verdict is None)

    @property
    def correct(self) -> int:
        return sum(1 for verdict in self.answered if verdict == self.example.label)

    @property
    def majority(self) -> str | None:
        """The more common verdict; ``None`` on a tie or with no answer."""
        passes = self.answered.count("pass")
        fails = len(self.answered) - passes
        if passes == fails:
            return None
        return "pass" if passes > fails else "fail"

    @property
    def agreement(self) -> float | None:
        """The share of pairs of gradings that agree (``None`` below two answers)."""
        n = len(self.answered)
        if n < 2:
            return None
        passes = self.answered.count("pass")
        return (comb(passes, 2) + comb(n - passes, 2)) / comb(n, 2)


@dataclass(frozen=True)
class Calibration:
    examples: tuple[ExampleGrades, ...]
    runs: int

    @property
    def gradings(self) -> int:
        """Answered gradings (errors left out)."""
        return sum(len(item.answered) for item in self.examples)

    @property
    def errors(self) -> int:
        return sum(item.errors for item in self.examples)

    @property
    def errors_by_kind(self) -> dict[JudgeErrorKind, int]:
        """Errored gradings per kind, the most common first."""
        kinds = Counter(
            vote.error_kind or "bad-answer"
            for item in self.examples
            for vote in item.votes
            if vote.verdict is None
        )
        return dict(kinds.most_common())

    @property
    def first_error(self) -> tuple[str, int, str] | None:
        """The first errored grading: its example's name, its run (1-based), the error."""
        for item in self.examples:
            for run, vote in enumerate(item.votes, 1):
                if vote.verdict is None:
                    return item.example.name, run, vote.error or "no answer"
        return None

    @property
    def accuracy(self) -> float | None:
        """Gradings that match their example's label, over all answered gradings."""
        total = self.gradings
        if not total:
            return None
        return sum(item.correct for item in self.examples) / total

    @property
    def majority_accuracy(self) -> float | None:
        """Examples whose majority verdict matches the label (a tie counts as a miss)."""
        graded = [item for item in self.examples if item.answered]
        if not graded:
            return None
        return sum(1 for item in graded if item.majority == item.example.label) / len(graded)

    @property
    def agreement(self) -> float | None:
        """Mean pairwise agreement between an example's repeated gradings."""
        values = [item.agreement for item in self.examples if item.agreement is not None]
        return sum(values) / len(values) if values else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa between the judge's gradings and the labels, over every
        answered grading; ``None`` when chance agreement is 1 (one class only)."""
        pairs = [
            (verdict, item.example.label) for item in self.examples for verdict in item.answered
        ]
        return cohens_kappa(pairs)

    @property
    def cost(self) -> float | None:
        costs = [
            vote.cost
            for item in self.examples
            for vote in item.votes
            if vote.cost is not None and not vote.cached
        ]
        return sum(costs) if costs else None


def cohens_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over ``pairs`` of (rater A, rater B) labels:
    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the
    agreement expected from each rater's own label frequencies."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    labels = {label for pair in pairs for label in pair}
    expected = sum(
        (sum(1 for a, _ in pairs if a == label) / n) * (sum(1 for _, b in pairs if b == label) / n)
        for label in labels
    )
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def calibrate(
    spec: JudgeSpec,
    examples: Sequence[LabelledExample],
    asker: Asker,
    *,
    runs: int,
    cache: GradingCache | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Grade each example ``runs`` times (run ``i`` is vote index ``i`` of the
    grading cache, so a second check asks nothing again)."""
    from dataclasses import replace

    graded: list[ExampleGrades] = []
    total, done = len(examples) * runs, 0
    for example in examples:
        inputs = example.inputs()
        prompt = judge_prompt(spec, inputs)
        votes: list[Vote] = []
        for run in range(runs):
            key = grading_key(spec, inputs, run)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                votes.append(replace(cached, cached=True))
            else:
                vote = ask_vote(asker, prompt, retries=spec.retries)
                if cache is not None:
                    cache.put(key, vote)
                votes.append(vote)
            done += 1
            if progress is not None:
                progress(done, total)
        graded.append(ExampleGrades(example, tuple(votes)))
    return Calibration(tuple(graded), runs)


def _figure(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def render(calibration: Calibration, *, title: str) -> list[str]:
    """The calibration report for a terminal."""
    lines = [
        f"{title}: {len(calibration.examples)} labelled example(s) x {calibration.runs} "
        f"run(s) = {calibration.gradings} grading(s)"
        + (f", {calibration.errors} judge error(s) left out" if calibration.errors else ""),
        "",
        f"  {'example':<28} {'label':<5} {'pass':>4} {'fail':>4} {'error':>5} "
        f"{'majority':<8} {'agreement':>9}",
    ]
    first = calibration.first_error
    if first is not None:
        kinds = ", ".join(f"{count} {kind}" for kind, count in calibration.errors_by_kind.items())
        name, run, error = first
        lines[1:1] = [
            f"  judge errors by kind: {kinds}",
            f"  first judge error ({name}, run {run}): {error}",
        ]
        if not calibration.gradings:
            lines.insert(3, "  no grading succeeded: the figures below are n/a")
    for item in calibration.examples:
        passes = item.answered.count("pass")
        majority = item.majority or "tie"
        mark = "" if item.majority == item.example.label else "  <- disagrees with the label"
        lines.append(
            f"  {item.example.name[:28]:<28} {item.example.label:<5} {passes:>4} "
            f"{len(item.answered) - passes:>4} {item.errors:>5} {majority:<8} "
            f"{_figure(item.agreement):>9}{mark}"
        )
    lines += [
        "",
        f"  accuracy (gradings matching the label): {_figure(calibration.accuracy)}",
        f"  majority accuracy (examples):            {_figure(calibration.majority_accuracy)}",
        f"  agreement between runs (pairwise):       {_figure(calibration.agreement)}",
        f"  Cohen's kappa vs the labels:             {_figure(calibration.kappa)}",
    ]
    if calibration.cost is not None:
        lines.append(f"  judge cost: ${calibration.cost:.4f}")
    return lines

"""Statistics for repeated runs, in plain Python (no numpy/scipy at run time).

An agent run is a sample: these turn ``n`` runs with ``c`` successes into a success rate
with a confidence interval, the chance that ``k`` runs all succeed (pass^k) or that at
least one does (pass@k), and the evidence that two prompt versions differ (Fisher's
exact test).
"""

from __future__ import annotations

import math

__all__ = [
    "CONFIDENCE",
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "DEFAULT_POWER",
    "STOP_ALPHA",
    "Sprt",
    "difference_interval",
    "fisher_exact",
    "mcnemar_exact",
    "min_detectable_difference",
    "paired_difference_interval",
    "pass_at_k",
    "pass_hat_k",
    "runs_needed",
    "wilson_interval",
]

#: The k of pass^k and pass@k unless asked otherwise: "all of 3 runs succeed" and "at
#: least one of 3 does" read naturally, and 3 runs fit in any sample worth reporting.
DEFAULT_K = 3
#: The confidence of the success rate's interval.
CONFIDENCE = 0.95
#: The significance level of ``ooda compare`` unless asked otherwise.
DEFAULT_ALPHA = 0.05
#: The power at which ``ooda compare`` states the smallest difference it could detect.
DEFAULT_POWER = 0.8
#: Early stopping's error rates: the chance of an early "passed" when the true rate is
#: at or below the lower edge of the indifference zone, and of an early "failed" when it
#: is at or above the upper edge.
STOP_ALPHA = 0.05
#: Half the width of early stopping's indifference zone around ``min`` (narrowed so the
#: zone stays inside (0, 1)).
STOP_MARGIN = 0.1


def _check_counts(successes: int, runs: int) -> None:
    if runs < 0 or successes < 0 or successes > runs:
        raise ValueError(f"need 0 <= successes <= runs, got {successes} of {runs}")


def wilson_interval(successes: int, runs: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a success rate (``(0.0, 1.0)`` with no runs).

    Unlike the normal approximation it stays inside [0, 1] and behaves at 0 and n
    successes, which is where agent runs often are.
    """
    _check_counts(successes, runs)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if runs == 0:
        return 0.0, 1.0
    # Imported here: `statistics` costs milliseconds, and the CLI reads this module's
    # defaults for every command's --help.
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(
    base_successes: int,
    base_runs: int,
    new_successes: int,
    new_runs: int,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The interval of ``new rate - base rate`` (a lift): Newcombe's hybrid score
    interval, built from the two Wilson intervals, so it behaves at 0 and n successes
    and with small samples, where the normal approximation does not. ``(-1.0, 1.0)``
    when either side has no runs."""
    if base_runs == 0 or new_runs == 0:
        return -1.0, 1.0
    p1, p2 = base_successes / base_runs, new_successes / new_runs
    low1, high1 = wilson_interval(base_successes, base_runs, confidence)
    low2, high2 = wilson_interval(new_successes, new_runs, confidence)
    difference = p2 - p1
    below = math.sqrt((p2 - low2) ** 2 + (high1 - p1) ** 2)
    above = math.sqrt((high2 - p2) ** 2 + (p1 - low1) ** 2)
    return max(-1.0, difference - below), min(1.0, difference + above)


def pass_at_k(runs: int, successes: int, k: int) -> float:
    """Unbiased estimate that at least one of ``k`` runs succeeds:
    ``1 - C(n - c, k) / C(n, k)`` (the HumanEval estimator)."""
    _check_counts(successes, runs)
    if not 1 <= k <= runs:
        raise ValueError(f"need 1 <= k <= runs, got k={k} with {runs} runs")
    return 1.0 - math.comb(runs - successes, k) / math.comb(runs, k)


def pass_hat_k(runs: int, successes: int, k: int) -> float:
    """Unbiased estimate that ``k`` runs all succeed: ``C(c, k) / C(n, k)`` (pass^k)."""
    _check_counts(successes, runs)
    if not 1 <= k <= runs:
        raise ValueError(f"need 1 <= k <= runs, got k={k} with {runs} runs")
    return math.comb(successes, k) / math.comb(runs, k)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table ``[[a, b], [c, d]]``
    (e.g. successes/failures of a base version, then of a new one).

    Sums the hypergeometric probabilities of every table with the same margins that is
    no more likely than the observed one, with the small relative tolerance the usual
    implementations use so that ties in floating point count as ties.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be >= 0, got {[a, b, c, d]}")
    row1, col1, total = a + b, a + c, a + b + c + d
    if total == 0:
        return 1.0
    low, high = max(0, col1 - (total - row1)), min(row1, col1)
    denominator = math.comb(total, col1)

    def probability(x: int) -> float:
        return math.comb(row1, x) * math.comb(total - row1, col1 - x) / denominator

    observed = probability(a)
    tolerance = 1 + 1e-7
    p_value = sum(
        p for p in (probability(x) for x in range(low, high + 1)) if p <= observed * tolerance
    )
    return min(1.0, p_value)


def _z(probability: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(probability)


def _arcsine(rate: float) -> float:
    return 2 * math.asin(math.sqrt(min(1.0, max(0.0, rate))))


def min_detectable_difference(
    base_runs: int,
    new_runs: int,
    base_rate: float,
    *,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> float | None:
    """The smallest change of a success rate from ``base_rate`` that a two-sided test at
    ``alpha`` detects with probability ``power`` given these sample sizes, in rate units
    (0.38 = 38 percentage points); ``None`` without runs on a side, or when no change
    inside [0, 1] is large enough.

    Uses Cohen's arcsine effect size h = 2·asin(√p₂) − 2·asin(√p₁), whose sampling
    variance is 1/n₁ + 1/n₂ whatever the rate: the detectable h is
    (z₁₋α/₂ + z_power)·√(1/n₁ + 1/n₂), turned back into a drop from ``base_rate`` (what
    a regression check is for), or a rise when the rate is too low to drop that far.
    Fisher's exact test is slightly more conservative than this normal approximation,
    so read it as a lower bound.
    """
    if base_runs < 1 or new_runs < 1:
        return None
    h = (_z(1 - alpha / 2) + _z(power)) * math.sqrt(1 / base_runs + 1 / new_runs)
    start = _arcsine(base_rate)
    if start - h >= 0:
        return base_rate - math.sin((start - h) / 2) ** 2
    if start + h <= math.pi:
        return math.sin((start + h) / 2) ** 2 - base_rate
    return None


def runs_needed(
    base_rate: float,
    difference: float,
    *,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> int | None:
    """Runs per side for a two-sided test at ``alpha`` to detect, with probability
    ``power``, a change of ``difference`` from ``base_rate`` (a drop when the rate allows
    it, else a rise); ``None`` when neither fits in [0, 1]. Same approximation as
    :func:`min_detectable_difference`."""
    if not 0 < difference < 1:
        raise ValueError(f"difference must be between 0 and 1, got {difference}")
    if base_rate - difference >= 0:
        other = base_rate - difference
    elif base_rate + difference <= 1:
        other = base_rate + difference
    else:
        return None
    h = abs(_arcsine(base_rate) - _arcsine(other))
    z = _z(1 - alpha / 2) + _z(power)
    return max(2, math.ceil(2 * (z / h) ** 2))


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided p-value of McNemar's exact test for paired runs: ``only_first`` pairs
    where only the first of the pair succeeded, ``only_second`` where only the second
    did (pairs that agree say nothing about a difference). Under no difference each
    disagreeing pair goes either way with probability 1/2: the binomial test of that."""
    if only_first < 0 or only_second < 0:
        raise ValueError(f"counts must be >= 0, got {only_first}, {only_second}")
    total = only_first + only_second
    if total == 0:
        return 1.0
    smaller = min(only_first, only_second)
    tail: float = sum(math.comb(total, x) for x in range(smaller + 1)) / 2**total
    return min(1.0, 2 * tail)


def paired_difference_interval(
    pairs: int, only_first: int, only_second: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """An interval for the difference of two success rates measured in ``pairs`` paired
    runs (first minus second; ``only_first`` / ``only_second`` as in
    :func:`mcnemar_exact`): Agresti and Min's adjusted Wald interval, which adds half a
    pair to each cell of the 2×2 table so it stays useful when every pair agrees.
    ``(-1.0, 1.0)`` without pairs."""
    if pairs < 0 or only_first < 0 or only_second < 0 or only_first + only_second > pairs:
        raise ValueError(f"need 0 <= disagreeing pairs <= pairs, got {only_first}, {only_second}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if pairs == 0:
        return -1.0, 1.0
    z = _z(0.5 + confidence / 2)
    n, b, c = pairs + 2, only_first + 0.5, only_second + 0.5
    change = (b - c) / n
    half = z * math.sqrt(max(0.0, (b + c) - (b - c) ** 2 / n)) / n
    return max(-1.0, change - half), min(1.0, change + half)


class Sprt:
    """Wald's sequential probability ratio test of a success rate against ``minimum``.

    H0: rate = ``minimum − margin`` against H1: rate = ``minimum + margin`` (the margin
    narrowed so both stay inside (0, 1)). After each valid run the log-likelihood ratio
    moves by log(p₁/p₀) for a success and log((1−p₁)/(1−p₀)) for a failure; at or above
    log((1−β)/α) the gate has **passed**, at or below log(β/(1−α)) it has **failed**,
    in between more runs are needed. Wald's bounds: when the true rate is at or below
    p₀ the chance of ever deciding "passed" is at most about α; at or above p₁ the
    chance of deciding "failed" is at most about β (here β = α). Between p₀ and p₁ (the
    indifference zone) either verdict may come.
    """

    def __init__(
        self, minimum: float, *, alpha: float = STOP_ALPHA, margin: float = STOP_MARGIN
    ) -> None:
        if not 0 < minimum < 1:
            raise ValueError(f"minimum must be between 0 and 1 (exclusive), got {minimum}")
        if not 0 < alpha < 0.5:
            raise ValueError(f"alpha must be between 0 and 0.5, got {alpha}")
        self.minimum = minimum
        self.alpha = alpha
        self.margin = min(margin, minimum / 2, (1 - minimum) / 2)
        self.low = minimum - self.margin
        self.high = minimum + self.margin
        self.step_success = math.log(self.high / self.low)
        self.step_failure = math.log((1 - self.high) / (1 - self.low))
        self.upper = math.log((1 - alpha) / alpha)
        self.lower = math.log(alpha / (1 - alpha))

    def statistic(self, successes: int, failures: int) -> float:
        """The log-likelihood ratio after these runs."""
        return successes * self.step_success + failures * self.step_failure

    def decide(self, successes: int, failures: int) -> bool | None:
        """``True`` (passed), ``False`` (failed) or ``None`` (not settled yet)."""
        value = self.statistic(successes, failures)
        if value >= self.upper:
            return True
        if value <= self.lower:
            return False
        return None

    def describe(self) -> str:
        return (
            f"SPRT of {self.low:.0%} against {self.high:.0%}, "
            f"error rates <= {self.alpha:g} each way"
        )

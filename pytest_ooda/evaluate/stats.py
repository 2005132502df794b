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
    "fisher_exact",
    "pass_at_k",
    "pass_hat_k",
    "wilson_interval",
]

#: The k of pass^k and pass@k unless asked otherwise: "all of 3 runs succeed" and "at
#: least one of 3 does" read naturally, and 3 runs fit in any sample worth reporting.
DEFAULT_K = 3
#: The confidence of the success rate's interval.
CONFIDENCE = 0.95
#: The significance level of ``ooda compare`` unless asked otherwise.
DEFAULT_ALPHA = 0.05


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

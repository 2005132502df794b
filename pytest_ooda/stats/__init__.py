"""Statistics over results records: pure functions, no files, no rendering.

:mod:`.inference` (Wilson interval, pass@k, pass^k, Fisher's exact test, the smallest
detectable difference and the runs needed, the SPRT of early stopping, the defaults),
:mod:`.aggregate` (per-scenario statistics over valid runs, infrastructure errors
apart; aggregate expectations with their minimum of valid runs and early verdicts — the
gates), :mod:`.comparison` (A/B: regressed / improved / inconclusive) and
:mod:`.variant_comparison` (``--by variant``: pairwise, Holm-corrected, ranked).

Above ``results/`` (it reads :class:`~pytest_ooda.results.RunRecord` and the outcome
rule's words) and below ``report/`` and ``view/``, which it never imports; pytest's
early stopping (``plugin/``) asks :class:`Sprt` and the gates here.
"""

from __future__ import annotations

from pytest_ooda.stats.aggregate import (
    Gates,
    ScenarioStats,
    check_gates,
    drop_duplicates,
    early_verdict,
    summarize,
)
from pytest_ooda.stats.comparison import (
    Comparison,
    ScenarioComparison,
    compare,
)
from pytest_ooda.stats.fired import AssertionStats, TriggerStats
from pytest_ooda.stats.inference import (
    DEFAULT_ALPHA,
    DEFAULT_K,
    Sprt,
    difference_interval,
    fisher_exact,
    min_detectable_difference,
    pass_at_k,
    pass_hat_k,
    runs_needed,
    wilson_interval,
)
from pytest_ooda.stats.variant_comparison import (
    NO_VARIANT,
    PairTest,
    VariantComparison,
    compare_variants,
    variant_of,
)

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "NO_VARIANT",
    "AssertionStats",
    "Comparison",
    "Gates",
    "PairTest",
    "ScenarioComparison",
    "ScenarioStats",
    "Sprt",
    "TriggerStats",
    "VariantComparison",
    "check_gates",
    "compare",
    "compare_variants",
    "difference_interval",
    "drop_duplicates",
    "early_verdict",
    "fisher_exact",
    "min_detectable_difference",
    "pass_at_k",
    "pass_hat_k",
    "runs_needed",
    "summarize",
    "variant_of",
    "wilson_interval",
]

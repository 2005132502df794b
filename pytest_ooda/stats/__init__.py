"""Statistics over results records: pure functions, no files, no rendering.

:mod:`.inference` (Wilson interval, pass@k, pass^k, Fisher's exact test, the smallest
detectable difference and the runs needed, the SPRT of early stopping, the defaults),
:mod:`.aggregate` (per-scenario statistics over valid runs, infrastructure errors
apart; aggregate expectations with their minimum of valid runs and early verdicts — the
gates), :mod:`.controls` (positive controls: a failed one makes the other scenarios'
gates and comparisons inconclusive), :mod:`.fingerprints` (whether the runs compared
were made by the same agent, configured alike), :mod:`.comparison` (A/B: regressed /
improved / inconclusive) and
:mod:`.variant_comparison` (``--by variant``: pairwise, Holm-corrected, ranked),
:mod:`.flakiness` (a scenario across sessions: stable-pass, flaky or stable-fail, and
change points), :mod:`.leave_one_out` (leave-one-out arms against the full prompt: keep,
cut or can't tell, Holm-corrected, with sequential looks) and :mod:`.planning` (the
runs a comparison needs and their cost, from past runs).

Above ``results/`` (it reads :class:`~pytest_ooda.results.RunRecord` and the outcome
rule's words) and below ``report/`` and ``view/``, which it never imports; pytest's
early stopping (``plugin/``) asks :func:`settled_early` and the gates here.
"""

from __future__ import annotations

from pytest_ooda.stats.aggregate import (
    Gates,
    ScenarioStats,
    check_gates,
    drop_duplicates,
    early_verdict,
    gate_inconclusive,
    settled_early,
    summarize,
)
from pytest_ooda.stats.comparison import (
    Comparison,
    ScenarioComparison,
    compare,
)
from pytest_ooda.stats.controls import CONTROL_FAILED, harness_blind
from pytest_ooda.stats.fingerprints import (
    Drift,
    ScenarioDrift,
    drift,
    fingerprint_drift,
    variant_drift,
    varied_fields,
)
from pytest_ooda.stats.fired import AssertionStats, TriggerStats
from pytest_ooda.stats.flakiness import (
    MIN_HISTORY_RUNS,
    ChangePoint,
    HistoryJudgement,
    HistoryPoint,
    ScenarioHistory,
    agent_of,
    history,
)
from pytest_ooda.stats.inference import (
    DEFAULT_ALPHA,
    DEFAULT_K,
    DEFAULT_POWER,
    Sprt,
    difference_interval,
    fisher_exact,
    mcnemar_exact,
    min_detectable_difference,
    paired_difference_interval,
    pass_at_k,
    pass_hat_k,
    runs_needed,
    wilson_interval,
)
from pytest_ooda.stats.leave_one_out import (
    DEFAULT_MARGIN,
    DEFAULT_ROUNDS,
    FULL,
    Ablation,
    ArmEffect,
    ablation,
    arm_name,
    looks,
    place_of,
)
from pytest_ooda.stats.planning import RunsPlan, plan_runs
from pytest_ooda.stats.variant_comparison import (
    NO_VARIANT,
    PairTest,
    VariantComparison,
    compare_variants,
    variant_of,
)

__all__ = [
    "CONTROL_FAILED",
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "DEFAULT_MARGIN",
    "DEFAULT_POWER",
    "DEFAULT_ROUNDS",
    "FULL",
    "MIN_HISTORY_RUNS",
    "NO_VARIANT",
    "Ablation",
    "ArmEffect",
    "AssertionStats",
    "ChangePoint",
    "Comparison",
    "Drift",
    "Gates",
    "HistoryJudgement",
    "HistoryPoint",
    "PairTest",
    "RunsPlan",
    "ScenarioComparison",
    "ScenarioDrift",
    "ScenarioHistory",
    "ScenarioStats",
    "Sprt",
    "TriggerStats",
    "VariantComparison",
    "ablation",
    "agent_of",
    "arm_name",
    "check_gates",
    "compare",
    "compare_variants",
    "difference_interval",
    "drift",
    "drop_duplicates",
    "early_verdict",
    "fingerprint_drift",
    "fisher_exact",
    "gate_inconclusive",
    "harness_blind",
    "history",
    "looks",
    "mcnemar_exact",
    "min_detectable_difference",
    "paired_difference_interval",
    "pass_at_k",
    "pass_hat_k",
    "place_of",
    "plan_runs",
    "runs_needed",
    "settled_early",
    "summarize",
    "variant_drift",
    "variant_of",
    "varied_fields",
    "wilson_interval",
]

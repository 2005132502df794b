"""Measuring procedures from repeated live runs: statistics over run outcomes.

(The results log, reports and A/B comparison build on :mod:`.stats`.)
"""

from __future__ import annotations

from pytest_ooda.evaluate.stats import fisher_exact, pass_at_k, pass_hat_k, wilson_interval

__all__ = ["fisher_exact", "pass_at_k", "pass_hat_k", "wilson_interval"]

"""Measuring procedures from repeated live runs.

:mod:`.stats` (Wilson interval, pass@k, pass^k, Fisher's exact test, the defaults),
:mod:`.results` (the versioned results-log schema, reading and merging files),
:mod:`.record` (a live run into a record), :mod:`.log` (writing the log),
:mod:`.aggregate` (per-scenario statistics and aggregate expectations), :mod:`.compare`
(A/B comparison), and the renderers :mod:`.render_text`, :mod:`.render_markdown` and
:mod:`.render_html`.

Names are resolved on first use, like the top-level package: ``ooda --help`` and a pytest
session without live runs import none of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ooda.evaluate.aggregate import Gates, ScenarioStats, check_gates, summarize
    from pytest_ooda.evaluate.compare import Comparison, ScenarioComparison, compare
    from pytest_ooda.evaluate.results import (
        SCHEMA,
        SCHEMA_VERSION,
        Results,
        RunRecord,
        read_results,
    )
    from pytest_ooda.evaluate.stats import (
        DEFAULT_ALPHA,
        DEFAULT_K,
        fisher_exact,
        pass_at_k,
        pass_hat_k,
        wilson_interval,
    )

_MODULES = {
    "aggregate": ("Gates", "ScenarioStats", "check_gates", "summarize"),
    "compare": ("Comparison", "ScenarioComparison", "compare"),
    "results": ("SCHEMA", "SCHEMA_VERSION", "Results", "RunRecord", "read_results"),
    "stats": (
        "DEFAULT_ALPHA",
        "DEFAULT_K",
        "fisher_exact",
        "pass_at_k",
        "pass_hat_k",
        "wilson_interval",
    ),
}
_LAZY = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_K",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Comparison",
    "Gates",
    "Results",
    "RunRecord",
    "ScenarioComparison",
    "ScenarioStats",
    "check_gates",
    "compare",
    "fisher_exact",
    "pass_at_k",
    "pass_hat_k",
    "read_results",
    "summarize",
    "wilson_interval",
]

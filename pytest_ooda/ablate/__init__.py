"""Fragment ablation (``ooda ablate``): which fragments of a scenario's prompt earn
their tokens.

:mod:`.driver` generates the arms (each fragment left out, and whole phases on
request, as variants whose ``without`` names the place), runs them in rounds paired
with the full prompt through :func:`pytest_ooda.live.plan_run` and
:func:`pytest_ooda.live.run_live`, stops an arm once a look settles it and every run
once the session's budget is spent. The verdicts are :func:`pytest_ooda.stats.ablation`'s;
the table, the report page and the viewer page are ``report/``'s. Above ``live/``,
``results/`` and ``stats/``; below ``cli/``.
"""

from __future__ import annotations

from pytest_ooda.ablate.driver import AblationRun, ablation_arms, run_ablation

__all__ = ["AblationRun", "ablation_arms", "run_ablation"]

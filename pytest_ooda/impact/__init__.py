"""Change impact: which scenarios a change since a git revision touched, and why.

:mod:`.gitref` (a project as it was at a revision, read from git's objects; a working
tree's files as git sees them), :mod:`.surface` (what a scenario can send: each
variant's prompts, planned as its live runs are, and its workspace) and
:mod:`.selection` (:func:`changed_since`: both sides' surfaces compared into an
:class:`Impact`, each touched scenario with its reasons).

``pytest --ooda-changed=REF`` runs the touched scenarios live and replays the others;
``ooda changed REF`` prints the selection. Above ``live/`` (a surface is planned with
``plan_run``), below ``plugin/`` and ``cli/``.
"""

from __future__ import annotations

from pytest_ooda.impact.gitref import RefTree
from pytest_ooda.impact.selection import Impact, ScenarioImpact, changed_since
from pytest_ooda.impact.surface import Surface, VariantSurface, project_surfaces

__all__ = [
    "Impact",
    "RefTree",
    "ScenarioImpact",
    "Surface",
    "VariantSurface",
    "changed_since",
    "project_surfaces",
]

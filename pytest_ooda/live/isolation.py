"""The sandbox step of a live run: the plan's sandbox (decided with the run's settings:
``config.resolve_sandbox``) started around the run's workspace before the loop and
stopped after the verification commands, and the identity the results record carries."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path

    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["identity", "start"]


def start(spec: SandboxSpec | None, workspace: Path) -> AbstractContextManager[SandboxRun | None]:
    """The started sandbox around ``workspace`` for the block (``None``: none)."""
    from pytest_ooda.sandbox import sandboxed

    return sandboxed(spec, workspace)


def identity(run: SandboxRun | None) -> Mapping[str, str | None] | None:
    """``{"kind", "image", "image_id"}`` for the results record and the reports
    (``None``: no sandbox, as the results-log schema writes it)."""
    return dict(run.identity) if run is not None else None

"""The sandbox step of a live run: the plan's sandbox (decided with the run's settings:
``config.resolve_sandbox``) started around the run's workspace before the loop and
stopped after the verification commands, the identity the results record carries, and
what the sandbox had to undo in the workspace when it stopped, as warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path

    from pytest_ooda.errors import SandboxWarning
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["identity", "scrubbed", "start"]


def start(spec: SandboxSpec | None, workspace: Path) -> AbstractContextManager[SandboxRun | None]:
    """The started sandbox around ``workspace`` for the block (``None``: none)."""
    from pytest_ooda.sandbox import sandboxed

    return sandboxed(spec, workspace)


def identity(run: SandboxRun | None) -> Mapping[str, str | None] | None:
    """``{"kind", "image", "image_id"}`` for the results record and the reports
    (``None``: no sandbox, as the results-log schema writes it)."""
    return dict(run.identity) if run is not None else None


def scrubbed(run: SandboxRun | None, label: str, file: Path | None) -> list[SandboxWarning]:
    """One warning per thing the stopped sandbox undid in the workspace (a set-user-ID
    bit cleared, a device node removed: ``SandboxRun.notes``)."""
    from pytest_ooda.errors import SandboxWarning

    notes = getattr(run, "notes", ()) if run is not None else ()
    return [
        SandboxWarning(
            f"scenario {label}: the workspace was scrubbed after the run: {note}",
            file=str(file) if file is not None else None,
        )
        for note in notes
    ]

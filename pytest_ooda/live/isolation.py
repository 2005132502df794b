"""The sandbox step of a live run: which sandbox the run uses (the session's
``--ooda-sandbox`` > the scenario's > the procedure's > ``loop:``), starting it around the
run's workspace before the loop and stopping it after the verification commands, the
identity the results record carries, and the note for an agent that runs unattended
with no sandbox."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path

    from pytest_ooda.config import Config
    from pytest_ooda.errors import SandboxWarning
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec
    from pytest_ooda.scenario import Scenario

__all__ = ["identity", "resolve", "start", "unattended_note"]


def resolve(config: Config, scenario: Scenario, cli: str | None) -> SandboxSpec | None:
    """The run's sandbox (``None``: none); ``cli`` is the session's kind, if any."""
    from pytest_ooda.config import resolve_sandbox

    spec, _ = resolve_sandbox(config, scenario.procedure, scenario.sandbox, cli=cli)
    return spec


def start(spec: SandboxSpec | None, workspace: Path) -> AbstractContextManager[SandboxRun | None]:
    """The started sandbox around ``workspace`` for the block (``None``: none)."""
    from pytest_ooda.sandbox import sandboxed

    return sandboxed(spec, workspace)


def identity(run: SandboxRun | None) -> Mapping[str, str | None] | None:
    """``{"kind", "image", "image_id"}`` for the results record and the reports
    (``None``: no sandbox, as the results-log schema writes it)."""
    return dict(run.identity) if run is not None else None


def unattended_note(
    config: Config,
    scenario: Scenario,
    spec: SandboxSpec | None,
    ai_cmd: str | None,
    ai_cmd_alias: str | None,
) -> Iterator[SandboxWarning]:
    """The note for an agent started with its permission checks off and no sandbox."""
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.sandbox import unattended_warning

    settings = resolve_run_settings(
        config, scenario.procedure, ai_cmd=ai_cmd, ai_cmd_alias=ai_cmd_alias, require_ai=False
    )
    argv = settings.ai_cmd
    if argv is None and ai_cmd is not None:
        argv = tuple(shlex.split(ai_cmd))
    note = unattended_warning(spec, argv)
    if note is not None:
        yield note

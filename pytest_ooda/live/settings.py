"""The session's settings for live runs, as the library sees them (no pytest).

The plugin builds one from its options, ``ooda run`` from its flags; each feature of a
live run (sandbox, retries, variants, judging) adds its field here with a default that
means "as before".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda._types import RECORD_MODES

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda._types import AiOutput, PromptFormat, RecordMode
    from pytest_ooda.variants import Variant

__all__ = ["LiveSettings"]


@dataclass(frozen=True)
class LiveSettings:
    """What a session decides for every live run it makes."""

    #: The project root (pytest's rootdir, ``ooda``'s working directory): scenario
    #: workspaces must lie inside it, and paths in records are shown relative to it.
    root: Path
    #: The session's workspace config (``--ooda-config``); ``None``: ``root``'s own.
    config_file: Path | None = None
    ai_cmd: str | None = None
    ai_cmd_alias: str | None = None
    ai_output: AiOutput | None = None
    #: The prompt layout forced on every procedure (``None``: each config's own).
    prompt_format: PromptFormat | None = None
    record_mode: RecordMode = RECORD_MODES[0]
    max_cost: float | None = None
    max_tokens: int | None = None
    #: ``(K, N)`` of ``--ooda-shard K/N``, written into each record.
    shard: tuple[int, int] | None = None
    #: How command-line flags are spelled where a message names them (``--ooda-`` in
    #: pytest, ``--`` for ``ooda run``).
    flag_prefix: str = "--ooda-"
    #: The sandbox kind named for the session (``--ooda-sandbox``, ``ooda run
    #: --sandbox``): beats the scenario's, procedure's and config's ``sandbox:``.
    sandbox: str | None = None
    #: The named variant this run uses (:mod:`pytest_ooda.variants`); ``None``: none.
    variant: Variant | None = None
    #: Where ``expect.judge`` gradings are cached (a results directory); ``None``: not.
    judge_cache: Path | None = None
    #: A directory to create with a ``.gitignore`` of ``*`` if a run writes into it
    #: first (the default ``.ooda/``), so nothing written there reaches a commit.
    ignore_dir: Path | None = None
    #: ``--ooda-retries``: tries after an infrastructure error, beating every ``retry:``
    #: setting (``None``: the scenario's, procedure's or loop's, else 2).
    retries: int | None = None
    #: ``--ooda-max-concurrent``: at most this many runs at once per AI command or API,
    #: counted with lock files in ``slots_dir`` (shared by every xdist worker).
    max_concurrent: int | None = None
    slots_dir: Path | None = None
    #: Where each run's temporary directory is made (``None``: the system's temp dir):
    #: the session's, so a crashed worker's run can be found and removed.
    runs_dir: Path | None = None
    #: ``--ooda-stop-early``: every ``success_rate`` gate stops early.
    stop_early: bool = False

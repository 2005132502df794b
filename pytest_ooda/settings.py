"""What a session decides for every run it makes: the one settings type of the pytest
plugin (from its ``--ooda-*`` options and ini keys) and of ``ooda run`` (from its
flags), without pytest. A leaf, cheap to import: a pytest session builds one whether or
not it makes any live run.

Each run's own settings are decided from these, the config, the scenario and the
variant in one place, :func:`pytest_ooda.live.plan_run`. Fields only one caller sets
keep a default that means "not given": ``ooda run`` has no collection or replay
options, the plugin no ``--max-iterations`` or ``--context``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda._types import DRIFT_MODES, RECORD_MODES, REPLAY_COMMANDS

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from pytest_ooda._types import (
        AiOutput,
        ApiRecord,
        DriftMode,
        PromptFormat,
        RecordMode,
        ReplayCommands,
        ReplayKind,
    )
    from pytest_ooda.config import Provenance
    from pytest_ooda.variants import Variant

__all__ = ["SessionSettings"]


@dataclass(frozen=True)
class SessionSettings:
    """The settings of one pytest session or ``ooda`` command, for all its runs."""

    #: The project root (pytest's rootdir, ``ooda``'s working directory): scenario
    #: workspaces must lie inside it, and paths in records are shown relative to it.
    root: Path
    #: The workspace config (``--ooda-config``); ``None``: ``root``'s own.
    config_file: Path | None = None

    # -- the agent, its limits and budgets (the command-line tier of every run)
    ai_cmd: str | None = None
    ai_cmd_alias: str | None = None
    ai_output: AiOutput | None = None
    #: The prompt layout forced on every procedure (``None``: each config's own).
    prompt_format: PromptFormat | None = None
    #: ``ooda run --max-iterations`` / ``--unlimited`` (the plugin: the scenario's).
    max_iterations: int | None = None
    unlimited: bool = False
    #: ``ooda run --context``, in place of a scenario's ``context:``.
    context: tuple[str, ...] = ()
    max_cost: float | None = None
    max_tokens: int | None = None
    #: ``--ooda-retries``: tries after an infrastructure error, beating every ``retry:``
    #: setting (``None``: the scenario's, procedure's or loop's, else 2).
    retries: int | None = None
    #: Stream the agent's output (``ooda run --verbose``, ``pytest -s``); ``None``: the
    #: config's ``show_ai_output``.
    show_ai_output: bool | None = None
    #: The sandbox kind named for the session (``--ooda-sandbox``): beats the scenario's,
    #: procedure's and config's ``sandbox:``.
    sandbox: str | None = None

    # -- live runs
    record_mode: RecordMode = RECORD_MODES[0]
    #: ``--ooda-record-failures``: ``once`` and ``new`` record a failed run as well.
    record_failures: bool = False
    #: ``--ooda-record-api``: live runs record their model calls into the scenario's
    #: cassette, all of them or the ones it lacks (``None``: not at all).
    record_api: ApiRecord | None = None
    #: ``--ooda-variant``: named settings every live scenario also runs under.
    variants: tuple[Variant, ...] = ()
    #: ``--ooda-repeat`` / ``ooda_repeat``; ``repeat_from_cli`` says whether it came
    #: from the command line, where it beats a scenario's own ``repeat:``.
    repeat: int | None = None
    repeat_from_cli: bool = False
    #: The results log's directory, which also holds ``expect.judge``'s grading cache
    #: (``None``: no log, no cache).
    results_dir: Path | None = None
    #: A directory to create with a ``.gitignore`` of ``*`` if a run writes into it
    #: first (the default ``.ooda/``), so nothing written there reaches a commit.
    ignore_dir: Path | None = None
    #: ``(K, N)`` of ``--ooda-shard K/N``, written into each record.
    shard: tuple[int, int] | None = None
    #: ``--ooda-max-concurrent``: at most this many runs at once per AI command or API.
    max_concurrent: int | None = None
    #: ``--ooda-resume``: skip the runs the results directory already holds.
    resume: bool = False
    #: ``--ooda-stop-early``: every ``success_rate`` gate stops early.
    stop_early: bool = False

    # -- collection and replays (the plugin's)
    builtin: bool = False
    drift: DriftMode = DRIFT_MODES[0]
    fragment_coverage: bool = False
    lint_severity: tuple[str, ...] = ()
    procedure_files: tuple[str, ...] = ()
    scenario_dir: Path | None = None
    replay_commands: ReplayCommands = REPLAY_COMMANDS[0]
    regrade: bool = False
    #: ``--ooda-replay``: how every scenario replays (``agent``: through the real agent
    #: when it has a cassette); ``None``: as each scenario's ``replay:`` says.
    replay: ReplayKind | None = None

    #: How command-line flags are spelled where a message names them (``--ooda-`` in
    #: pytest, ``--`` for ``ooda``).
    flag_prefix: str = "--ooda-"
    #: How messages and provenance name an option that is not spelled ``flag_prefix``
    #: + its name: ``ini option ooda_ai_cmd`` when the ini file set it, ``-s`` or
    #: ``--verbose`` for ``show_ai_output``.
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def runs_for(self, scenario_repeat: int | None) -> int:
        """How many times a live scenario runs: ``--ooda-repeat`` on the command line,
        else the scenario's ``repeat:``, else the ini key, else once."""
        if self.repeat is not None and self.repeat_from_cli:
            return self.repeat
        return scenario_repeat or self.repeat or 1

    def label(self, name: str) -> str:
        """How a message names option ``name``: its flag, or its ini key when the ini
        file set it."""
        return self.labels.get(name) or self.flag_prefix + name.replace("_", "-")

    def provenance(self, name: str) -> Provenance:
        """Where option ``name`` came from, as a run's settings record it: tier ``ini``
        or ``cli``, named as :meth:`label` names it."""
        from pytest_ooda.config import Provenance

        label = self.label(name)
        return Provenance("ini" if label.startswith("ini ") else "cli", source=label)

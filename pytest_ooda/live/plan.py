"""A live run, decided: :class:`RunPlan`, one frozen value per run, and
:func:`plan_run`, the one place where a session's options (command line, ini file), the
environment and the config files, the scenario and the variant are decided into it.

A plan holds everything a run needs and nothing of the process that decided it: the
procedure as composed for the run, its settings with where each came from (the agent
command or API and how its output is read, limits, budgets, retries, the sandbox), the
scenario (expectations, ``expect.judge``), the variant, the workspace to copy and the
repeat index, what the run keeps (record mode, results identity) and where the session
keeps its shared files. It pickles whole (read-only mappings as copies of their
contents), so :func:`~pytest_ooda.live.run_live` can run it in another process or on
another machine that has the same files, and its :attr:`~RunPlan.run_id` is a content
hash of what runs: two runs with the same id ran the same plan.

Deciding here and only here means a setting crosses these files from option to agent:
its row of the settings table (``settings/table.py``), which both front ends decide
into :class:`SessionSettings`; this module, which hands the run settings given to
``config/run_settings.py`` by their keyword; and ``live/run.py``, which hands the plan's
settings to the loop (``loop/runner.py``), which starts the agent with them.
"""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import io
import json
import pickle
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents import builtin_aliases
from pytest_ooda.errors import NoAICommandError
from pytest_ooda.settings import (
    CONFIG,
    CONTEXT,
    MAX_CONCURRENT,
    RECORD_API,
    RECORD_FAILURES,
    RECORD_MODE,
    SHARD,
    STOP_EARLY,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda._types import ApiMode, RecordMode
    from pytest_ooda.config import Config, Procedure, Provenance, RunSettings
    from pytest_ooda.errors import SandboxWarning
    from pytest_ooda.results import FragmentHash, RecordHead, RunKey, SessionStamp
    from pytest_ooda.scenario import MaterialDir, Scenario
    from pytest_ooda.settings import SessionSettings
    from pytest_ooda.variants import Variant

__all__ = ["NO_AI_COMMAND", "ApiPlan", "Portable", "RunPlan", "plan_run"]

NO_AI_COMMAND = (
    "no AI command configured for live runs; set one of:\n"
    "  - pytest --ooda-ai-cmd='my-cli -p' or --ooda-ai-cmd-alias=NAME "
    f"({', '.join(builtin_aliases())}, or your ai_cmd_aliases)\n"
    "  - OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment\n"
    "  - loop.ai_cmd, loop.ai_cmd_alias or loop.ai_api in ooda-config.yml "
    "(the workspace file, --ooda-config, or the global $OODA_CONFIG_HOME/ooda-config.yml)\n"
    "  - ai_cmd, ai_cmd_alias or ai_api on the procedure itself"
)


# --------------------------------------------------------------------------- pickling


def _mapping(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


def _reduce_mapping(mapping: MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    return _mapping, (dict(mapping),)


class _Pickler(pickle.Pickler):
    """Pickles a read-only mapping (``types.MappingProxyType``, which the frozen models
    use and :mod:`pickle` refuses) as a copy of its contents; for this pickler only,
    nothing global changes."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.dispatch_table = {**copyreg.dispatch_table, MappingProxyType: _reduce_mapping}


def _rebuild(cls: type[Any], data: bytes) -> Any:
    return cls(**pickle.loads(data))


class Portable:
    """A frozen dataclass that crosses processes whole, by any pickler (``pickle``,
    ``multiprocessing``, ``cloudpickle``): its fields travel as one inner pickle made by
    :class:`_Pickler`."""

    def __reduce__(self) -> tuple[Any, ...]:
        assert dataclasses.is_dataclass(self)
        state = {item.name: getattr(self, item.name) for item in dataclasses.fields(self)}
        buffer = io.BytesIO()
        _Pickler(buffer).dump(state)
        return _rebuild, (type(self), buffer.getvalue())


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class ApiPlan:
    """Whether a run's model calls go through the API proxy (``ooda help agent-replay``):
    ``record``, ``new`` or ``replay``, and the cassette; ``canary``: a replay that
    answers what the cassette lacks with its nearest exchange and keeps what the agent
    sent (``ooda canary``)."""

    mode: ApiMode
    cassette: Path
    canary: bool = False


def _api(session: SessionSettings, scenario: Scenario, record_to: Path | None) -> ApiPlan | None:
    """The proxy ``--ooda-record-api`` asks for: the scenario's cassette, recorded anew
    (``all``) or extended (``new``)."""
    path, mode = record_to or scenario.path, session[RECORD_API]
    if mode is None or path is None:
        return None
    # Only a run that records its API traffic loads the proxy's package.
    from pytest_ooda.apireplay import cassette_path

    return ApiPlan("record" if mode == "all" else "new", cassette_path(path))


@dataclass(frozen=True)
class RunPlan(Portable):
    """One live run, decided: what runs, where, and what it keeps."""

    #: The config as composed for this run (the environment's and the command line's
    #: tiers, the variant applied): an alias judge (``expect.judge``) resolves against it.
    config: Config
    #: The procedure that runs, as composed (a variant's model, parameters and fragment
    #: swaps applied).
    procedure: Procedure
    #: Limits, the agent (argv or HTTP API) and how its output is read, budgets,
    #: retries and sandbox, each with its provenance.
    settings: RunSettings
    #: Expectations (``expect``, ``expect.judge``) and the recording it may become.
    scenario: Scenario
    context: tuple[str, ...] = ()
    variant: Variant | None = None
    #: The sha256 of each fragment as rendered for this run.
    fragments: tuple[FragmentHash, ...] = ()
    #: The project root: workspaces lie inside it, records show paths relative to it.
    root: Path = field(default_factory=Path.cwd)
    #: The directory the run's fresh git repository is copied from (``None``: an empty
    #: one); ignored when ``workdir`` is set.
    workspace: Path | None = None
    #: Run in this directory itself, nothing copied (``ooda run``).
    workdir: Path | None = None
    #: This run's place among its scenario's repeats.
    run: int = 1
    runs: int = 1
    nodeid: str = ""
    record_mode: RecordMode = "none"
    #: ``--ooda-record-failures``: under ``once`` and ``new``, record a failed run (an
    #: ``error``, or the wrong status) too.
    record_failures: bool = False
    #: Where a recording goes (``None``: the scenario's own file).
    record_to: Path | None = None
    #: Whether the agent's model calls go through the API proxy, recorded into the
    #: scenario's cassette or answered from it (``None``: straight to the API;
    #: docs/agent-replay.md).
    api: ApiPlan | None = None
    #: The scenario belongs to an installed package: never recorded.
    read_only: bool = False
    #: Watch the workspace for what each iteration changed (the record's files and the
    #: transcript's diffs); off for a plain ``ooda run`` in the user's own tree.
    watch_workspace: bool = True
    stamp: SessionStamp | None = None
    #: The id of the ``error`` run this one makes again (``--ooda-resume``): reports
    #: count the two once.
    replaces: str | None = None
    shard: tuple[int, int] | None = None
    #: ``--ooda-stop-early``: the record states the gate as the session applies it.
    stop_early: bool = False
    #: The results directory, where ``expect.judge`` gradings are cached (``None``: not).
    judge_cache: Path | None = None
    ignore_dir: Path | None = None
    #: ``--ooda-max-concurrent`` runs per agent at once, counted in ``slots_dir``.
    max_concurrent: int | None = None
    slots_dir: Path | None = None
    #: Where the run's temporary directory is made (``None``: the system's).
    runs_dir: Path | None = None
    #: What deciding had to say (the unattended-agent note): the caller presents it.
    notes: tuple[SandboxWarning, ...] = ()
    #: The agent material the run installs into its workspace (a plugin, a ``.claude/``
    #: directory): the scenario's, else the config's; its files are part of the
    #: procedure's prompt identity (``procedure.material``).
    material: tuple[MaterialDir, ...] = ()
    #: Which prompt of the scenario's trigger set the run is (the record's ``trigger``).
    trigger: Mapping[str, Any] | None = None
    #: Why ``--ooda-changed`` runs this scenario live (its record's ``changed``):
    #: the revision, the reasons, how many scenarios replay instead.
    changed: Mapping[str, Any] | None = None
    #: Where the plan's own settings came from (``variant``, ``record_mode``,
    #: ``context``, ``workspace``); the run's are ``settings.provenance``.
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: MappingProxyType({}))

    def travelling(self) -> RunPlan:
        """This plan with its config cut to what a run reads of it — the loop's
        settings, the aliases, the redaction settings and its own procedure, not the
        project's and the built-ins' other procedures — for sending it to another
        process (a cluster's worker, a crashed xdist worker's controller)."""
        config = self.config
        name = self.procedure.name
        own = f"procedures.{name}."

        def kept(table: Mapping[str, Any]) -> MappingProxyType[str, Any]:
            return MappingProxyType(
                {key: value for key, value in table.items() if not key.startswith("procedures.")}
                | {key: value for key, value in table.items() if key.startswith(own)}
            )

        procedures = {name: config.procedures[name]} if name in config.procedures else {}
        cut = replace(
            config,
            procedures=MappingProxyType(procedures),
            broken=MappingProxyType({}),
            provenance=kept(config.provenance),
            locations=kept(config.locations),
        )
        return replace(self, config=cut)

    @property
    def label(self) -> str:
        """``procedure/scenario``, as messages name the run's scenario."""
        return self.scenario.label

    def identity(self) -> dict[str, Any]:
        """What makes two runs the same run, as JSON-ready data: the prompt (procedure,
        layout, each fragment as rendered, context), the agent and every limit, the
        scenario's expectations and workspace, the variant, and the repeat index. Where
        the session keeps its files, and its stamp, are not part of it."""
        from pytest_ooda._util import display_path

        settings = self.settings
        expect = self.scenario.expect
        return {
            "procedure": self.procedure.name,
            "prompt_format": self.procedure.prompt_format,
            "fragments": [fragment.to_json() for fragment in self.fragments],
            "context": list(self.context),
            "ai_cmd": list(settings.ai_cmd) if settings.ai_cmd is not None else None,
            "ai_api": repr(settings.ai_api) if settings.ai_api is not None else None,
            "ai_output": settings.ai_output,
            "limits": [
                settings.max_iterations,
                settings.iteration_timeout,
                settings.max_output_buffer,
                settings.failure_threshold,
                settings.max_cost,
                settings.max_tokens,
            ],
            "retry": dataclasses.astuple(settings.retry),
            "sandbox": repr(settings.sandbox),
            "scenario": self.scenario.label,
            "expect": expect.to_yaml() if expect is not None else None,
            "workspace": display_path(self.workspace, self.root) if self.workspace else None,
            "variant": self.variant.to_yaml() | {"name": self.variant.name}
            if self.variant is not None
            else None,
            "run": [self.run, self.runs],
        }

    @property
    def run_id(self) -> str:
        """A content hash of :meth:`identity`: the same for the same plan and repeat
        index, in any process."""
        text = json.dumps(self.identity(), sort_keys=True, default=str, ensure_ascii=True)
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]

    def results_key(self) -> RunKey | None:
        """What makes this run the same run as one a results log holds (procedure,
        scenario, variant, the sha256 of the first iteration's prompt, run number), for
        ``--ooda-resume``; ``None`` when the prompt cannot be composed before running."""
        from pytest_ooda.compose import assemble_prompt, prompt_sha256
        from pytest_ooda.errors import OodaError

        try:
            prompt = assemble_prompt(
                self.procedure,
                iteration=1,
                max_iterations=self.settings.max_iterations,
                context=self.context,
                # The run's workspace is a copy of this directory: the same context files.
                cwd=self.workdir or self.workspace or self.root,
            )
        except OodaError:
            return None
        variant = self.variant.name if self.variant is not None else None
        scenario = self.scenario
        sha = prompt_sha256(self.procedure, prompt)
        return (scenario.procedure, scenario.name, variant, sha, self.run)

    def head(self, *, worker: str | None = None) -> RecordHead:
        """What the run's record says before the run ends (``worker``: the xdist worker
        it runs on)."""
        from pytest_ooda._util import display_path
        from pytest_ooda.results import RecordHead, ai_identity

        expect = self.scenario.expect
        aggregate = expect.aggregate.to_yaml() if expect and expect.aggregate else None
        if self.stop_early and aggregate is not None and "success_rate" in aggregate:
            # The record states the gate as this session applied it.
            aggregate = {
                **aggregate,
                "success_rate": {**aggregate["success_rate"], "stop_early": True},
            }
        path = self.record_to or self.scenario.path
        return RecordHead(
            run_id=self.run_id,
            procedure=self.procedure.name,
            scenario=self.scenario.name,
            run=self.run,
            runs=self.runs,
            nodeid=self.nodeid,
            scenario_file=display_path(path, self.root) if path is not None else None,
            variant=self.variant.name if self.variant is not None else None,
            shard=f"{self.shard[0]}/{self.shard[1]}" if self.shard else None,
            worker=worker,
            fragments=self.fragments,
            ai=ai_identity(self.settings),
            # The per-run block as written; the aggregate keys have a field of their own.
            expect=replace(expect, aggregate=None).to_yaml() if expect is not None else None,
            aggregate_expect=MappingProxyType(aggregate) if aggregate is not None else None,
            stamp=self.stamp,
            replaces=self.replaces,
            changed=self.changed,
            trigger=self.trigger,
            variant_keys=tuple(self.variant.to_yaml()) if self.variant is not None else (),
            control=self.scenario.control,
        )


# --------------------------------------------------------------------------- deciding


def fragment_hashes(procedure: Procedure) -> tuple[FragmentHash, ...]:
    """The sha256 of every fragment as rendered (templates with their parameters), and
    of every file of agent material the run installs, so two result sets tell which
    fragments (or skills) differ between them."""
    from pytest_ooda._types import PHASES
    from pytest_ooda.compose import render_action
    from pytest_ooda.results import FragmentHash

    hashes = []
    phases = procedure.phases()
    for phase in PHASES:
        for index, action in enumerate(phases[phase]):
            text = render_action(action, procedure=procedure.name, phase=phase, index=index)
            digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
            hashes.append(FragmentHash(phase, index, action.source_label(), digest))
    # The agent material a run installs (a skill, a plugin) is part of the prompt too.
    for index, item in enumerate(procedure.material):
        hashes.append(FragmentHash(item.section, index, item.source, item.sha256))
    return tuple(hashes)


def plan_run(
    session: SessionSettings,
    procedure: str,
    scenario: Scenario,
    *,
    collected: Path | None = None,
    config: Config | None = None,
    variant: Variant | None = None,
    run: int = 1,
    runs: int = 1,
    nodeid: str = "",
    read_only: bool = False,
    record_to: Path | None = None,
    workdir: Path | None = None,
    stamp: SessionStamp | None = None,
    slots_dir: Path | None = None,
    runs_dir: Path | None = None,
    api: ApiPlan | None = None,
    require_ai: bool = True,
    trigger: str | None = None,
) -> RunPlan:
    """Decide run ``run`` of ``runs`` of ``scenario`` (procedure ``procedure``).

    The config is loaded from ``collected`` (the file the procedure was collected from,
    over the built-ins, the global file and the environment, with the session's prompt
    layout) unless ``config`` is given loaded already (``ooda run``); the variant's
    model, parameters and fragment swaps are applied to it, and when it names no agent
    at all the project's ``ooda-config.yml`` lends its ``loop:`` agent. Then the run's
    settings are resolved once: the variant's keys > the session's options > the
    scenario > the procedure > ``loop:``. ``workdir`` runs the plan in place instead of
    in a fresh copy of the scenario's workspace; ``record_to`` records to another file
    than the scenario's. The agent's model calls go through the API proxy as ``api``
    says (an agent replay), else as the session's ``record_api`` does. ``require_ai``
    off plans a run whose agent is the scenario's recording (``ooda run --replay``).
    ``trigger`` makes the run one prompt of the scenario's trigger set (``should-2``).

    Mistakes in the config or the scenario raise their located ``OodaError``; no agent
    configured raises ``NoAICommandError``.
    """
    from pytest_ooda.config import Provenance
    from pytest_ooda.sandbox import unattended_warning
    from pytest_ooda.scenario import workspace_of

    config = _config(session, procedure, variant, collected, config)
    config, scenario, material, case = _as_run(config, scenario, variant, trigger)
    settings = _settings(session, config, procedure, scenario, variant, require_ai=require_ai)
    settings = _with_material(settings, material)
    composed = config.procedure(procedure)
    workspace = None if workdir is not None else workspace_of(scenario, root=session.root)
    provenance: dict[str, Provenance] = {
        "record_mode": session.provenance("record_mode"),
        "context": session.provenance("context")
        if session[CONTEXT]
        else Provenance("scenario", file=scenario.path),
    }
    if variant is not None:
        provenance["variant"] = _variant_source(variant)
    if workspace is not None:
        provenance["workspace"] = Provenance("scenario", file=scenario.path)
    note = unattended_warning(settings.sandbox, settings.ai_cmd)
    return RunPlan(
        config=config,
        procedure=composed,
        settings=settings,
        scenario=scenario,
        context=session[CONTEXT] or scenario.context,
        variant=variant,
        fragments=fragment_hashes(composed),
        root=session.root,
        workspace=workspace,
        workdir=workdir,
        run=run,
        runs=runs,
        nodeid=nodeid,
        # A trigger set's prompt is never recorded: the set's file holds no one run.
        record_mode=session[RECORD_MODE] if case is None else "none",
        record_failures=session[RECORD_FAILURES],
        record_to=record_to,
        api=api if api is not None or case is not None else _api(session, scenario, record_to),
        read_only=read_only,
        watch_workspace=workdir is None or session[RECORD_MODE] != "none",
        stamp=stamp,
        shard=session[SHARD],
        stop_early=session[STOP_EARLY],
        judge_cache=session.results_dir,
        ignore_dir=session.ignore_dir,
        max_concurrent=session[MAX_CONCURRENT],
        slots_dir=slots_dir,
        runs_dir=runs_dir,
        notes=(note,) if note is not None else (),
        provenance=MappingProxyType(provenance),
        material=material if workdir is None else (),
        trigger=case,
    )


def _as_run(
    config: Config, scenario: Scenario, variant: Variant | None, trigger: str | None
) -> tuple[Config, Scenario, tuple[MaterialDir, ...], Mapping[str, Any] | None]:
    """The config and scenario as the run makes them (one trigger case's prompt; its
    ``prompt:`` passed through; its material's files in the prompt's identity), the
    material it installs and the record's ``trigger``."""
    from pytest_ooda.scenario import for_trigger, material_files, run_material, scenario_config

    case = _trigger(scenario, trigger)
    if trigger is not None:
        scenario = for_trigger(scenario, trigger)
    material = run_material(config, scenario, variant)
    return scenario_config(config, scenario, material_files(material)), scenario, material, case


def _trigger(scenario: Scenario, case: str | None) -> Mapping[str, Any] | None:
    """The record's ``trigger`` for case ``case`` of the scenario's trigger set."""
    triggers = scenario.triggers
    found = triggers.case(case) if triggers is not None and case is not None else None
    if triggers is None or found is None:
        return None
    from pytest_ooda.results import trigger_entry

    entry = trigger_entry(triggers.target, found.id, found.should_fire, found.prompt)
    return MappingProxyType(entry)


def _with_material(settings: RunSettings, material: tuple[MaterialDir, ...]) -> RunSettings:
    """``settings`` with the words the agent's command line needs for the installed
    material (a plugin's directory, the events that show a hook fire) — when the
    command runs the agent the material is for."""
    if not material or settings.ai_cmd is None:
        return settings
    from pytest_ooda.agents import agent_argv, install_argv

    extra = tuple(word for entry in material for word in install_argv(entry.section, entry.path))
    return replace(settings, ai_cmd=agent_argv(settings.ai_cmd, extra))


def _no_agent(config: Config, procedure: str) -> NoAICommandError:
    from pytest_ooda.config import no_ai_error

    error = no_ai_error(config, procedure)
    return NoAICommandError(error.message, hint=error.hint)


def _variant_source(variant: Variant) -> Provenance:
    from pytest_ooda.config import Provenance

    if variant.source is not None:
        return Provenance("variant", source=f"variant {variant.name} ({variant.source})")
    return Provenance("variant", source=f"variant {variant.name} (--ooda-variant)")


def _config(
    session: SessionSettings,
    procedure: str,
    variant: Variant | None,
    collected: Path | None,
    given: Config | None,
) -> Config:
    """The config as composed for the run."""
    from pytest_ooda.config import load_config
    from pytest_ooda.variants import apply_to_config

    config = given
    if config is None:
        overrides = session.config_overrides()
        if variant is not None and variant.prompt_format is not None:
            overrides = {**(overrides or {}), "prompt_format": variant.prompt_format}
        config = load_config(collected, cwd=session.root, overrides=overrides)
    if variant is not None:
        config = apply_to_config(config, procedure, variant)
    if collected is not None and not _names_an_agent(session, variant, config, procedure):
        config = _with_project_agent(session, config, collected)
    return config


def _names_an_agent(
    session: SessionSettings, variant: Variant | None, config: Config, procedure: str
) -> bool:
    proc, loop = config.procedure(procedure), config.loop
    overrides = session.run_overrides()
    given: tuple[str | None, ...] = (overrides.get("ai_cmd"), overrides.get("ai_cmd_alias"))
    if variant is not None:
        given += (variant.ai_cmd, variant.ai_cmd_alias)
    found = (
        proc.ai_cmd,
        proc.ai_cmd_alias,
        proc.ai_api,
        loop.ai_cmd,
        loop.ai_cmd_alias,
        loop.ai_api,
    )
    return any(value is not None for value in (*given, *found))


def _with_project_agent(session: SessionSettings, config: Config, collected: Path) -> Config:
    """``config`` with the ``loop:`` agent of the project's workspace config, when the
    procedure was collected from another file that names none (procedures kept in
    ``procedures/*.yml``, the agent in ``ooda-config.yml``)."""
    from pytest_ooda.config import CONFIG_FILENAME, Provenance, load_config

    candidate = session[CONFIG] or session.root / CONFIG_FILENAME
    if not candidate.is_file() or candidate.resolve() == collected.resolve():
        return config
    project = load_config(candidate, cwd=session.root)
    lent = {key: getattr(project.loop, key) for key in ("ai_cmd", "ai_cmd_alias")}
    lent = {key: value for key, value in lent.items() if value is not None}
    if not lent:
        return config
    key = next(iter(lent))  # ai_cmd before ai_cmd_alias, as resolution takes them
    provenance = dict(config.provenance)
    provenance[f"loop.{key}"] = project.provenance.get(f"loop.{key}", Provenance("workspace"))
    return replace(
        config,
        loop=replace(config.loop, **{key: lent[key]}),
        provenance=MappingProxyType(provenance),
    )


def _settings(
    session: SessionSettings,
    config: Config,
    procedure: str,
    scenario: Scenario,
    variant: Variant | None,
    *,
    require_ai: bool = True,
) -> RunSettings:
    """The run's settings, resolved once: the variant's keys beat the session's run
    settings (each handed by its ``resolve_run_settings`` keyword, as its row of the
    settings table names it), which beat the scenario, the procedure and ``loop:``."""
    from pytest_ooda.config import resolve_run_settings

    given = session.run_overrides()
    sources: dict[str, Provenance] = {
        keyword: session.provenance(name) for keyword, name in session.run.items()
    }
    sources["show_ai_output"] = session.provenance("show_ai_output")
    if variant is not None:
        source = _variant_source(variant)
        if variant.ai_cmd is not None:
            given.update(ai_cmd=variant.ai_cmd, ai_cmd_alias=None)
            sources["ai_cmd"] = source
        if variant.ai_cmd_alias is not None:
            given.update(ai_cmd=None, ai_cmd_alias=variant.ai_cmd_alias)
            sources["ai_cmd_alias"] = source
        for key in ("ai_output", "sandbox"):
            if getattr(variant, key) is not None:
                given[key] = getattr(variant, key)
                sources[key] = source
    settings = resolve_run_settings(
        config,
        procedure,
        show_ai_output=session.show_ai_output,
        scenario=scenario,
        sources=sources,
        require_ai=False,
        **given,
    )
    if require_ai and settings.ai_cmd is None and settings.ai_api is None:
        if session.front == "ooda":
            # `ooda run`: the library's message, with `ooda run`'s flags.
            raise _no_agent(config, procedure)
        raise NoAICommandError(NO_AI_COMMAND)
    if variant is not None and variant.model is not None and settings.ai_cmd is not None:
        raise variant.error(
            f"sets model {variant.model!r}, but the run uses an agent command "
            f"({' '.join(settings.ai_cmd)}), not ai_api",
            "give the variant an ai_cmd that selects the model, or run with ai_api",
        )
    return settings

"""Resolving what one run uses: iteration limit, failure threshold, timeouts, buffer, AI
backend, how its output is read, budgets, retries and sandbox, each with its provenance
— decided once per run, from the caller's overrides, the scenario, the procedure and
``loop:``."""

from __future__ import annotations

import shlex
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.agents import agent_for, infer_format, output_format
from pytest_ooda.config.model import (
    ApiSettings,
    Config,
    Provenance,
    RetrySettings,
    RunSettings,
)
from pytest_ooda.config.schema import BUILTIN_ALIASES
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from pytest_ooda._types import AiOutput
    from pytest_ooda.sandbox import SandboxSpec


def _split_command(command: str, provenance: Provenance, what: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ConfigError(
            f"cannot split {what} {command!r} into arguments: {exc}",
            file=display_path(provenance.file) if provenance.file else None,
            line=provenance.line,
        ) from None
    if not argv:
        raise ConfigError(f"{what} is empty")
    return argv


def no_ai_error(config: Config, procedure: str) -> ConfigError:
    """What to say when no agent is configured for ``procedure``: every way to set one."""
    ways = (
        "--ai-cmd 'my-cli --flag' or --ai-cmd-alias NAME (ooda run / pytest --ooda-ai-cmd)",
        "OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment",
        f"ai_cmd, ai_cmd_alias or ai_api in procedures.{procedure} of ooda-config.yml",
        "ai_cmd, ai_cmd_alias or ai_api under loop: in ooda-config.yml "
        "(workspace or global config)",
    )
    hint = "set one of:\n" + "\n".join(f"    - {way}" for way in ways)
    hint += "\n  known aliases: " + ", ".join(sorted(config.aliases))
    return ConfigError(f"no AI command configured for procedure {procedure!r}", hint=hint)


def infer_ai_output(argv: Sequence[str]) -> AiOutput | None:
    """The output format an agent CLI's own flags ask for, as the agent that claims the
    command says (``pytest_ooda.agents.infer_format``); ``None`` when they say nothing."""
    return infer_format(argv)


class ScenarioTier(Protocol):
    """What a scenario sets for its runs, above the procedure and ``loop:`` (a
    :class:`pytest_ooda.scenario.Scenario` is one; config does not import it)."""

    @property
    def path(self) -> Path | None: ...
    @property
    def max_iterations(self) -> int | None: ...
    @property
    def failure_threshold(self) -> int | None: ...
    @property
    def max_cost(self) -> float | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def retry(self) -> RetrySettings | None: ...
    @property
    def sandbox(self) -> SandboxSpec | None: ...


#: How ``ooda run`` spells each override: the source a ``cli`` provenance names, unless
#: the caller names its own (``sources``).
FLAGS = MappingProxyType(
    {
        "max_iterations": "--max-iterations",
        "unlimited": "--unlimited",
        "ai_cmd": "--ai-cmd",
        "ai_cmd_alias": "--ai-cmd-alias",
        "ai_output": "--ai-output",
        "max_cost": "--max-cost",
        "max_tokens": "--max-tokens",
        "failure_threshold": "failure_threshold",
        "iteration_timeout": "iteration_timeout",
        "max_output_buffer": "max_output_buffer",
        "show_ai_output": "--verbose",
        "retry": "retry",
        "retries": "--retries",
        "sandbox": "--sandbox",
    }
)


class _Sources:
    """Where each value of one resolution comes from: the caller's overrides (as the
    caller names them), the scenario, the procedure, ``loop:``, the defaults."""

    def __init__(
        self,
        config: Config,
        procedure: str,
        scenario: ScenarioTier | None,
        given: Mapping[str, Provenance] | None,
    ) -> None:
        self.config = config
        self.procedure = procedure
        self.scenario = Provenance("scenario", file=scenario.path if scenario else None)
        self.given = given or {}

    def cli(self, key: str) -> Provenance:
        return self.given.get(key) or Provenance("cli", source=FLAGS[key])

    def label(self, key: str) -> str:
        """How a message names the override ``key``: its flag or option."""
        source = self.cli(key)
        return source.source or str(source)

    def proc(self, key: str) -> Provenance:
        return self.config.provenance.get(f"procedures.{self.procedure}.{key}", _DEFAULT)

    def loop(self, key: str) -> Provenance:
        return self.config.provenance.get(f"loop.{key}", _DEFAULT)


_DEFAULT = Provenance("default")


def _first(
    candidates: Sequence[tuple[Any, Provenance]], default: tuple[Any, Provenance]
) -> tuple[Any, Provenance]:
    """The first value that is set, with where it came from."""
    for value, source in candidates:
        if value is not None:
            return value, source
    return default


def _min_budget(
    candidates: Sequence[tuple[float | int | None, Provenance]],
) -> tuple[float | int | None, Provenance | None]:
    """The smallest budget that is set, with where it came from: every budget applies."""
    chosen: tuple[float | int | None, Provenance | None] = (None, None)
    for value, source in candidates:
        if value is not None and (chosen[0] is None or value < chosen[0]):
            chosen = (value, source)
    return chosen


def resolve_run_settings(
    config: Config,
    procedure: str,
    *,
    max_iterations: int | None = None,
    unlimited: bool = False,
    ai_cmd: str | None = None,
    ai_cmd_alias: str | None = None,
    require_ai: bool = True,
    agent: bool = True,
    ai_output: AiOutput | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    failure_threshold: int | None = None,
    iteration_timeout: float | None = None,
    max_output_buffer: int | None = None,
    show_ai_output: bool | None = None,
    retry: RetrySettings | None = None,
    retries: int | None = None,
    sandbox: str | None = None,
    scenario: ScenarioTier | None = None,
    sources: Mapping[str, Provenance] | None = None,
) -> RunSettings:
    """Resolve everything one run of ``procedure`` uses, each with its provenance: the
    one place a run's settings are decided.

    The keyword arguments are the caller's overrides (``ooda run``'s flags, the plugin's
    options, a variant's keys), above everything else; ``sources`` says where each one
    came from (by default ``ooda run``'s flag, tier ``cli``). ``scenario`` is the
    scenario tier, between the overrides and the procedure.

    Iterations: ``max_iterations`` > ``unlimited`` > scenario > procedure > ``loop``.
    Failure threshold: override > scenario > ``loop``. Timeout and buffer: override >
    procedure > ``loop``. AI: ``ai_cmd`` > ``ai_cmd_alias`` > procedure ``ai_cmd`` >
    ``ai_cmd_alias`` > ``ai_api`` > loop ``ai_cmd`` > ``ai_cmd_alias`` > ``ai_api``.
    Output format: ``ai_output`` > procedure > loop > the command's own flags > the
    built-in alias's default > ``text``. Budgets: the smallest of the override's, the
    scenario's, the procedure's and the loop's. Retries: ``retry`` > scenario >
    procedure > loop, with ``retries`` replacing the attempts. Prompt layout: as the
    config decided it (``Procedure.prompt_format``). Sandbox: see
    :func:`resolve_sandbox` (``sandbox`` is a kind named by the caller). ``agent=False``
    leaves the agent out (no command, no API): for what needs only the limits, such as
    a prompt shown or snapshotted, which an alias defined elsewhere must not stop.
    """
    proc = config.procedure(procedure)
    where = _Sources(config, procedure, scenario, sources)
    out: dict[str, Provenance] = {}
    limit, out["max_iterations"] = _iterations(
        config, procedure, where, scenario, max_iterations, unlimited
    )
    threshold, timeout, buffer, show = _limits(
        config,
        where,
        out,
        scenario,
        failure_threshold=failure_threshold,
        iteration_timeout=iteration_timeout,
        max_output_buffer=max_output_buffer,
        show_ai_output=show_ai_output,
    )
    out["prompt_format"] = proc.prompt_format_source
    argv: tuple[str, ...] | None = None
    api: ApiSettings | None = None
    output: AiOutput = "text"
    if agent:
        argv, api, output = _agent(config, procedure, where, out, ai_cmd, ai_cmd_alias, ai_output)
    if argv is None and api is None and require_ai:
        raise no_ai_error(config, procedure)
    cost, tokens = _budgets(config, procedure, where, out, scenario, max_cost, max_tokens)
    spec, out["sandbox"] = resolve_sandbox(
        config,
        procedure,
        scenario.sandbox if scenario else None,
        cli=sandbox,
        cli_source=where.cli("sandbox") if sandbox is not None else None,
    )
    chosen_retry, out["retry"] = _retry(config, procedure, where, scenario, retry, retries)
    return RunSettings(
        max_iterations=limit,
        iteration_timeout=timeout,
        max_output_buffer=buffer,
        failure_threshold=threshold,
        show_ai_output=show,
        ai_cmd=argv,
        ai_api=api,
        provenance=MappingProxyType(out),
        ai_output=output,
        max_cost=float(cost) if cost is not None else None,
        max_tokens=int(tokens) if tokens is not None else None,
        prompt_format=proc.prompt_format,
        sandbox=spec,
        retry=chosen_retry,
    )


def _iterations(
    config: Config,
    procedure: str,
    where: _Sources,
    scenario: ScenarioTier | None,
    given: int | None,
    unlimited: bool,
) -> tuple[int | None, Provenance]:
    """The iteration limit (``None``: unlimited) and where it came from."""
    proc = config.procedure(procedure)
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise ConfigError(
                f"{where.label('max_iterations')}: expected an integer >= 1, got {given!r}"
            )
        return given, where.cli("max_iterations")
    if unlimited:
        return None, where.cli("unlimited")
    if scenario is not None and scenario.max_iterations is not None:
        return scenario.max_iterations, where.scenario
    if proc.iteration_mode is not None:
        mode, mode_prov = proc.iteration_mode, where.proc("iteration_mode")
    elif proc.default_max_iterations is not None:
        mode, mode_prov = "max-iterations", where.proc("default_max_iterations")
    else:
        mode, mode_prov = config.loop.iteration_mode, where.loop("iteration_mode")
    if mode == "unlimited":
        return None, mode_prov
    if proc.default_max_iterations is not None:
        return proc.default_max_iterations, where.proc("default_max_iterations")
    return config.loop.default_max_iterations, where.loop("default_max_iterations")


def _limits(
    config: Config,
    where: _Sources,
    out: dict[str, Provenance],
    scenario: ScenarioTier | None,
    *,
    failure_threshold: int | None,
    iteration_timeout: float | None,
    max_output_buffer: int | None,
    show_ai_output: bool | None,
) -> tuple[int, float | None, int, bool]:
    """The failure threshold, iteration timeout, output buffer and whether the output
    is shown; their provenance goes into ``out``."""
    proc = config.procedure(where.procedure)
    loop = config.loop
    threshold, out["failure_threshold"] = _first(
        [
            (failure_threshold, where.cli("failure_threshold")),
            (scenario.failure_threshold if scenario else None, where.scenario),
        ],
        (loop.failure_threshold, where.loop("failure_threshold")),
    )
    if threshold < 1:
        raise ValueError("failure_threshold must be >= 1")
    timeout, out["iteration_timeout"] = _first(
        [
            (iteration_timeout, where.cli("iteration_timeout")),
            (proc.iteration_timeout, where.proc("iteration_timeout")),
        ],
        (loop.iteration_timeout, where.loop("iteration_timeout")),
    )
    buffer, out["max_output_buffer"] = _first(
        [
            (max_output_buffer, where.cli("max_output_buffer")),
            (proc.max_output_buffer, where.proc("max_output_buffer")),
        ],
        (loop.max_output_buffer, where.loop("max_output_buffer")),
    )
    show, out["show_ai_output"] = _first(
        [(show_ai_output, where.cli("show_ai_output"))],
        (loop.show_ai_output, where.loop("show_ai_output")),
    )
    return threshold, timeout, buffer, show


def _agent(
    config: Config,
    procedure: str,
    where: _Sources,
    out: dict[str, Provenance],
    ai_cmd: str | None,
    ai_cmd_alias: str | None,
    ai_output: AiOutput | None,
) -> tuple[tuple[str, ...] | None, ApiSettings | None, AiOutput]:
    """The agent command (argv) or HTTP API, and how its output is read; their
    provenance goes into ``out``."""
    proc = config.procedure(procedure)
    loop = config.loop

    def alias_command(alias: str, source: Provenance, what: str) -> tuple[str, ...]:
        if alias not in config.aliases:
            # Loading only warned (show and lint need no alias); the run needs it.
            where = config.locations.get(
                "loop.ai_cmd_alias"
                if what == "loop.ai_cmd_alias"
                else f"procedures.{procedure}.ai_cmd_alias"
            )
            located = where is not None and source.file is not None
            raise ConfigError(
                f"{what}: unknown AI command alias {alias!r}",
                file=where.file if located and where is not None else None,
                line=where.line if located and where is not None else None,
                column=where.column if located and where is not None else None,
                hint=did_you_mean(alias, config.aliases, label="known aliases"),
            )
        alias_prov = config.provenance.get(f"aliases.{alias}", _DEFAULT)
        return _split_command(
            config.aliases[alias], alias_prov if alias_prov.file else source, f"alias {alias}"
        )

    argv: tuple[str, ...] | None = None
    api: ApiSettings | None = None
    alias_used: str | None = None  # the alias the command came from, if any
    if ai_cmd is not None:
        out["ai_cmd"] = where.cli("ai_cmd")
        argv = _split_command(ai_cmd, out["ai_cmd"], where.label("ai_cmd"))
    elif ai_cmd_alias is not None:
        out["ai_cmd"] = where.cli("ai_cmd_alias")
        argv = alias_command(ai_cmd_alias, out["ai_cmd"], where.label("ai_cmd_alias"))
        alias_used = ai_cmd_alias
    elif proc.ai_cmd is not None:
        out["ai_cmd"] = where.proc("ai_cmd")
        argv = _split_command(proc.ai_cmd, out["ai_cmd"], "ai_cmd")
    elif proc.ai_cmd_alias is not None:
        out["ai_cmd"] = where.proc("ai_cmd_alias")
        argv = alias_command(
            proc.ai_cmd_alias, out["ai_cmd"], f"procedure {procedure}: ai_cmd_alias"
        )
        alias_used = proc.ai_cmd_alias
    elif proc.ai_api is not None:
        api, out["ai_api"] = proc.ai_api, where.proc("ai_api")
    elif loop.ai_cmd is not None:
        out["ai_cmd"] = where.loop("ai_cmd")
        argv = _split_command(loop.ai_cmd, out["ai_cmd"], "loop.ai_cmd")
    elif loop.ai_cmd_alias is not None:
        out["ai_cmd"] = where.loop("ai_cmd_alias")
        argv = alias_command(loop.ai_cmd_alias, out["ai_cmd"], "loop.ai_cmd_alias")
        alias_used = loop.ai_cmd_alias
    elif loop.ai_api is not None:
        api, out["ai_api"] = loop.ai_api, where.loop("ai_api")
    output, out["ai_output"] = _resolve_output(
        config, procedure, where, ai_output, argv, alias_used
    )
    if argv is not None and alias_used is not None:
        argv = _with_output_flags(config, alias_used, argv, output)
    return argv, api, output


def _budgets(
    config: Config,
    procedure: str,
    where: _Sources,
    out: dict[str, Provenance],
    scenario: ScenarioTier | None,
    max_cost: float | None,
    max_tokens: int | None,
) -> tuple[float | int | None, float | int | None]:
    """The run's cost and token budgets: the smallest set of each; provenance into
    ``out`` when one is set."""
    proc = config.procedure(procedure)
    cost, cost_source = _min_budget(
        [
            (max_cost, where.cli("max_cost")),
            (scenario.max_cost if scenario else None, where.scenario),
            (proc.max_cost, where.proc("max_cost")),
            (config.loop.max_cost, where.loop("max_cost")),
        ]
    )
    tokens, tokens_source = _min_budget(
        [
            (max_tokens, where.cli("max_tokens")),
            (scenario.max_tokens if scenario else None, where.scenario),
            (proc.max_tokens, where.proc("max_tokens")),
            (config.loop.max_tokens, where.loop("max_tokens")),
        ]
    )
    if cost_source is not None:
        out["max_cost"] = cost_source
    if tokens_source is not None:
        out["max_tokens"] = tokens_source
    return cost, tokens


def _retry(
    config: Config,
    procedure: str,
    where: _Sources,
    scenario: ScenarioTier | None,
    given: RetrySettings | None,
    retries: int | None,
) -> tuple[RetrySettings, Provenance]:
    """How an iteration the infrastructure spoiled is tried again, and where that came
    from (``retries`` replaces the attempts of whichever ``retry:`` applies)."""
    chosen, source = _first(
        [
            (given, where.cli("retry")),
            (scenario.retry if scenario else None, where.scenario),
            (config.procedure(procedure).retry, where.proc("retry")),
            (config.loop.retry, where.loop("retry")),
        ],
        (RetrySettings(), _DEFAULT),
    )
    if retries is not None:
        if retries < 0:
            raise ValueError("retries must be >= 0")
        chosen, source = replace(chosen, attempts=retries), where.cli("retries")
    return chosen, source


def resolve_sandbox(
    config: Config,
    procedure: str,
    scenario: SandboxSpec | None = None,
    *,
    cli: str | None = None,
    cli_source: Provenance | None = None,
) -> tuple[SandboxSpec | None, Provenance]:
    """The sandbox a run of ``procedure`` uses (``None``: none) and where it came from;
    see :func:`resolve_run_settings`. ``cli`` is a kind named on the command line
    (``--ooda-sandbox``), above everything, from ``cli_source``. A kind named alone keeps
    the options a lower setting gives the same kind."""
    proc = config.procedure(procedure)
    loop = config.loop.sandbox
    loop_prov = config.provenance.get("loop.sandbox", Provenance("default"))
    proc_prov = config.provenance.get(f"procedures.{procedure}.sandbox", Provenance("default"))
    ordered: list[tuple[SandboxSpec | None, Provenance]] = [
        (scenario, Provenance("scenario")),
        (proc.sandbox, proc_prov),
        (loop, loop_prov),
    ]
    if loop is not None and loop_prov.tier == "cli":
        ordered.insert(0, ordered.pop())
    if cli is not None:
        from pytest_ooda.sandbox import SandboxSpec

        source = cli_source or Provenance("cli", source="--ooda-sandbox")
        ordered.insert(0, (SandboxSpec(cli), source))
    chosen = [(spec, source) for spec, source in ordered if spec is not None]
    if not chosen:
        return None, Provenance("default")
    spec, source = chosen[0]
    for lower, _ in chosen[1:]:
        spec = spec.under(lower)
    return spec, source


def _resolve_output(
    config: Config,
    procedure: str,
    where: _Sources,
    given: AiOutput | None,
    argv: tuple[str, ...] | None,
    alias: str | None,
) -> tuple[AiOutput, Provenance]:
    """``ai_output`` for the run, and where it came from (see ``resolve_run_settings``)."""
    if given is not None:
        output_format(given)  # a ConfigError naming the known formats
        return given, where.cli("ai_output")
    proc = config.procedure(procedure)
    if proc.ai_output is not None:
        return proc.ai_output, config.provenance.get(
            f"procedures.{procedure}.ai_output", Provenance("default")
        )
    if config.loop.ai_output is not None:
        return config.loop.ai_output, config.provenance.get("loop.ai_output", Provenance("default"))
    if argv is None:
        return "text", Provenance("default")
    inferred = infer_ai_output(argv)
    if inferred is not None:
        return inferred, Provenance("default", source="the command's own flags")
    default = builtin_alias_output(config, alias)
    if default is not None:
        return default, Provenance("default", source=f"built-in alias {alias}")
    return "text", Provenance("default")


def builtin_alias_output(config: Config, alias: str | None) -> AiOutput | None:
    """How a built-in alias's agent is read when nothing says (its first format), while
    no config file has redefined the alias; ``None`` otherwise."""
    if alias is None or not _is_builtin_alias(config, alias):
        return None
    agent = agent_for(shlex.split(config.aliases[alias]))
    return agent.alias_format if agent.alias == alias else None


def _is_builtin_alias(config: Config, alias: str) -> bool:
    """Whether ``alias`` still runs the built-in command (no config file redefined it)."""
    return config.aliases.get(alias) == BUILTIN_ALIASES.get(alias)


def _with_output_flags(
    config: Config, alias: str, argv: tuple[str, ...], output: AiOutput
) -> tuple[str, ...]:
    """A built-in alias's command with the flags that make it print ``output``, unless
    it already says what to print."""
    if not _is_builtin_alias(config, alias) or infer_ai_output(argv) is not None:
        return argv
    agent = agent_for(argv)
    chosen = agent.format_named(output) if agent.alias == alias else None
    if chosen is None or not chosen.flags:
        return argv
    return (*argv, *chosen.flags)

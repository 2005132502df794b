"""Resolving what one run uses: iteration limit, timeouts, buffer, AI backend, how its
output is read, and budgets, each with its provenance."""

from __future__ import annotations

import os
import shlex
from types import MappingProxyType
from typing import TYPE_CHECKING

from pytest_ooda._types import AI_OUTPUTS
from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.config.model import (
    ApiSettings,
    Config,
    Provenance,
    RetrySettings,
    RunSettings,
)
from pytest_ooda.config.schema import ALIAS_OUTPUT_FLAGS, BUILTIN_ALIAS_OUTPUTS, BUILTIN_ALIASES
from pytest_ooda.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def _no_ai_error(config: Config, procedure: str) -> ConfigError:
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
    """The output format an agent CLI's own flags ask for: ``claude … --output-format
    stream-json`` prints ``claude-stream-json``, ``codex exec --json`` ``codex-json``;
    ``None`` for any other command."""
    if not argv:
        return None
    program = os.path.basename(argv[0])
    if program == "claude":
        for index, arg in enumerate(argv):
            if arg == "--output-format" and index + 1 < len(argv):
                value = argv[index + 1]
            elif arg.startswith("--output-format="):
                value = arg.partition("=")[2]
            else:
                continue
            if value == "json":
                return "claude-json"
            return "claude-stream-json" if value == "stream-json" else "text"
    elif program == "codex" and "exec" in argv and "--json" in argv:
        return "codex-json"
    return None


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
    ai_output: AiOutput | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    scenario_sandbox: SandboxSpec | None = None,
) -> RunSettings:
    """Resolve the iteration limit, timeouts and AI backend for one run of ``procedure``.

    Iterations: ``max_iterations`` > ``unlimited`` > procedure > ``loop`` > default.
    AI: ``ai_cmd`` > ``ai_cmd_alias`` > procedure ``ai_cmd`` > ``ai_cmd_alias`` >
    ``ai_api`` > loop ``ai_cmd`` > ``ai_cmd_alias`` > ``ai_api``.
    Output format: ``ai_output`` > procedure > loop > the command's own flags > the
    built-in alias's default > ``text``. Budgets: the smallest of ``max_cost`` (or
    ``max_tokens``), the procedure's and the loop's.
    Prompt layout: as the config decided it (``Procedure.prompt_format``).
    Sandbox: a ``cli`` override of ``loop.sandbox`` (``--ooda-sandbox``, ``ooda run
    --sandbox``) > ``scenario_sandbox`` > procedure > ``loop`` (``OODA_SANDBOX`` > files).
    """
    proc = config.procedure(procedure)
    prov = config.provenance
    cli = Provenance("cli")
    default = Provenance("default")

    def from_proc(key: str) -> Provenance:
        return prov.get(f"procedures.{procedure}.{key}", default)

    def from_loop(key: str) -> Provenance:
        return prov.get(f"loop.{key}", default)

    out: dict[str, Provenance] = {}
    limit: int | None
    if max_iterations is not None:
        if (
            isinstance(max_iterations, bool)
            or not isinstance(max_iterations, int)
            or max_iterations < 1
        ):
            raise ConfigError(f"--max-iterations: expected an integer >= 1, got {max_iterations!r}")
        limit, out["max_iterations"] = max_iterations, Provenance("cli", source="--max-iterations")
    elif unlimited:
        limit, out["max_iterations"] = None, Provenance("cli", source="--unlimited")
    else:
        if proc.iteration_mode is not None:
            mode, mode_prov = proc.iteration_mode, from_proc("iteration_mode")
        elif proc.default_max_iterations is not None:
            mode, mode_prov = "max-iterations", from_proc("default_max_iterations")
        else:
            mode, mode_prov = config.loop.iteration_mode, from_loop("iteration_mode")
        if mode == "unlimited":
            limit, out["max_iterations"] = None, mode_prov
        elif proc.default_max_iterations is not None:
            limit = proc.default_max_iterations
            out["max_iterations"] = from_proc("default_max_iterations")
        else:
            limit = config.loop.default_max_iterations
            out["max_iterations"] = from_loop("default_max_iterations")

    timeout: int | None
    if proc.iteration_timeout is not None:
        timeout, out["iteration_timeout"] = proc.iteration_timeout, from_proc("iteration_timeout")
    else:
        timeout, out["iteration_timeout"] = (
            config.loop.iteration_timeout,
            from_loop("iteration_timeout"),
        )
    if proc.max_output_buffer is not None:
        buffer, out["max_output_buffer"] = proc.max_output_buffer, from_proc("max_output_buffer")
    else:
        buffer, out["max_output_buffer"] = (
            config.loop.max_output_buffer,
            from_loop("max_output_buffer"),
        )
    out["failure_threshold"] = from_loop("failure_threshold")
    out["show_ai_output"] = from_loop("show_ai_output")
    out["prompt_format"] = proc.prompt_format_source

    def alias_command(alias: str, source: Provenance, where: str) -> tuple[str, ...]:
        if alias not in config.aliases:
            raise ConfigError(
                f"{where}: unknown AI command alias {alias!r}",
                hint=did_you_mean(alias, config.aliases, label="known aliases"),
            )
        alias_prov = prov.get(f"aliases.{alias}", default)
        return _split_command(
            config.aliases[alias], alias_prov if alias_prov.file else source, f"alias {alias}"
        )

    argv: tuple[str, ...] | None = None
    api: ApiSettings | None = None
    alias_used: str | None = None  # the alias the command came from, if any
    if ai_cmd is not None:
        argv, out["ai_cmd"] = (
            _split_command(ai_cmd, cli, "--ai-cmd"),
            Provenance("cli", source="--ai-cmd"),
        )
    elif ai_cmd_alias is not None:
        source = Provenance("cli", source="--ai-cmd-alias")
        argv, out["ai_cmd"] = alias_command(ai_cmd_alias, source, "--ai-cmd-alias"), source
        alias_used = ai_cmd_alias
    elif proc.ai_cmd is not None:
        argv = _split_command(proc.ai_cmd, from_proc("ai_cmd"), "ai_cmd")
        out["ai_cmd"] = from_proc("ai_cmd")
    elif proc.ai_cmd_alias is not None:
        source = from_proc("ai_cmd_alias")
        argv = alias_command(proc.ai_cmd_alias, source, f"procedure {procedure}: ai_cmd_alias")
        out["ai_cmd"] = source
        alias_used = proc.ai_cmd_alias
    elif proc.ai_api is not None:
        api, out["ai_api"] = proc.ai_api, from_proc("ai_api")
    elif config.loop.ai_cmd is not None:
        argv = _split_command(config.loop.ai_cmd, from_loop("ai_cmd"), "loop.ai_cmd")
        out["ai_cmd"] = from_loop("ai_cmd")
    elif config.loop.ai_cmd_alias is not None:
        source = from_loop("ai_cmd_alias")
        argv = alias_command(config.loop.ai_cmd_alias, source, "loop.ai_cmd_alias")
        out["ai_cmd"] = source
        alias_used = config.loop.ai_cmd_alias
    elif config.loop.ai_api is not None:
        api, out["ai_api"] = config.loop.ai_api, from_loop("ai_api")
    elif require_ai:
        raise _no_ai_error(config, procedure)

    output, out["ai_output"] = _resolve_output(config, procedure, ai_output, argv, alias_used)
    if argv is not None and alias_used is not None:
        argv = _with_output_flags(config, alias_used, argv, output)
    cost, cost_source = _min_budget(
        [
            (max_cost, Provenance("cli", source="--max-cost")),
            (proc.max_cost, from_proc("max_cost")),
            (config.loop.max_cost, from_loop("max_cost")),
        ]
    )
    tokens, tokens_source = _min_budget(
        [
            (max_tokens, Provenance("cli", source="--max-tokens")),
            (proc.max_tokens, from_proc("max_tokens")),
            (config.loop.max_tokens, from_loop("max_tokens")),
        ]
    )
    sandbox, out["sandbox"] = resolve_sandbox(config, procedure, scenario_sandbox)
    if cost_source is not None:
        out["max_cost"] = cost_source
    if tokens_source is not None:
        out["max_tokens"] = tokens_source

    return RunSettings(
        max_iterations=limit,
        iteration_timeout=timeout,
        max_output_buffer=buffer,
        failure_threshold=config.loop.failure_threshold,
        show_ai_output=config.loop.show_ai_output,
        ai_cmd=argv,
        ai_api=api,
        provenance=MappingProxyType(out),
        ai_output=output,
        max_cost=float(cost) if cost is not None else None,
        max_tokens=int(tokens) if tokens is not None else None,
        prompt_format=proc.prompt_format,
        sandbox=sandbox,
        retry=proc.retry or config.loop.retry or RetrySettings(),
    )


def resolve_sandbox(
    config: Config,
    procedure: str,
    scenario: SandboxSpec | None = None,
    *,
    cli: str | None = None,
) -> tuple[SandboxSpec | None, Provenance]:
    """The sandbox a run of ``procedure`` uses (``None``: none) and where it came from;
    see :func:`resolve_run_settings`. ``cli`` is a kind named on the command line
    (``--ooda-sandbox``), above everything. A kind named alone keeps the options a
    lower setting gives the same kind."""
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

        ordered.insert(0, (SandboxSpec(cli), Provenance("cli", source="--ooda-sandbox")))
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
    given: AiOutput | None,
    argv: tuple[str, ...] | None,
    alias: str | None,
) -> tuple[AiOutput, Provenance]:
    """``ai_output`` for the run, and where it came from (see ``resolve_run_settings``)."""
    if given is not None:
        if given not in AI_OUTPUTS:
            raise ConfigError(
                f"ai_output: expected one of {', '.join(AI_OUTPUTS)}, got {given!r}",
                hint=did_you_mean(given, AI_OUTPUTS, label="known formats"),
            )
        return given, Provenance("cli", source="--ai-output")
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
    if alias is not None and _is_builtin_alias(config, alias) and alias in BUILTIN_ALIAS_OUTPUTS:
        return BUILTIN_ALIAS_OUTPUTS[alias], Provenance("default", source=f"built-in alias {alias}")
    return "text", Provenance("default")


def _is_builtin_alias(config: Config, alias: str) -> bool:
    """Whether ``alias`` still runs the built-in command (no config file redefined it)."""
    return config.aliases.get(alias) == BUILTIN_ALIASES.get(alias)


def _with_output_flags(
    config: Config, alias: str, argv: tuple[str, ...], output: AiOutput
) -> tuple[str, ...]:
    """A built-in alias's command with the flags that make it print ``output``, unless
    it already says what to print."""
    flags = ALIAS_OUTPUT_FLAGS.get(alias, {}).get(output)
    if not flags or not _is_builtin_alias(config, alias) or infer_ai_output(argv) is not None:
        return argv
    return (*argv, *flags)

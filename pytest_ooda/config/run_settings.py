"""Resolving what one run uses: iteration limit, timeouts, buffer and AI backend,
each with its provenance."""

from __future__ import annotations

import shlex
from types import MappingProxyType

from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.config.model import ApiSettings, Config, Provenance, RunSettings
from pytest_ooda.errors import ConfigError


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


def resolve_run_settings(
    config: Config,
    procedure: str,
    *,
    max_iterations: int | None = None,
    unlimited: bool = False,
    ai_cmd: str | None = None,
    ai_cmd_alias: str | None = None,
    require_ai: bool = True,
) -> RunSettings:
    """Resolve the iteration limit, timeouts and AI backend for one run of ``procedure``.

    Iterations: ``max_iterations`` > ``unlimited`` > procedure > ``loop`` > default.
    AI: ``ai_cmd`` > ``ai_cmd_alias`` > procedure ``ai_cmd`` > ``ai_cmd_alias`` >
    ``ai_api`` > loop ``ai_cmd`` > ``ai_cmd_alias`` > ``ai_api``.
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
    if ai_cmd is not None:
        argv, out["ai_cmd"] = (
            _split_command(ai_cmd, cli, "--ai-cmd"),
            Provenance("cli", source="--ai-cmd"),
        )
    elif ai_cmd_alias is not None:
        source = Provenance("cli", source="--ai-cmd-alias")
        argv, out["ai_cmd"] = alias_command(ai_cmd_alias, source, "--ai-cmd-alias"), source
    elif proc.ai_cmd is not None:
        argv = _split_command(proc.ai_cmd, from_proc("ai_cmd"), "ai_cmd")
        out["ai_cmd"] = from_proc("ai_cmd")
    elif proc.ai_cmd_alias is not None:
        source = from_proc("ai_cmd_alias")
        argv = alias_command(proc.ai_cmd_alias, source, f"procedure {procedure}: ai_cmd_alias")
        out["ai_cmd"] = source
    elif proc.ai_api is not None:
        api, out["ai_api"] = proc.ai_api, from_proc("ai_api")
    elif config.loop.ai_cmd is not None:
        argv = _split_command(config.loop.ai_cmd, from_loop("ai_cmd"), "loop.ai_cmd")
        out["ai_cmd"] = from_loop("ai_cmd")
    elif config.loop.ai_cmd_alias is not None:
        source = from_loop("ai_cmd_alias")
        argv = alias_command(config.loop.ai_cmd_alias, source, "loop.ai_cmd_alias")
        out["ai_cmd"] = source
    elif config.loop.ai_api is not None:
        api, out["ai_api"] = config.loop.ai_api, from_loop("ai_api")
    elif require_ai:
        raise _no_ai_error(config, procedure)

    return RunSettings(
        max_iterations=limit,
        iteration_timeout=timeout,
        max_output_buffer=buffer,
        failure_threshold=config.loop.failure_threshold,
        show_ai_output=config.loop.show_ai_output,
        ai_cmd=argv,
        ai_api=api,
        provenance=MappingProxyType(out),
    )

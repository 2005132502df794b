"""Rules about one procedure: it renders, its parameters, its signals, its loop
settings, and whether it overrides a built-in."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import FAILURE_SIGNAL, SUCCESS_SIGNAL
from pytest_ooda.errors import OodaError
from pytest_ooda.lint.findings import Collector, Finding
from pytest_ooda.lint.rules import TEMPLATE_OPEN
from pytest_ooda.lint.settings import LintSettings, resolve_settings

if TYPE_CHECKING:
    from pytest_ooda.config import Config, FragmentAction, Procedure


def action_file(action: FragmentAction) -> Path | None:
    if action.path is None:
        return None
    file = getattr(action, "file", None)
    if file is not None:
        return Path(file)
    from pytest_ooda.fragments import resolve_fragment_path

    return resolve_fragment_path(action.path, action.base_dir)


def _action_text(action: FragmentAction) -> str:
    from pytest_ooda.fragments import load_fragment_text

    return load_fragment_text(action)


def _is_template(action: FragmentAction) -> bool:
    return bool(action.parameters)


def _where(procedure: Procedure, phase: str, index: int) -> str:
    return f"procedure {procedure.name}: {phase}[{index}]"


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _action_identity(action: FragmentAction) -> tuple[Any, ...]:
    try:
        file = action_file(action)
    except OodaError:
        file = None
    source: Any = str(file) if file is not None else ("path", action.path, str(action.base_dir))
    if action.path is None:
        source = ("inline", action.content)
    return (source, _freeze(action.parameters))


def _render(action: FragmentAction, label: str) -> str:
    text = _action_text(action)
    if not _is_template(action):
        return text
    from pytest_ooda.gotemplate import render

    return render(text, action.parameters, name=label)


def _lint_actions(out: Collector, procedure: Procedure) -> tuple[bool, bool, bool]:
    """Per-action rules; returns (rendered cleanly, success guidance, failure guidance)."""
    rendered_ok = True
    success = failure = False
    phases = procedure.phases()
    # A raw prompt is its text alone: one phase is enough, the others are empty by design.
    raw = procedure.prompt_format == "raw" and any(phases.values())
    for phase, actions in phases.items():
        if not actions and not raw:
            out.add_at(
                "OODA101",
                f"procedure {procedure.name}: phase {phase} is empty",
                procedure.field_locations.get(phase, procedure.location),
                procedure=procedure.name,
            )
        seen: dict[tuple[Any, ...], int] = {}
        for index, action in enumerate(actions):
            where = _where(procedure, phase, index)
            label = action.source_label()
            if action.string_form:
                out.add_at(
                    "OODA104",
                    f"procedure {procedure.name}: {phase} is one string; write it as a list: "
                    f"`{phase}: [{{path: {label}}}]`",
                    action.location,
                    procedure=procedure.name,
                )
            identity = _action_identity(action)
            if identity in seen:
                out.add_at(
                    "OODA102",
                    f"{where}: {label} is already listed as {phase}[{seen[identity]}]",
                    action.location,
                    procedure=procedure.name,
                )
            else:
                seen[identity] = index
            try:
                text = _action_text(action)
                rendered = _render(action, label)
            except OodaError as exc:
                rendered_ok = False
                out.add_at(
                    "OODA002",
                    f"{where}: {label}: {exc.message}",
                    action.location,
                    procedure=procedure.name,
                )
                continue
            success = success or SUCCESS_SIGNAL in rendered
            failure = failure or FAILURE_SIGNAL in rendered
            blamed = _lint_no_value(out, procedure, action, where, label, (text, rendered))
            _lint_parameters(out, procedure, action, where, label, text, blamed)
    return rendered_ok, success, failure


def _lint_no_value(
    out: Collector,
    procedure: Procedure,
    action: FragmentAction,
    where: str,
    label: str,
    texts: tuple[str, str],
) -> set[str]:
    """OODA205: the rendered fragment holds ``<no value>`` the fragment's own words do
    not, so the agent would read it. Located at the read in the fragment file; returns
    the names blamed (OODA201 need not repeat them)."""
    text, rendered = texts
    if not _is_template(action) or "<no value>" not in rendered:
        return set()
    from pytest_ooda._util import closest, display_path
    from pytest_ooda.gotemplate import no_value_reads

    try:
        reads = no_value_reads(text, action.parameters, rendered)
    except OodaError:
        return set()
    supplied = sorted(str(key) for key in action.parameters)
    file = action_file(action)
    config_at = action.location
    used_by = f"{where} at {display_path(config_at.file)}:{config_at.line}:{config_at.column}"
    for read in reads:
        if read.name is None:
            message = (
                f"{where}: {label} renders <no value>: a field it reads is missing from a "
                "parameter's value"
            )
            hint = f"the parameters supplied: {', '.join(supplied)}"
        else:
            # A file's finding is located at the read; inline content's at the action.
            at = "" if file is not None else f" (line {read.line}, column {read.column})"
            message = (
                f"{where}: {label} renders <no value> for .{read.name}{at}: the action "
                "does not supply it"
            )
            near = closest(read.name, supplied)
            hint = (
                f"did you mean {near!r}?" if near else f"the action supplies {', '.join(supplied)}"
            )
        if file is None:
            out.add_at("OODA205", message, config_at, procedure=procedure.name, hint=hint)
        else:
            out.add(
                "OODA205",
                message,
                file=file,
                line=read.line,
                column=read.column,
                procedure=procedure.name,
                hint=f"{hint}\n  used by {used_by}",
            )
    return {read.name for read in reads if read.name is not None}


def _lint_parameters(
    out: Collector,
    procedure: Procedure,
    action: FragmentAction,
    where: str,
    label: str,
    text: str,
    blamed: set[str],
) -> None:
    has_syntax = TEMPLATE_OPEN in text
    if not _is_template(action):
        if has_syntax:
            line = text.count("\n", 0, text.index(TEMPLATE_OPEN)) + 1
            out.add_at(
                "OODA204",
                f"{where}: {label} has template syntax (line {line}) but no parameters, "
                "so it is used verbatim",
                action.location,
                procedure=procedure.name,
            )
        return
    supplied = {str(k) for k in action.parameters}
    if not has_syntax:
        out.add_at(
            "OODA203",
            f"{where}: parameters {', '.join(sorted(supplied))} given but {label} "
            "has no template syntax",
            action.location,
            procedure=procedure.name,
        )
        return
    # Imported only here, for a templated fragment: the template engine (and Jinja2)
    # costs a noticeable share of a session whose procedures use no templates.
    from pytest_ooda.gotemplate import first_use_line, referenced_params, uses_whole_dot

    try:
        used = set(referenced_params(text))
    except OodaError:
        return
    for name in sorted(used - supplied - blamed):
        first = first_use_line(text, name)
        at = f" (line {first})" if first is not None else ""
        out.add_at(
            "OODA201",
            f"{where}: {label}{at} uses .{name} but the action does not supply it "
            "(renders <no value>)",
            action.location,
            procedure=procedure.name,
        )
    if uses_whole_dot(text):
        return
    for name in sorted(supplied - used):
        out.add_at(
            "OODA202",
            f"{where}: parameter {name!r} is never used by {label}",
            _parameter_location(action, name),
            procedure=procedure.name,
        )


def _parameter_location(action: FragmentAction, name: str) -> Any:
    """The YAML position of ``parameters.<name>`` for the action, else the action itself."""
    return action.parameter_locations.get(name, action.location)


def _lint_iteration(out: Collector, config: Config, procedure: Procedure) -> None:
    if procedure.iteration_mode != "unlimited":
        return
    timeout = procedure.iteration_timeout or config.loop.iteration_timeout
    if timeout is None:
        out.add_at(
            "OODA103",
            f"procedure {procedure.name}: iteration_mode unlimited without an iteration_timeout",
            procedure.field_locations.get("iteration_mode", procedure.location),
            procedure=procedure.name,
        )


@functools.lru_cache(maxsize=1)
def _builtin_procedures() -> Mapping[str, Procedure]:
    from pytest_ooda.config import load_builtin_config

    return load_builtin_config().procedures


def _procedure_identity(procedure: Procedure) -> tuple[Any, ...]:
    phases = tuple(
        (phase, tuple(_action_identity(a) for a in actions))
        for phase, actions in procedure.phases().items()
    )
    return (
        procedure.display,
        procedure.summary,
        procedure.description,
        phases,
        procedure.iteration_mode,
        procedure.default_max_iterations,
        procedure.iteration_timeout,
        procedure.max_output_buffer,
        procedure.ai_cmd,
        procedure.ai_cmd_alias,
        procedure.ai_api,
    )


def _is_builtin_location(procedure: Procedure) -> bool:
    from pytest_ooda.fragments import builtin_procedures_file

    file = procedure.location.file
    if file is None:
        return True
    return Path(file).resolve() == builtin_procedures_file().resolve()


def _lint_builtin_override(out: Collector, procedure: Procedure) -> None:
    # A procedure that sets its own prompt_format changes the prompt (no built-in does).
    if _is_builtin_location(procedure) or "prompt_format" in procedure.field_locations:
        return
    try:
        builtin = _builtin_procedures().get(procedure.name)
    except OodaError:
        return
    if builtin is not None and _procedure_identity(builtin) == _procedure_identity(procedure):
        out.add_at(
            "OODA403",
            f"procedure {procedure.name}: overrides the built-in with identical values",
            procedure.location,
            procedure=procedure.name,
        )


def lint_procedure(
    config: Config, name: str, *, settings: LintSettings | None = None
) -> list[Finding]:
    """The findings for one procedure of ``config`` (procedure-level rules only).

    ``settings`` defaults to :func:`resolve_settings` of ``config`` (its ``lint:`` section).
    """
    if settings is None:
        settings = resolve_settings(config)
    procedure = config.procedure(name)
    out = Collector(settings)
    rendered_ok, success, failure = _lint_actions(out, procedure)
    # A raw prompt that asks for no promise runs one turn: the scenario's checks
    # (expect.files, expect.commands, expect.activation), not a signal, decide it.
    one_turn = procedure.prompt_format == "raw" and not success
    if rendered_ok and not success and not one_turn:
        out.add_at(
            "OODA301",
            f"procedure {procedure.name}: no fragment says when to emit {SUCCESS_SIGNAL}",
            procedure.location,
            procedure=procedure.name,
        )
    if rendered_ok and not failure and not one_turn:
        out.add_at(
            "OODA302",
            f"procedure {procedure.name}: no fragment says when to emit {FAILURE_SIGNAL}",
            procedure.location,
            procedure=procedure.name,
        )
    _lint_iteration(out, config, procedure)
    _lint_builtin_override(out, procedure)
    return sorted(out.findings, key=Finding._sort_key)

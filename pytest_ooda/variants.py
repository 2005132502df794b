"""Variants: named settings a scenario's live runs are repeated under, to compare agents,
models and prompt versions in one session.

A variant sets any of: the agent command (``ai_cmd``) or alias (``ai_cmd_alias``), the
``ai_api`` ``model``, ``prompt_format``, ``ai_output``, ``sandbox``, template
``parameters`` (merged into every fragment that takes parameters), ``fragments``
(one fragment path replaced by another, to A/B a fragment edit), ``without`` (fragments
or whole phases left out, ``observe[1]`` or ``act``: what ``ooda ablate`` generates) and
the agent material the runs install, by its key (``claude: without``, ``claude:
git:HEAD~1`` — the material as the repository's revision holds it —, or another
directory: a lift measured between two variants that differ only in it). They come from
a scenario's ``variants:`` mapping or from ``--ooda-variant NAME:KEY=VALUE,...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import PROMPT_FORMATS
from pytest_ooda.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.config import Config, FragmentAction, Procedure

#: A variant's name: it becomes part of item ids (``live[scenario@name#k]``).
VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
#: Keys of a variant (``param.NAME`` and ``fragment.OLD`` are the option's spellings of
#: ``parameters`` and ``fragments``).
VARIANT_KEYS = (
    "ai_cmd",
    "ai_cmd_alias",
    "model",
    "prompt_format",
    "ai_output",
    "sandbox",
    "parameters",
    "fragments",
    "without",
)
#: A place ``without`` leaves out: a phase, or one fragment of it by its index.
WITHOUT_PLACE = re.compile(r"(observe|orient|decide|act)(?:\[(\d+)\])?\Z")
_TEXT_KEYS = ("ai_cmd", "ai_cmd_alias", "model", "prompt_format", "ai_output", "sandbox")


@dataclass(frozen=True)
class Variant:
    """One variant's settings; ``None`` (or empty) leaves the session's setting alone."""

    name: str
    ai_cmd: str | None = None
    ai_cmd_alias: str | None = None
    model: str | None = None
    prompt_format: str | None = None
    ai_output: str | None = None
    sandbox: str | None = None
    # Left out of the hash (a mapping is not hashable), not of equality: settings that
    # hold a variant key caches.
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    fragments: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    #: The agent material its runs install, by key: ``without``, ``git:REV`` or a
    #: directory (relative to where the variant is declared).
    material: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    #: Fragments (``observe[1]``) or whole phases (``act``) left out of the prompt.
    without: tuple[str, ...] = ()
    #: Where it was declared: a scenario file and line, or ``--ooda-variant``.
    source: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    column: int | None = field(default=None, compare=False)

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in _TEXT_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.parameters:
            out["parameters"] = dict(self.parameters)
        if self.fragments:
            out["fragments"] = dict(self.fragments)
        out.update(self.material)
        if self.without:
            out["without"] = list(self.without)
        return out

    def settings(self) -> dict[str, Any]:
        """What the variant sets, for the results record and reports."""
        return self.to_yaml()

    def error(self, message: str, hint: str | None = None) -> ConfigError:
        """A mistake in applying this variant, located where it was declared."""
        where = f"variant {self.name!r}: {message}"
        if self.source is not None and self.line is not None:
            return ConfigError(
                where, file=self.source, line=self.line, column=self.column or 1, hint=hint
            )
        return ConfigError(where + " (from --ooda-variant)", hint=hint)


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name a variant (``None``: it can)."""
    if not VARIANT_NAME.match(name):
        return (
            f"{name!r} is not a variant name: letters, digits and _ . + - "
            "(it becomes part of test ids)"
        )
    return None


def check_value(key: str, value: str) -> str | None:
    """Why ``value`` is wrong for ``key`` (``None``: it is fine)."""
    if key == "prompt_format" and value not in PROMPT_FORMATS:
        return f"prompt_format: expected one of {', '.join(PROMPT_FORMATS)}, got {value!r}"
    if key == "ai_output":
        from pytest_ooda.agents import output_formats

        if value not in output_formats():
            return f"ai_output: expected one of {', '.join(output_formats())}, got {value!r}"
    if key == "ai_cmd":
        import shlex

        try:
            if not shlex.split(value):
                return "ai_cmd: the command is empty"
        except ValueError as exc:
            return f"ai_cmd: {exc} in the command line"
    if not value.strip():
        return f"{key}: the value is empty"
    return None


def check_place(place: str) -> str | None:
    """Why ``place`` is no place ``without`` can leave out (``None``: it is one)."""
    if WITHOUT_PLACE.match(place) is None:
        return (
            f"without: {place!r} is not a phase or a fragment of one "
            "(observe, orient, decide, act, or observe[0] for one fragment)"
        )
    return None


def _split(text: str, separator: str) -> list[str]:
    """``text`` split on ``separator`` where it is not escaped with a backslash."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    return parts


def parse_option(text: str) -> Variant:
    """``NAME:KEY=VALUE,KEY=VALUE`` (``--ooda-variant``) into a variant; a
    ``UsageError`` saying what is wrong. ``param.NAME=VALUE`` sets a template parameter
    and ``fragment.OLD=NEW`` replaces a fragment path; ``\\,`` is a comma in a value."""
    name, colon, rest = text.partition(":")
    name = name.strip()
    if not colon:
        raise UsageError(
            f"{text!r}: expected NAME:KEY=VALUE,...",
            hint="e.g. --ooda-variant big:model=MODEL-NAME or "
            "--ooda-variant v2:fragment.prompts/plan.md=prompts/plan-v2.md",
        )
    problem = check_name(name)
    if problem:
        raise UsageError(f"{text!r}: {problem}")
    values: dict[str, str] = {}
    parameters: dict[str, str] = {}
    fragments: dict[str, str] = {}
    without: list[str] = []
    for item in _split(rest, ","):
        if not item.strip():
            continue
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals:
            raise UsageError(f"variant {name!r}: expected KEY=VALUE, got {item!r}")
        if key.startswith("param.") and key[len("param.") :]:
            parameters[key[len("param.") :]] = value
            continue
        if key.startswith("fragment.") and key[len("fragment.") :]:
            fragments[key[len("fragment.") :]] = value.strip()
            continue
        if key in material_keys():
            if not value.strip():
                raise UsageError(f"variant {name!r}: {key}: the value is empty")
            values[key] = value.strip()
            continue
        if key == "without":
            for place in value.split():
                problem = check_place(place)
                if problem:
                    raise UsageError(f"variant {name!r}: {problem}")
                without.append(place)
            continue
        if key not in _TEXT_KEYS:
            from pytest_ooda._util import closest

            close = closest(key, (*_TEXT_KEYS, "param.NAME", "fragment.OLD", "without"))
            raise UsageError(
                f"variant {name!r}: unknown key {key!r}",
                hint=f"did you mean {close!r}?"
                if close
                else f"expected one of: {', '.join(_TEXT_KEYS)}, param.NAME, fragment.OLD, without",
            )
        problem = check_value(key, value)
        if problem:
            raise UsageError(f"variant {name!r}: {problem}")
        values[key] = value
    return make_variant(name, values, parameters, fragments, without=tuple(without))


def make_variant(
    name: str,
    values: Mapping[str, str],
    parameters: Mapping[str, Any],
    fragments: Mapping[str, str],
    *,
    without: tuple[str, ...] = (),
    source: str | None = None,
    line: int | None = None,
    column: int | None = None,
) -> Variant:
    """A variant from checked values (keys of ``VARIANT_KEYS`` holding text)."""
    return Variant(
        name=name,
        ai_cmd=values.get("ai_cmd"),
        ai_cmd_alias=values.get("ai_cmd_alias"),
        model=values.get("model"),
        prompt_format=values.get("prompt_format"),
        ai_output=values.get("ai_output"),
        sandbox=values.get("sandbox"),
        parameters=MappingProxyType(dict(parameters)),
        fragments=MappingProxyType(dict(fragments)),
        material=MappingProxyType({k: v for k, v in values.items() if k in material_keys()}),
        without=without,
        source=source,
        line=line,
        column=column,
    )


def material_keys() -> tuple[str, ...]:
    """The variant keys naming an agent's material (``claude``), as the agents say."""
    from pytest_ooda.agents import MATERIAL_SECTIONS

    return tuple(MATERIAL_SECTIONS)


def merged(scenario_variants: Sequence[Variant], session: Sequence[Variant]) -> tuple[Variant, ...]:
    """The variants a scenario runs under: its own, then the session's; a session
    variant replaces a scenario's of the same name."""
    by_name = {variant.name: variant for variant in scenario_variants}
    for variant in session:
        by_name[variant.name] = variant
    return tuple(by_name.values())


def apply_to_config(config: Config, procedure: str, variant: Variant) -> Config:
    """``config`` with ``procedure`` changed as ``variant`` says (model, parameters,
    fragments); a ``ConfigError`` located at the variant when it does not apply."""
    if (
        variant.model is None
        and not variant.parameters
        and not variant.fragments
        and not variant.without
    ):
        return config
    proc = config.procedure(procedure)
    loop = config.loop
    if variant.model is not None:
        if proc.ai_api is not None:
            proc = replace(proc, ai_api=replace(proc.ai_api, model=variant.model))
        elif loop.ai_api is not None:
            loop = replace(loop, ai_api=replace(loop.ai_api, model=variant.model))
        else:
            raise variant.error(
                f"model {variant.model!r} needs an ai_api backend, but procedure "
                f"{procedure} has no ai_api (nor has the loop)",
                "set ai_api on the procedure or the loop, or give the variant an ai_cmd "
                "whose CLI takes the model as a flag",
            )
    if variant.fragments:
        proc = _replace_fragments(proc, variant)
    if variant.parameters:
        proc = _with_parameters(proc, variant)
    if variant.without:
        proc = _without(proc, variant)
    procedures = dict(config.procedures)
    procedures[procedure] = proc
    return replace(config, loop=loop, procedures=MappingProxyType(procedures))


def _with_phases(proc: Procedure, change: Callable[[FragmentAction], FragmentAction]) -> Procedure:
    return replace(
        proc,
        observe=tuple(change(action) for action in proc.observe),
        orient=tuple(change(action) for action in proc.orient),
        decide=tuple(change(action) for action in proc.decide),
        act=tuple(change(action) for action in proc.act),
    )


def _replace_fragments(proc: Procedure, variant: Variant) -> Procedure:
    from pytest_ooda.fragments import resolve_fragment_path

    wanted = dict(variant.fragments)
    used: set[str] = set()

    def swap(action: FragmentAction) -> FragmentAction:
        if action.path is None or action.path not in wanted:
            return action
        new = wanted[action.path]
        used.add(action.path)
        try:
            file = resolve_fragment_path(new, action.base_dir)
        except ConfigError as exc:
            raise variant.error(
                f"fragment {action.path} -> {new}: {exc.message}",
                "the new path is relative to the procedure's config file, like the old one",
            ) from None
        return replace(action, path=new, file=file)

    changed = _with_phases(proc, swap)
    missing = sorted(set(wanted) - used)
    if missing:
        known = sorted(
            {action.path for actions in proc.phases().values() for action in actions if action.path}
        )
        raise variant.error(
            f"procedure {proc.name} has no fragment {missing[0]}",
            "fragments it uses: " + (", ".join(known) if known else "none"),
        )
    return changed


def _with_parameters(proc: Procedure, variant: Variant) -> Procedure:
    templated = [
        action for actions in proc.phases().values() for action in actions if action.parameters
    ]
    if not templated:
        raise variant.error(
            f"sets parameters, but no fragment of procedure {proc.name} takes parameters",
            "a variant's parameters are merged into the fragments that already declare parameters",
        )

    def merge(action: FragmentAction) -> FragmentAction:
        if not action.parameters:
            return action
        return replace(
            action, parameters=MappingProxyType({**action.parameters, **variant.parameters})
        )

    return _with_phases(proc, merge)


def _without(proc: Procedure, variant: Variant) -> Procedure:
    """``proc`` with the places ``variant.without`` names left out; a place the
    procedure does not have is the variant's located mistake."""
    phases = proc.phases()
    cut: dict[str, set[int]] = {}
    for place in variant.without:
        found = WITHOUT_PLACE.match(place)
        if found is None:
            raise variant.error(check_place(place) or place)
        phase, index = found.group(1), found.group(2)
        actions = phases[phase]
        if index is None:
            cut[phase] = set(range(len(actions)))
            continue
        if int(index) >= len(actions):
            raise variant.error(
                f"without: procedure {proc.name} has no fragment {place}",
                f"its {phase} phase has {len(actions)} fragment(s), from {phase}[0]",
            )
        cut.setdefault(phase, set()).add(int(index))

    def kept(phase: str) -> tuple[FragmentAction, ...]:
        gone = cut.get(phase, set())
        return tuple(action for i, action in enumerate(phases[phase]) if i not in gone)

    return replace(
        proc,
        observe=kept("observe"),
        orient=kept("orient"),
        decide=kept("decide"),
        act=kept("act"),
    )

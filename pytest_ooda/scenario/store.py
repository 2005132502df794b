"""Writing scenario files: YAML that reads back the same, secrets redacted, written
atomically."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import yaml

from pytest_ooda._util import atomic_write_text
from pytest_ooda.errors import ScenarioError
from pytest_ooda.redact import Redactor

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda.backends import ToolCall
    from pytest_ooda.config import RedactSettings
    from pytest_ooda.scenario.model import Scenario


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, so recorded outputs read like the original."""


# YAML 1.1 line breaks besides \n: PyYAML writes them raw except in double quotes, and
# reads them back raw as \n — only escaped do they survive a round trip.
_OTHER_BREAKS = re.compile("[\x85\u2028\u2029]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if _OTHER_BREAKS.search(value):
        style = '"'
    elif "\n" in value:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(tuple, lambda d, v: d.represent_list(list(v)))
_Dumper.add_representer(MappingProxyType, lambda d, v: d.represent_dict(dict(v)))


def dump_scenario(scenario: Scenario) -> str:
    """The YAML text of ``scenario`` (no redaction; see ``save_scenario``)."""
    return yaml.dump(
        scenario.to_yaml(),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
        default_flow_style=False,
    )


def redact_scenario(
    scenario: Scenario,
    env: Mapping[str, str] | None = None,
    redact: RedactSettings | None = None,
) -> Scenario:
    """``scenario`` with secrets in outputs, prompts, file changes and file names, tool
    calls (an agent's commands) and error texts replaced (``redact`` adds a config's own
    patterns and variable names)."""
    redactor = Redactor(
        env,
        extra_patterns=redact.patterns if redact is not None else (),
        extra_env_names=redact.env if redact is not None else (),
    )
    iterations = tuple(
        replace(
            it,
            output=redactor(it.output),
            prompt=redactor(it.prompt) if it.prompt is not None else None,
            files=MappingProxyType(_redacted_files(redactor, it.files)),
            error=redactor(it.error) if it.error is not None else None,
            tool_calls=(
                _redacted_calls(redactor, it.tool_calls) if it.tool_calls is not None else None
            ),
            permission_denials=_redacted_calls(redactor, it.permission_denials),
        )
        for it in scenario.iterations
    )
    context = tuple(redactor(c) for c in scenario.context)
    recorded = scenario.recorded
    if recorded is not None and recorded.reason is not None:
        recorded = replace(recorded, reason=redactor(recorded.reason))
    return replace(scenario, iterations=iterations, context=context, recorded=recorded)


def _redacted_calls(redactor: Redactor, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    from pytest_ooda.backends import redacted_call

    # Each decoded input text is redacted before it is joined into the summary line.
    return tuple(redacted_call(call, redactor) for call in calls)


def _redacted_files(redactor: Redactor, files: Mapping[str, str | None]) -> dict[str, str | None]:
    """File changes with secrets redacted in names and contents; two names that redact
    to the same one stay apart (``<redacted>``, ``<redacted>~2`` …)."""
    out: dict[str, str | None] = {}
    for name, text in files.items():
        shown = redactor.path(name)
        unique, count = shown, 1
        while unique in out:
            count += 1
            unique = f"{shown}~{count}"
        out[unique] = redactor(text) if text is not None else None
    return out


def save_scenario(
    scenario: Scenario,
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    redact: RedactSettings | None = None,
) -> Path:
    """Redact, serialise and atomically write ``scenario`` (to ``scenario.path`` by default)."""
    target = Path(path) if path is not None else scenario.path
    if target is None:
        raise ScenarioError(f"scenario {scenario.label!r} has no path to save to")
    redacted = redact_scenario(scenario, env, redact)
    text = dump_scenario(redacted)
    original = _read_existing(target)
    if original is not None:
        # Re-recording the user's file: only the keys the recording changed are written,
        # so their comments, flow style and key order elsewhere survive.
        text = splice_scenario_text(original, redacted.to_yaml()) or text
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise ScenarioError(
            f"cannot write scenario file: {exc.strerror or exc}", file=str(target)
        ) from None
    return target


def _read_existing(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _dump_key(key: str, value: object) -> str:
    return yaml.dump(
        {key: value},
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
        default_flow_style=False,
    )


def _is_filler(line: str) -> bool:
    """A blank line, or a comment at the left margin (it introduces the next key)."""
    stripped = line.strip()
    return not stripped or (line.startswith("#") and stripped.startswith("#"))


def splice_scenario_text(original: str, data: Mapping[str, object]) -> str | None:
    """``original`` with each top-level key whose value differs from ``data`` rewritten
    in place (and keys it lacks appended), every other line kept byte for byte; ``None``
    when the text is not one block mapping whose result reads back as ``data`` (the
    caller then writes the whole file)."""
    try:
        node = yaml.compose(original, Loader=yaml.SafeLoader)
        old = yaml.safe_load(original)
    except yaml.YAMLError:
        return None
    if not isinstance(node, yaml.MappingNode) or node.flow_style or not isinstance(old, dict):
        return None
    lines = original.splitlines(keepends=True)
    spans: dict[str, tuple[int, int]] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.start_mark.column != 0:
            return None
        end = value_node.end_mark.line + (1 if value_node.end_mark.column > 0 else 0)
        end = max(end, key_node.start_mark.line + 1)
        while end - 1 > key_node.start_mark.line and _is_filler(lines[end - 1]):
            end -= 1
        spans[str(key_node.value)] = (key_node.start_mark.line, end)
    replaced: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    for key, value in data.items():
        if key in old and old[key] == value:
            continue
        if key in spans:
            start, end = spans[key]
            replaced[start] = (end, _dump_key(key, value))
        else:
            appended.append(_dump_key(key, value))
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replaced:
            end, text = replaced[index]
            out.append(text)
            index = end
            continue
        out.append(lines[index])
        index += 1
    if appended:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out.extend(appended)
    text = "".join(out)
    try:
        if yaml.safe_load(text) != {**old, **data}:
            return None
    except yaml.YAMLError:
        return None
    return text


def check_writable(path: str | Path, *, create: bool = True) -> None:
    """Raise ``ScenarioError`` unless a scenario file can be written at ``path``.

    Creates the missing parent directories (with ``create``; otherwise probes the nearest
    existing one) and a temporary file there, then removes it: the only reliable test, as
    permission bits say nothing to root, or on read-only and virtual file systems.
    """
    target = Path(path)
    if target.is_dir():
        raise ScenarioError(
            "cannot write scenario file: it is a directory",
            file=str(target),
            hint="give the path of a .yml file",
        )
    try:
        directory = target.parent
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        else:
            while not directory.exists() and directory != directory.parent:
                directory = directory.parent
            if not directory.is_dir():
                raise NotADirectoryError(directory)
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except (FileExistsError, NotADirectoryError):
        raise ScenarioError(
            f"cannot write scenario file: {directory} is not a directory", file=str(target)
        ) from None
    except OSError as exc:
        raise ScenarioError(
            f"cannot write scenario file: {exc.strerror or exc}", file=str(target)
        ) from None

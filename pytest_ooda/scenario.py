"""Scenario files: load/validate/save, record modes, redaction on write, expectations, drift.

A scenario is a recorded or hand-written transcript of a loop run (see the plugin spec,
§ Scenarios): per iteration the output, exit code, prompt hash and — in recordings — the
workspace changes the agent made. This module turns the YAML into a validated
``Scenario`` (every mistake a located ``ScenarioError``), serves it through the replay
backend, checks a ``LoopResult`` against its ``expect`` block, detects prompt drift
against what was recorded, and writes recordings back atomically with secrets redacted.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from pytest_ooda.backends.replay import ReplayBackend, ReplayStep
from pytest_ooda.errors import ScenarioError
from pytest_ooda.redact import Redactor
from pytest_ooda.workspace import WorkspaceChanges
from pytest_ooda.yamlload import Mark, YamlMapping, YamlSequence, load_yaml_file, load_yaml_text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.compose import Segment
    from pytest_ooda.config import Config
    from pytest_ooda.loop import LoopResult

_T = TypeVar("_T")
_D = TypeVar("_D")

__all__ = [
    "RECORD_MODES",
    "Drift",
    "Expect",
    "FileCheck",
    "Recorder",
    "Scenario",
    "ScenarioIteration",
    "assert_expectations",
    "check_drift",
    "check_writable",
    "detect_drift",
    "load_scenario",
    "load_scenario_text",
    "needs_recording",
    "save_scenario",
    "scenario_from_result",
    "sha256_text",
]

RECORD_MODES = ("none", "once", "new", "all")
STATUSES = ("success", "max-iters", "aborted", "interrupted")
SIGNALS = ("none", "SUCCESS", "FAILURE")
# A recording holds up to max_output_buffer bytes per iteration (10 MB by default).
MAX_SCENARIO_BYTES = 512 * 1024 * 1024

_PROCEDURE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_TOP_KEYS = (
    "procedure",
    "description",
    "context",
    "max_iterations",
    "failure_threshold",
    "workspace",
    "expect",
    "iterations",
)
_EXPECT_KEYS = ("status", "iterations", "signals", "files")
_ITERATION_KEYS = (
    "output",
    "exit_code",
    "prompt_sha256",
    "prompt",
    "duration_s",
    "delay",
    "timed_out",
    "files",
)


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8 (what ``prompt_sha256`` holds).

    Bytes a ``!!binary`` parameter put in a prompt (carried as surrogate escapes) count as
    the bytes the AI receives.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class ScenarioIteration:
    """One recorded iteration. ``prompt`` is kept (for drift diffs) on the first only."""

    output: str = ""
    exit_code: int = 0
    prompt_sha256: str | None = None
    prompt: str | None = None
    duration_s: float | None = None
    delay: float = 0.0
    timed_out: bool = False
    files: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    line: int | None = field(default=None, compare=False)

    def to_step(self) -> ReplayStep:
        return ReplayStep(
            output=self.output,
            exit_code=self.exit_code,
            delay=self.delay,
            timed_out=self.timed_out,
            files=self.files,
        )


@dataclass(frozen=True)
class FileCheck:
    """A workspace check: ``exists`` True/False/None (don't care) and required substrings."""

    path: str
    exists: bool | None = True
    contains: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)

    def check(self, workspace: Path) -> str | None:
        target = workspace / self.path
        if self.exists is False:
            return (
                f"file {self.path}: expected to be absent, but it exists"
                if target.exists()
                else None
            )
        if not target.exists():
            if self.exists or self.contains:
                return f"file {self.path}: expected to exist, but it is missing"
            return None
        for needle in self.contains:
            try:
                text = target.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                return f"file {self.path}: cannot read it: {exc.strerror or exc}"
            if needle not in text:
                return f"file {self.path}: expected to contain {needle!r}"
        return None

    def to_yaml(self) -> Any:
        if not self.contains:
            return "exists" if self.exists else "absent"
        out: dict[str, Any] = {}
        if self.exists is False:
            out["exists"] = False
        out["contains"] = self.contains[0] if len(self.contains) == 1 else list(self.contains)
        return out


@dataclass(frozen=True)
class Expect:
    """The ``expect:`` block. ``iterations`` is exact; ``min/max_iterations`` bound a range."""

    status: str | None = None
    iterations: int | None = None
    min_iterations: int | None = None
    max_iterations: int | None = None
    signals: tuple[str, ...] | None = None
    files: tuple[FileCheck, ...] = ()

    def check(self, result: LoopResult, workspace: Path | None = None) -> list[str]:
        """Every way ``result`` (and the ``workspace`` afterwards) misses this block."""
        problems: list[str] = []
        if self.status is not None and result.status != self.status:
            problems.append(f"expected status {self.status!r}, got {result.status!r}")
        ran = result.iterations
        if self.iterations is not None and ran != self.iterations:
            problems.append(f"expected {self.iterations} iteration(s), ran {ran}")
        low, high = self.min_iterations, self.max_iterations
        if (low is not None and ran < low) or (high is not None and ran > high):
            bounds = f"{low if low is not None else 0}..{high if high is not None else '∞'}"
            problems.append(f"expected {bounds} iterations, ran {ran}")
        if self.signals is not None and list(self.signals) != result.signals:
            problems.append(f"expected signals {list(self.signals)}, got {result.signals}")
        if self.files:
            if workspace is None:
                problems.append("file checks need a workspace, but the run had none")
            else:
                for check in self.files:
                    problem = check.check(workspace)
                    if problem:
                        problems.append(problem)
        return problems

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.status is not None:
            out["status"] = self.status
        if self.iterations is not None:
            out["iterations"] = self.iterations
        elif self.min_iterations is not None or self.max_iterations is not None:
            bounds: dict[str, int] = {}
            if self.min_iterations is not None:
                bounds["min"] = self.min_iterations
            if self.max_iterations is not None:
                bounds["max"] = self.max_iterations
            out["iterations"] = bounds
        if self.signals is not None:
            out["signals"] = list(self.signals)
        if self.files:
            out["files"] = {check.path: check.to_yaml() for check in self.files}
        return out


@dataclass(frozen=True)
class Scenario:
    """A validated scenario file. ``name`` is the file stem; ``path`` where it lives."""

    procedure: str
    name: str = "scenario"
    path: Path | None = None
    description: str | None = None
    context: tuple[str, ...] = ()
    max_iterations: int | None = None
    failure_threshold: int | None = None
    workspace: str | None = None
    expect: Expect | None = None
    iterations: tuple[ScenarioIteration, ...] = ()

    @property
    def label(self) -> str:
        """``procedure/name`` as used in messages."""
        return f"{self.procedure}/{self.name}"

    def replay_backend(self, *, sleep: bool = True, files_dir: Path | None = None) -> ReplayBackend:
        """A backend serving the recorded iterations; running out names this scenario.

        Recorded file changes go to ``files_dir`` (default: the run's working directory).
        """
        return ReplayBackend(
            [it.to_step() for it in self.iterations],
            name=self.label,
            file=self.path,
            sleep=sleep,
            files_dir=files_dir,
        )

    def workspace_dir(self) -> Path | None:
        """``workspace`` resolved against the scenario file's directory."""
        if self.workspace is None:
            return None
        base = self.path.parent if self.path is not None else Path.cwd()
        return (base / self.workspace).resolve()

    def check(self, result: LoopResult, workspace: Path | None = None) -> list[str]:
        """``expect.check`` (no expectations → nothing to report)."""
        return self.expect.check(result, workspace) if self.expect is not None else []

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"procedure": self.procedure}
        if self.description is not None:
            out["description"] = self.description
        if self.context:
            out["context"] = self.context[0] if len(self.context) == 1 else list(self.context)
        if self.max_iterations is not None:
            out["max_iterations"] = self.max_iterations
        if self.failure_threshold is not None:
            out["failure_threshold"] = self.failure_threshold
        if self.workspace is not None:
            out["workspace"] = self.workspace
        if self.expect is not None:
            out["expect"] = self.expect.to_yaml()
        items = []
        for it in self.iterations:
            item: dict[str, Any] = {"output": it.output, "exit_code": it.exit_code}
            if it.timed_out:
                item["timed_out"] = True
            if it.prompt_sha256 is not None:
                item["prompt_sha256"] = it.prompt_sha256
            if it.duration_s is not None:
                item["duration_s"] = it.duration_s
            if it.delay:
                item["delay"] = it.delay
            if it.files:
                item["files"] = dict(it.files)
            if it.prompt is not None:
                item["prompt"] = it.prompt
            items.append(item)
        out["iterations"] = items
        return out


# --------------------------------------------------------------------------- loading


class _Validator:
    def __init__(self, file: str | None) -> None:
        self.file = file

    def fail(self, message: str, mark: Mark, hint: str | None = None) -> ScenarioError:
        return ScenarioError(message, file=self.file, line=mark.line, column=mark.column, hint=hint)

    def keys(self, mapping: YamlMapping, known: Sequence[str], where: str) -> None:
        for key in mapping:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = (
                    f"did you mean {close[0]!r}?"
                    if close
                    else f"expected one of: {', '.join(known)}"
                )
                raise self.fail(
                    f"unknown key {key!r} in {where}",
                    mapping.key_marks.get(key, mapping.mark),
                    hint,
                )

    def mapping(self, value: Any, mark: Mark, where: str) -> YamlMapping:
        if not isinstance(value, YamlMapping):
            raise self.fail(f"{where}: expected a mapping, got {_type_name(value)}", mark)
        return value

    def get(self, mapping: YamlMapping, key: str) -> tuple[Any, Mark]:
        return mapping.get(key), mapping.value_marks.get(key, mapping.mark)

    def text(self, value: Any, mark: Mark, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{where}: expected a string, got {_type_name(value)}", mark)
        return value

    def optional(
        self,
        container: YamlMapping,
        key: str,
        where: str,
        read: Callable[[Any, Mark, str], _T],
        default: _D,
    ) -> _T | _D:
        """``read`` the value of ``key`` when it is set (not null), else ``default``."""
        if container.get(key) is None:
            return default
        return read(*self.get(container, key), f"{where}.{key}")

    def texts(self, value: Any, mark: Mark, where: str) -> tuple[str, ...]:
        """One string, or a list of strings (each located on its own item)."""
        if isinstance(value, YamlSequence):
            return tuple(
                self.text(item, value.item_marks[i], f"{where}[{i}]")
                for i, item in enumerate(value)
            )
        return (self.text(value, mark, where),)

    def integer(self, value: Any, mark: Mark, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}: expected an integer, got {_type_name(value)}", mark)
        if minimum is not None and value < minimum:
            raise self.fail(f"{where}: expected an integer >= {minimum}, got {value}", mark)
        return value

    def number(self, value: Any, mark: Mark, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise self.fail(f"{where}: expected a number >= 0, got {value!r}", mark)
        return float(value)

    def choice(self, value: Any, mark: Mark, where: str, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(f"{where}: expected one of {', '.join(choices)}, got {value!r}", mark)
        return value

    def scenario(self, doc: Any, path: Path | None, name: str) -> Scenario:
        root = self.mapping(doc, Mark(1, 1), "scenario file")
        self.keys(root, _TOP_KEYS, "scenario")
        if "procedure" not in root:
            raise self.fail(
                "missing required key 'procedure'",
                root.mark,
                "name the procedure this scenario runs",
            )
        value, mark = self.get(root, "procedure")
        procedure = self.text(value, mark, "procedure")
        if not _PROCEDURE_NAME.match(procedure):
            raise self.fail(
                f"procedure: {procedure!r} is not a procedure name",
                mark,
                "procedure names match [a-z0-9][a-z0-9-]*",
            )
        description = None
        if root.get("description") is not None:
            description = self.text(*self.get(root, "description"), "description")
        context: tuple[str, ...] = ()
        if root.get("context") is not None:
            context = self.texts(*self.get(root, "context"), "context")
        max_iterations = failure_threshold = None
        if root.get("max_iterations") is not None:
            max_iterations = self.integer(*self.get(root, "max_iterations"), "max_iterations", 1)
        if root.get("failure_threshold") is not None:
            failure_threshold = self.integer(
                *self.get(root, "failure_threshold"), "failure_threshold", 1
            )
        workspace = None
        if root.get("workspace") is not None:
            workspace = self.text(*self.get(root, "workspace"), "workspace")
        expect = None
        if root.get("expect") is not None:
            expect = self.expect(*self.get(root, "expect"))
        iterations: tuple[ScenarioIteration, ...] = ()
        if root.get("iterations") is not None:
            value, mark = self.get(root, "iterations")
            if not isinstance(value, YamlSequence):
                raise self.fail(f"iterations: expected a list, got {_type_name(value)}", mark)
            iterations = tuple(
                self.iteration(item, value.item_marks[i], i + 1) for i, item in enumerate(value)
            )
        return Scenario(
            procedure=procedure,
            name=name,
            path=path,
            description=description,
            context=context,
            max_iterations=max_iterations,
            failure_threshold=failure_threshold,
            workspace=workspace,
            expect=expect,
            iterations=iterations,
        )

    def expect(self, value: Any, mark: Mark) -> Expect:
        block = self.mapping(value, mark, "expect")
        self.keys(block, _EXPECT_KEYS, "expect")
        status = None
        if block.get("status") is not None:
            status = self.choice(*self.get(block, "status"), "expect.status", STATUSES)
        exact = low = high = None
        if block.get("iterations") is not None:
            value, mark = self.get(block, "iterations")
            if isinstance(value, YamlMapping):
                self.keys(value, ("min", "max"), "expect.iterations")
                if value.get("min") is not None:
                    low = self.integer(*self.get(value, "min"), "expect.iterations.min", 0)
                if value.get("max") is not None:
                    high = self.integer(*self.get(value, "max"), "expect.iterations.max", 0)
                if low is None and high is None:
                    raise self.fail("expect.iterations: give min, max or both", mark)
                if low is not None and high is not None and low > high:
                    raise self.fail(
                        f"expect.iterations: min {low} is greater than max {high}", mark
                    )
            else:
                exact = self.integer(value, mark, "expect.iterations", 0)
        signals = None
        if block.get("signals") is not None:
            value, mark = self.get(block, "signals")
            if not isinstance(value, YamlSequence):
                raise self.fail(f"expect.signals: expected a list, got {_type_name(value)}", mark)
            signals = tuple(
                self.choice(item, value.item_marks[i], f"expect.signals[{i}]", SIGNALS)
                for i, item in enumerate(value)
            )
        files: list[FileCheck] = []
        if block.get("files") is not None:
            value, mark = self.get(block, "files")
            checks = self.mapping(value, mark, "expect.files")
            for key in checks:
                files.append(self.file_check(checks, key))
        return Expect(status, exact, low, high, signals, tuple(files))

    def file_check(self, checks: YamlMapping, key: Any) -> FileCheck:
        where = f"expect.files[{key!r}]"
        path = self.text(key, checks.key_marks.get(key, checks.mark), "expect.files key")
        value, mark = self.get(checks, key)
        if isinstance(value, str):
            state = self.choice(value, mark, where, ("exists", "absent"))
            return FileCheck(path, exists=state == "exists", line=mark.line)
        spec = self.mapping(value, mark, where)
        self.keys(spec, ("exists", "contains"), where)
        exists: bool | None = None
        if spec.get("exists") is not None:
            flag, flag_mark = self.get(spec, "exists")
            if not isinstance(flag, bool):
                raise self.fail(f"{where}.exists: expected true or false", flag_mark)
            exists = flag
        contains: tuple[str, ...] = ()
        if spec.get("contains") is not None:
            contains = self.texts(*self.get(spec, "contains"), f"{where}.contains")
        if exists is False and contains:
            raise self.fail(f"{where}: a file cannot be absent and contain text", mark)
        return FileCheck(path, exists=exists, contains=contains, line=mark.line)

    def iteration(self, value: Any, mark: Mark, number: int) -> ScenarioIteration:
        where = f"iterations[{number - 1}]"
        item = self.mapping(value, mark, where)
        self.keys(item, _ITERATION_KEYS, where)
        output = self.optional(item, "output", where, self.text, "")
        exit_code = self.optional(item, "exit_code", where, self.integer, 0)
        sha = None
        if item.get("prompt_sha256") is not None:
            value, vmark = self.get(item, "prompt_sha256")
            sha = self.text(value, vmark, f"{where}.prompt_sha256")
            if not _SHA256.match(sha):
                raise self.fail(
                    f"{where}.prompt_sha256: expected 64 lowercase hex digits, got {sha!r}", vmark
                )
        prompt = self.optional(item, "prompt", where, self.text, None)
        duration = self.optional(item, "duration_s", where, self.number, None)
        delay = self.optional(item, "delay", where, self.number, 0.0)
        timed_out = False
        if item.get("timed_out") is not None:
            flag, fmark = self.get(item, "timed_out")
            if not isinstance(flag, bool):
                raise self.fail(f"{where}.timed_out: expected true or false", fmark)
            timed_out = flag
        files: dict[str, str | None] = {}
        if item.get("files") is not None:
            changes = self.mapping(*self.get(item, "files"), f"{where}.files")
            for key in changes:
                fname = self.text(
                    key, changes.key_marks.get(key, changes.mark), f"{where}.files key"
                )
                content, cmark = self.get(changes, key)
                if content is not None:
                    content = self.text(content, cmark, f"{where}.files[{fname!r}]")
                files[fname] = content
        return ScenarioIteration(
            output=output,
            exit_code=exit_code,
            prompt_sha256=sha,
            prompt=prompt,
            duration_s=duration,
            delay=delay,
            timed_out=timed_out,
            files=MappingProxyType(files),
            line=mark.line,
        )


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r})" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def load_scenario_text(
    text: str, *, path: str | Path | None = None, name: str | None = None
) -> Scenario:
    """Parse and validate scenario YAML; errors name ``path:line:col``."""
    display = str(path) if path is not None else None
    doc = load_yaml_text(text, file=display, error=ScenarioError)
    resolved = Path(path) if path is not None else None
    stem = name or (resolved.stem if resolved is not None else "scenario")
    return _Validator(display).scenario(doc, resolved, stem)


def load_scenario(path: str | Path, *, name: str | None = None) -> Scenario:
    """Read and validate the scenario file at ``path`` (``name`` defaults to its stem)."""
    file = Path(path)
    doc = load_yaml_file(file, error=ScenarioError, max_bytes=MAX_SCENARIO_BYTES)
    return _Validator(str(file)).scenario(doc, file, name or file.stem)


# --------------------------------------------------------------------------- writing


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


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same directory and ``os.replace``:
    readers see the old file or the new one, never half of either."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            with contextlib.suppress(OSError):
                os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def redact_scenario(scenario: Scenario, env: Mapping[str, str] | None = None) -> Scenario:
    """``scenario`` with secrets in outputs, prompts and file changes replaced."""
    redactor = Redactor(env)
    iterations = tuple(
        replace(
            it,
            output=redactor(it.output),
            prompt=redactor(it.prompt) if it.prompt is not None else None,
            files=MappingProxyType(
                {k: (redactor(v) if v is not None else None) for k, v in it.files.items()}
            ),
        )
        for it in scenario.iterations
    )
    context = tuple(redactor(c) for c in scenario.context)
    return replace(scenario, iterations=iterations, context=context)


def save_scenario(
    scenario: Scenario, path: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> Path:
    """Redact, serialise and atomically write ``scenario`` (to ``scenario.path`` by default)."""
    target = Path(path) if path is not None else scenario.path
    if target is None:
        raise ScenarioError(f"scenario {scenario.label!r} has no path to save to")
    text = dump_scenario(redact_scenario(scenario, env))
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise ScenarioError(
            f"cannot write scenario file: {exc.strerror or exc}", file=str(target)
        ) from None
    return target


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


# --------------------------------------------------------------------------- recording


def needs_recording(mode: str, scenario: Scenario, *, drifted: bool = False) -> bool:
    """Whether ``mode`` asks to (re)write ``scenario``: ``once`` only when it has no
    iterations, ``new`` also when its prompts drifted, ``all`` always, ``none`` never."""
    if mode not in RECORD_MODES:
        raise ScenarioError(
            f"unknown record mode {mode!r}", hint=f"expected one of: {', '.join(RECORD_MODES)}"
        )
    if mode == "none":
        return False
    if mode == "all":
        return True
    if not scenario.iterations:
        return True
    return mode == "new" and drifted


def scenario_from_result(
    scenario: Scenario,
    result: LoopResult,
    *,
    keep_expect: bool = True,
    files: Mapping[int, Mapping[str, str | None]] | None = None,
) -> Scenario:
    """``scenario`` with its iterations replaced by what ``result`` recorded.

    The first iteration keeps its full prompt text so later drift can be shown as a diff.
    ``files`` maps an iteration number to the workspace changes it made (see
    ``pytest_ooda.workspace``). Without ``keep_expect`` (or when the scenario has none)
    ``expect`` becomes the status and iteration count that were observed.
    """
    changes = files or {}
    iterations = tuple(
        ScenarioIteration(
            output=record.output,
            exit_code=record.exit_code,
            prompt_sha256=record.prompt_sha256,
            prompt=record.prompt if index == 0 else None,
            duration_s=round(record.duration, 3),
            timed_out=record.timed_out,
            files=MappingProxyType(dict(changes.get(record.number, {}))),
        )
        for index, record in enumerate(result.records)
    )
    expect = scenario.expect
    if expect is None or not keep_expect:
        expect = Expect(status=result.status, iterations=result.iterations)
    return replace(scenario, iterations=iterations, expect=expect)


class Recorder:
    """Decides whether a live run of ``scenario`` is written back, and writes it.

    Use: ``rec = Recorder(scenario, mode)``; ``rec.wanted(drifted=…)`` before the live
    run tells whether to record at all; ``rec.watch(workdir)`` gives the ``on_event``
    callback that captures each iteration's workspace changes; ``rec.commit(result,
    failures)`` after the run writes the recording (redacted, atomically) and returns the
    path, or returns ``None`` and leaves the file alone when the run was interrupted or —
    for a scenario that already has a recording — failed its expectations. A failed run
    never replaces a recording. ``rec.warnings`` lists file changes that could not be
    recorded in full.
    """

    def __init__(
        self,
        scenario: Scenario,
        mode: str = "once",
        *,
        path: str | Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        needs_recording(mode, scenario)  # validates the mode
        self.scenario = scenario
        self.mode = mode
        self.path = Path(path) if path is not None else scenario.path
        self.env = env
        self.skipped_reason: str | None = None
        self.changes: WorkspaceChanges | None = None

    def wanted(self, *, drifted: bool = False) -> bool:
        return needs_recording(self.mode, self.scenario, drifted=drifted)

    def watch(self, workdir: str | Path, **limits: int) -> WorkspaceChanges:
        """Capture the changes each iteration makes under ``workdir``: pass the result
        as ``run_procedure(on_event=…)`` (it must see the loop start). ``limits`` are
        ``max_file_bytes`` / ``max_total_bytes`` of ``WorkspaceChanges``."""
        self.changes = WorkspaceChanges(workdir, **limits)
        return self.changes

    @property
    def warnings(self) -> list[str]:
        """File changes the recording holds only as a placeholder, or not at all."""
        return list(self.changes.warnings) if self.changes is not None else []

    def commit(self, result: LoopResult, failures: Sequence[str] = ()) -> Path | None:
        if result.status == "interrupted":
            self.skipped_reason = "the run was interrupted"
            return None
        if failures and self.scenario.iterations:
            self.skipped_reason = "the run failed its expectations; the existing recording is kept"
            return None
        files = self.changes.iterations if self.changes is not None else None
        recorded = scenario_from_result(self.scenario, result, files=files)
        self.skipped_reason = None
        return save_scenario(recorded, self.path, env=self.env)


# --------------------------------------------------------------------------- expectations


def assert_expectations(
    scenario: Scenario, result: LoopResult, workspace: Path | None = None
) -> None:
    """``AssertionError`` listing every unmet expectation plus the run's report."""
    problems = scenario.check(result, workspace)
    if problems:
        lines = [f"scenario {scenario.label}: {len(problems)} expectation(s) not met"]
        lines += [f"  - {p}" for p in problems]
        raise AssertionError("\n".join(lines) + "\n" + result.report())


# --------------------------------------------------------------------------- drift


@dataclass(frozen=True)
class Drift:
    """A recorded iteration whose prompt differs from the one assembled now."""

    iteration: int
    recorded_sha256: str
    current_sha256: str
    diff: str | None = None
    changed_sources: tuple[str, ...] = ()

    def describe(self) -> str:
        head = (
            f"prompt of iteration {self.iteration} drifted from the recording "
            f"(sha256 {self.recorded_sha256[:12]}… → {self.current_sha256[:12]}…)"
        )
        if self.changed_sources:
            head += "\n  changed fragments: " + ", ".join(self.changed_sources)
        if self.diff:
            head += "\n" + self.diff
        elif self.diff is None:
            head += "\n  (no recorded prompt text to diff against; re-record to keep one)"
        return head


def _is_fragment(source: str) -> bool:
    return source not in ("preamble", "context") and not source.startswith("marker:")


def _changed_sources(recorded: str, current: str, segments: Sequence[Segment]) -> tuple[str, ...]:
    old = recorded.splitlines()
    new = current.splitlines()
    touched: list[int] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if j2 > j1:
            touched.extend(range(j1 + 1, j2 + 1))
        else:
            # Pure deletion: blame the fragments on either side of the gap.
            touched.extend((j1, j1 + 1))
    found: list[str] = []
    for line in touched:
        for segment in segments:
            if (
                segment.start_line <= line <= segment.end_line
                and _is_fragment(segment.source)
                and segment.source not in found
            ):
                found.append(segment.source)
    return tuple(found)


def detect_drift(
    scenario: Scenario,
    prompts: Sequence[str],
    *,
    segments: Sequence[Segment] | None = None,
    context_lines: int = 3,
) -> list[Drift]:
    """Compare the prompts a replay sent with the recorded ``prompt_sha256`` values.

    ``segments`` (from ``assemble_prompt_mapped`` for iteration 1) lets the first
    iteration's drift name the fragments whose text changed; its recorded ``prompt``
    text gives the unified diff.
    """
    drifts: list[Drift] = []
    for index, (recorded, prompt) in enumerate(zip(scenario.iterations, prompts, strict=False)):
        if recorded.prompt_sha256 is None:
            continue
        current = sha256_text(prompt)
        if current == recorded.prompt_sha256:
            continue
        diff = None
        changed: tuple[str, ...] = ()
        if recorded.prompt is not None:
            where = scenario.path.name if scenario.path is not None else scenario.label
            diff = "".join(
                difflib.unified_diff(
                    recorded.prompt.splitlines(keepends=True),
                    prompt.splitlines(keepends=True),
                    fromfile=f"recorded prompt ({where}, iteration {index + 1})",
                    tofile=f"current prompt (iteration {index + 1})",
                    n=context_lines,
                )
            )
            if segments is not None and index == 0:
                changed = _changed_sources(recorded.prompt, prompt, segments)
        drifts.append(Drift(index + 1, recorded.prompt_sha256, current, diff, changed))
    return drifts


def check_drift(
    scenario: Scenario, result: LoopResult, config: Config, *, cwd: Path | None = None
) -> list[Drift]:
    """``detect_drift`` for a finished replay, mapping fragments through ``config``."""
    from pytest_ooda.compose import assemble_prompt_mapped

    segments: Sequence[Segment] | None = None
    if result.records and scenario.iterations and scenario.iterations[0].prompt is not None:
        mapped = assemble_prompt_mapped(
            config.procedure(scenario.procedure),
            iteration=1,
            max_iterations=result.max_iterations,
            context=result.context,
            cwd=cwd or result.workdir,
        )
        if mapped.text == result.records[0].prompt:
            segments = mapped.segments
    return detect_drift(scenario, result.prompts, segments=segments)

"""The checks of the table's rows: a value as given (text, a tuple of texts) and how
messages name where it was given -> the value, or a ``UsageError`` starting with that
label. A check that needs the library imports it when it has a value to check."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import OodaError, UsageError

if TYPE_CHECKING:
    from pytest_ooda.variants import Variant


def same(value: Any, label: str) -> Any:
    """A value its row has checked already (a choice, a flag)."""
    return value


def text(value: Any, label: str) -> str | None:
    """A text; an empty one counts as not given."""
    text = str(value).strip()
    return text or None


def texts(value: Any, label: str) -> tuple[str, ...]:
    return tuple(str(item) for item in value)


def context(value: Any, label: str) -> tuple[str, ...]:
    """Context texts; one that names a directory or a file that cannot be read is
    refused. The library reads such a value as plain text; on the command line it is
    almost certainly a mistake, and for ``ooda run`` one that would cost AI time."""
    entries = texts(value, label)
    for entry in entries:
        if not entry or "\n" in entry or len(entry) >= 4096:
            continue
        path = Path(entry)
        try:
            if path.is_dir():
                raise UsageError(
                    f"{label} {entry}: is a directory; give a file, or text that is not a path"
                )
            if path.is_file():
                with open(path, "rb"):
                    pass
        except OSError as exc:
            raise UsageError(f"{label} {entry}: cannot read: {exc.strerror or exc}") from None
    return entries


def ai_cmd(value: Any, label: str) -> str:
    """An agent command line, split as the loop will split it."""
    import shlex

    try:
        argv = shlex.split(str(value))
    except ValueError as exc:
        raise UsageError(f"{label}: cannot split {value!r} into arguments: {exc}") from None
    if not argv:
        raise UsageError(f"{label}: the AI command is empty")
    return str(value)


def whole(value: Any, label: str, *, minimum: int, maximum: int | None = None) -> int:
    text = str(value).strip()
    if not text.isdigit() or int(text) < minimum or (maximum is not None and int(text) > maximum):
        expected = (
            f"an integer >= {minimum}" if maximum is None else f"an integer from 1 to {maximum}"
        )
        raise UsageError(f"{label}: expected {expected}, got {value!r}")
    return int(text)


def positive(value: Any, label: str) -> int:
    """A count >= 1 (``--max-iterations``, ``--ooda-max-tokens``)."""
    return whole(value, label, minimum=1)


def count(value: Any, label: str) -> int:
    """A count >= 0 (``--ooda-retries 0`` turns retrying off)."""
    return whole(value, label, minimum=0)


def amount(value: Any, label: str) -> float:
    """An amount in US dollars > 0 (a budget)."""
    try:
        amount = float(str(value).strip())
    except ValueError:
        amount = float("nan")
    if not amount > 0 or amount == float("inf"):
        raise UsageError(f"{label}: expected an amount in US dollars > 0, got {value!r}")
    return amount


def repeat(value: Any, label: str) -> int:
    # The same bound as a scenario's `repeat:`.
    from pytest_ooda.scenario import MAX_REPEAT

    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_REPEAT:
        raise UsageError(
            f"{label}: expected a number of runs from 1 to {MAX_REPEAT}, got {value!r}"
        )
    return int(text)


def ai_output(value: Any, label: str) -> str | None:
    """An output format: ``text`` or one an agent registers (an installed plugin's too)."""
    name = str(value).strip()
    if not name:
        return None
    from pytest_ooda.agents import output_format
    from pytest_ooda.errors import ConfigError

    try:
        output_format(name)
    except ConfigError as exc:
        hint = f"; {exc.hint}" if exc.hint else ""
        raise UsageError(f"{label}: {exc.message.removeprefix('ai_output: ')}{hint}") from None
    return name


def sandbox(value: Any, label: str) -> str | None:
    """A sandbox kind: a built-in one or one an installed plugin registers."""
    kind = str(value).strip()
    if not kind:
        return None
    from pytest_ooda.sandbox import OptionError, load_kind

    try:
        load_kind(kind)
    except OptionError as exc:
        raise UsageError(f"{label}: {exc.one_line()}") from None
    return kind


def executor(value: Any, label: str) -> str:
    """``local`` or ``ENGINE:ADDRESS``: the engine is looked up by the cluster
    feature, which also says when its extra is not installed."""
    text = str(value).strip()
    if not text:
        raise UsageError(f"{label}: expected local or ENGINE:ADDRESS, got an empty value")
    return text


def ship(value: Any, label: str) -> tuple[str, ...]:
    """Files of the project, each relative to the rootdir and inside it."""
    from pathlib import PurePosixPath

    paths = []
    for item in value:
        path = PurePosixPath(str(item).strip())
        if not path.parts or path.is_absolute() or ".." in path.parts:
            raise UsageError(
                f"{label}: expected a file of the project, relative to the rootdir, got {item!r}"
            )
        paths.append(path.as_posix())
    return tuple(paths)


def config_file(value: Any, label: str) -> Path:
    path = Path(value)
    if not path.is_file():
        what = "config file not found" if not path.exists() else "not a file"
        raise UsageError(f"{label}: {what}: {path}")
    return path


def _directory(value: Any, label: str, noun: str = "directory") -> Path:
    """An existing directory (already made absolute from where it was given)."""
    path = Path(value)
    if not path.is_dir():
        what = f"{noun} not found" if not path.exists() else "not a directory"
        raise UsageError(f"{label}: {what}: {path}")
    return path


def scenario_dir(value: Any, label: str) -> Path:
    return _directory(value, label, "scenario directory")


def directories(value: Any, label: str) -> tuple[Path, ...]:
    return tuple(_directory(item, label) for item in value)


def results(value: Any, label: str) -> Path:
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{label}: not a directory: {path}")
    return path


def shard(value: Any, label: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if match is None:
        raise UsageError(f"{label}: expected K/N (share K of N, e.g. 2/4), got {value!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(
            f"{label}: {value!r}: K must be from 1 to N and N at least 1 (e.g. 1/4 … 4/4)"
        )
    return index, count


def variants(value: Any, label: str) -> tuple[Variant, ...]:
    """``NAME:KEY=VALUE,...`` entries, each checked up front; a name given twice is a
    mistake."""
    from pytest_ooda.variants import parse_option

    found: dict[str, Variant] = {}
    for text in value:
        try:
            variant = parse_option(text)
        except OodaError as exc:
            raise UsageError(f"{label}: {exc}") from None
        if variant.name in found:
            raise UsageError(f"{label}: variant {variant.name!r} is given twice")
        found[variant.name] = variant
    return tuple(found.values())


def lint_severity(value: Any, label: str) -> tuple[str, ...]:
    """``RULE=LEVEL`` entries, checked up front against the rules."""
    from pytest_ooda.lint import parse_severity_overrides

    entries = texts(value, label)
    try:
        parse_severity_overrides(entries, source=label)
    except OodaError as exc:
        raise UsageError(str(exc)) from None
    return entries


def globs(value: Any, label: str) -> tuple[str, ...]:
    """Globs matched against paths relative to the rootdir: an absolute one, or one
    climbing out with ``..``, could never match anything."""
    globs = texts(value, label)
    for glob in globs:
        if Path(glob).is_absolute() or glob.startswith(("/", "\\")) or ".." in Path(glob).parts:
            raise UsageError(
                f"{label}: {glob!r} can never match: globs are relative to the rootdir "
                "and stay inside it (set the rootdir higher, or name the file with "
                "--ooda-config)"
            )
    return globs

"""A row of the settings table (:class:`Setting`), a value as a front end found it
(:class:`Given`), and the frozen value a session's settings are decided into
(:class:`SessionSettings`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pytest_ooda import _types
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pytest_ooda._types import Front, SettingKind
    from pytest_ooda.config import Provenance

T = TypeVar("T", covariant=True)

#: Where the results log goes without ``--ooda-results`` (under the root); the first
#: part is the directory given a ``.gitignore`` when the log creates it.
DEFAULT_RESULTS_DIR = (".ooda", "results")


@dataclass(frozen=True, eq=False)
class Given:
    """A setting's value as a front end found it, before it is checked."""

    #: Text; a tuple of texts for a repeatable setting; ``True`` for a flag given.
    value: Any
    #: ``cli``, ``env`` or ``ini``: the provenance tier of what it decides.
    tier: str
    #: How messages and provenance name where it was given: ``--ooda-max-cost``,
    #: ``ini option ooda_max_cost``, ``environment variable OODA_EXECUTOR``, ``--max-cost``.
    label: str
    #: The directory a relative path in it is read from (a path setting's).
    base: Path | None = None


@dataclass(frozen=True, eq=False)
class Setting(Generic[T]):
    """One row of the table: a setting, where a user gives it and how it is checked.
    A row is a declaration: two rows are the same setting when they are the same row
    (``eq=False``), and ``settings[ROW]`` reads its value by the row's name."""

    name: str
    help: str
    #: The given value (text, a tuple of texts, ``True``) and its label -> the value, or
    #: a ``UsageError`` whose message starts with the label.
    check: Callable[[Any, str], T]
    #: ``value`` (one text), ``flag`` (no value), ``list`` (repeatable), ``optional`` (a
    #: flag whose value may be left out: ``const``).
    kind: SettingKind = "value"
    default: T | None = None
    #: A closed vocabulary: shown in help, a near miss offered in the error.
    choices: tuple[str, ...] = ()
    const: str | None = None
    metavar: str | None = None
    #: The pytest flag (``--ooda-x-y``, dest ``ooda_x_y``); ``None``: not a pytest option.
    pytest: str | None = None
    #: ``ooda run``'s spellings (``("--max-iterations", "-n")``); empty: not one of its.
    ooda: tuple[str, ...] = ()
    #: Its help in ``ooda run --help``, where it reads differently there.
    ooda_help: str | None = None
    #: ``ooda run`` flags of one group are mutually exclusive (``--ai-cmd``, ``--ai-cmd-alias``).
    group: str | None = None
    #: The ini key (``ooda_x_y``); ``None``: none.
    ini: str | None = None
    #: A variable that gives it too: beaten by the command line, beating the ini file.
    env: str | None = None
    #: The ``loop:`` key whose command-line tier it is, wherever the config is read.
    config: str | None = None
    #: The ``resolve_run_settings`` keyword it overrides for every run.
    run: str | None = None
    #: A path, relative to where it was given (the invocation directory, the ini file's).
    path: bool = False

    @property
    def dest(self) -> str:
        """The attribute argparse stores its pytest flag under (``ooda_x_y``)."""
        assert self.pytest is not None
        return self.pytest.removeprefix("--").replace("-", "_")

    @property
    def shown(self) -> str | None:
        """The metavar ``--help`` shows: the choices where there are some."""
        if self.choices:
            return "{" + ",".join(self.choices) + "}"
        return self.metavar

    def flag(self, front: Front) -> str:
        """How a message names this setting on ``front`` when nobody gave it."""
        if front == "ooda" and self.ooda:
            return self.ooda[0]
        if self.pytest is not None:
            return self.pytest
        return f"ini option {self.ini}" if self.ini is not None else self.name

    def decide(self, given: Given) -> T:
        """The value ``given`` stands for, checked (a ``UsageError`` naming its label)."""
        value = given.value
        if self.kind == "flag" and isinstance(value, str):
            truth = _types.parse_bool(value)
            if truth is None:
                raise UsageError(
                    f"{given.label}: invalid truth value {value!r} (use true or false)"
                )
            value = truth
        if self.path:
            if not all(str(item).strip() for item in (value if self.kind == "list" else [value])):
                raise UsageError(f"{given.label}: expected a path, got an empty value")
            base = given.base or Path.cwd()
            value = tuple(base / item for item in value) if self.kind == "list" else base / value
        if self.choices:
            value = choice(value, given.label, self.choices)
        return self.check(value, given.label)


def choice(value: Any, label: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``; a near miss is offered (``did you mean 'once'?``)."""
    from pytest_ooda._util import closest

    text = str(value).strip()
    if text in choices:
        return text
    near = closest(text, choices)
    offered = ", ".join(repr(item) for item in choices)
    raise UsageError(
        f"{label}: invalid choice: {text!r} (choose from {offered})"
        + (f"; did you mean {near!r}?" if near else "")
    )


@dataclass(frozen=True, eq=False)
class SessionSettings:
    """What a pytest session or an ``ooda run`` decided for all its runs: each row's
    value by name (read typed with ``settings[ROW]``), and where each given one came
    from. Made by :func:`~pytest_ooda.settings.decide`."""

    #: The project root (pytest's rootdir, ``ooda``'s working directory): scenario
    #: workspaces lie inside it, paths in records are shown relative to it.
    root: Path
    #: Which front end decided it (which flags its messages name).
    front: Front = "pytest"
    #: Every row's value, given or its default, by name.
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: The tier of each row given (``cli``, ``env``, ``ini``), by name.
    tiers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: How messages and provenance name each row: where it was given, else its flag.
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: The run settings given: ``resolve_run_settings`` keyword -> row name.
    run: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: The ``loop:`` keys given for the config's command-line tier -> row name.
    config: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Stream the agent's output (``pytest -s``, ``ooda run --verbose``); ``None``: the
    #: config's ``show_ai_output``.
    show_ai_output: bool | None = None

    def __getitem__(self, setting: Setting[T]) -> T:
        value: T = self.values.get(setting.name, setting.default)
        return value

    def given(self, name: str) -> bool:
        """Whether setting ``name`` was given (not left at its default)."""
        return name in self.tiers

    def label(self, name: str) -> str:
        """How a message names setting ``name``: where it was given, else its flag."""
        return self.labels.get(name, name)

    def provenance(self, name: str) -> Provenance:
        """Where setting ``name`` came from, as a run's settings record it."""
        from pytest_ooda.config import Provenance

        if name == "show_ai_output":
            if not self.show_ai_output:
                return Provenance("default")
            return Provenance("cli", source="--verbose" if self.front == "ooda" else "-s")
        return Provenance(self.tiers.get(name, "default"), source=self.label(name))

    def but(self, **values: Any) -> SessionSettings:
        """These settings with some rows' values changed by the caller (an agent replay
        writes nothing: ``record_mode="none"``), by row name."""
        unknown = sorted(set(values) - set(self.values))
        if unknown:
            raise TypeError(f"no such setting: {', '.join(unknown)}")
        return replace(self, values=MappingProxyType({**self.values, **values}))

    def run_overrides(self) -> dict[str, Any]:
        """The run settings given, by the keyword ``resolve_run_settings`` takes."""
        return {keyword: self.values[name] for keyword, name in self.run.items()}

    def config_overrides(self) -> dict[str, Any] | None:
        """The command line's tier of ``loop:`` keys, as ``load_config`` takes it."""
        given = {key: self.values[name] for key, name in self.config.items()}
        return given or None

    def runs_for(self, scenario_repeat: int | None) -> int:
        """How many times a live scenario runs: ``--ooda-repeat`` on the command line,
        else the scenario's ``repeat:``, else the ini key, else once."""
        repeat: int | None = self.values.get("repeat")
        if repeat is not None and self.tiers.get("repeat") == "cli":
            return repeat
        return scenario_repeat or repeat or 1

    @property
    def results_dir(self) -> Path:
        """The results log's directory, which also holds ``expect.judge``'s cache."""
        given: Path | None = self.values.get("results")
        return given or self.root.joinpath(*DEFAULT_RESULTS_DIR)

    @property
    def ignore_dir(self) -> Path | None:
        """A directory to create with a ``.gitignore`` of ``*`` if a run writes into it
        first (the default ``.ooda/``), so nothing written there reaches a commit."""
        return None if self.given("results") else self.root / DEFAULT_RESULTS_DIR[0]

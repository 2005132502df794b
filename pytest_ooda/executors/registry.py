"""Which engines ``--ooda-executor=ENGINE:ADDRESS`` can name — ``local`` (no engine: the
runs are made in the pytest session, as always), the built-in ``dask`` and ``ray``, and
those of the ``pytest_ooda.executors`` entry-point group — reading the option's value,
and opening the engine it names before any run.

An entry point's name is the engine's name and its value a factory that takes the
address and returns an :class:`~pytest_ooda.executors.Engine`::

    [project.entry-points."pytest_ooda.executors"]
    mycloud = "mypackage.ooda:MyCloudEngine"
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean
from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors.base import Engine

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ENTRY_POINT_GROUP",
    "LOCAL",
    "ExecutorSpec",
    "engines",
    "make_engine",
    "open_engine",
    "parse_executor",
]

#: The entry-point group an out-of-tree engine registers under (name = the engine).
ENTRY_POINT_GROUP = "pytest_ooda.executors"
#: The default: live runs are made by the pytest session itself.
LOCAL = "local"
#: The built-in engines: the module and class of each, and the extra that installs it.
_BUILTIN = {
    "dask": ("pytest_ooda.executors.dask_engine:DaskEngine", "dask"),
    "ray": ("pytest_ooda.executors.ray_engine:RayEngine", "ray"),
}
#: Where the option's value is explained (in messages).
DOCS = "`ooda help scale-out`"


@dataclass(frozen=True)
class ExecutorSpec:
    """A read ``--ooda-executor`` value: ``engine`` and its ``address`` (``""`` for
    ``local``)."""

    engine: str
    address: str = ""

    @property
    def local(self) -> bool:
        return self.engine == LOCAL

    def __str__(self) -> str:
        return self.engine if self.local else f"{self.engine}:{self.address}"


def _plugins() -> dict[str, Any]:
    """The group's entry points by name (``importlib.metadata`` imported where it is
    used, as the agent and sandbox registries do: a local session never needs it)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def engines() -> tuple[str, ...]:
    """Every engine that can be named: ``local``, the built-in ones, installed plugins'."""
    return (LOCAL, *_BUILTIN, *sorted(set(_plugins()) - set(_BUILTIN) - {LOCAL}))


def parse_executor(text: str) -> ExecutorSpec:
    """``local``, or ``ENGINE:ADDRESS`` with a known engine and a non-empty address;
    ``ExecutorError`` naming the known engines otherwise. The address is the engine's
    to read (``dask:tcp://10.0.0.5:8786``, ``ray:auto``, ``ray:ray://head:10001``)."""
    value = text.strip()
    if value == LOCAL:
        return ExecutorSpec(LOCAL)
    engine, colon, address = value.partition(":")
    engine = engine.strip()
    if engine not in engines():
        hint = did_you_mean(engine, engines(), label="known engines")
        raise ExecutorError(
            f"unknown engine {engine!r} in {value!r}: expected local, or ENGINE:ADDRESS",
            hint=f"{hint}\n  e.g. dask:tcp://scheduler:8786 or ray:auto; see {DOCS}",
        )
    if engine == LOCAL:
        raise ExecutorError(f"{value!r}: local takes no address")
    if not colon or not address.strip():
        raise ExecutorError(
            f"{value!r}: the {engine} engine needs the address of its cluster, {engine}:ADDRESS",
            hint=f"e.g. {_EXAMPLES.get(engine, engine + ':ADDRESS')}; see {DOCS}",
        )
    return ExecutorSpec(engine, address.strip())


_EXAMPLES = {"dask": "dask:tcp://127.0.0.1:8786", "ray": "ray:auto or ray:127.0.0.1:6379"}


def _factory(engine: str) -> tuple[Callable[[str], Engine], str | None]:
    """The factory of ``engine`` and the extra that installs it (``None`` for a
    plugin's)."""
    if engine in _BUILTIN:
        target, extra = _BUILTIN[engine]
        module, _, name = target.partition(":")
        built: Callable[[str], Engine] = getattr(importlib.import_module(module), name)
        return built, extra
    plugin = _plugins()[engine]
    try:
        loaded = plugin.load()
    except Exception as exc:  # a broken plugin is the user's to fix, not a crash
        raise ExecutorError(
            f"engine {engine!r} (entry point {plugin.value}) cannot be loaded: {exc}"
        ) from None
    if not callable(loaded):
        raise ExecutorError(f"engine {engine!r} (entry point {plugin.value}) is not callable")
    return loaded, None


def make_engine(spec: ExecutorSpec) -> Engine:
    """The engine ``spec`` names, not connected yet: ``ExecutorError`` naming the extra
    to install when its library is missing."""
    factory, extra = _factory(spec.engine)
    try:
        engine = factory(spec.address)
    except ImportError as exc:
        package = extra or spec.engine
        raise ExecutorError(
            f"--ooda-executor={spec}: the {spec.engine} engine is not installed "
            f"({exc.name or exc})",
            hint=f"install it: pip install 'pytest-ooda[{package}]'",
        ) from None
    if not isinstance(engine, Engine):
        raise ExecutorError(
            f"engine {spec.engine!r} made a {type(engine).__name__}, "
            "not a pytest_ooda.executors.Engine"
        )
    return engine


def open_engine(spec: ExecutorSpec, session: str) -> Engine:
    """The engine ``spec`` names, connected to its cluster for session ``session``:
    ``ExecutorError`` when its extra is not installed (naming it) or its cluster cannot
    be reached (naming the address), before any run."""
    engine = make_engine(spec)
    engine.connect(session)
    return engine

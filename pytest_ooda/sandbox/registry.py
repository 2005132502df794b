"""Which sandbox kinds exist (the built-in ones and those of the
``pytest_ooda.sandboxes`` entry-point group), reading a ``sandbox:`` value into a
:class:`~pytest_ooda.sandbox.spec.SandboxSpec`, and one prepared :class:`Sandbox` per
spec and process (so an image is checked or built once per session)."""

from __future__ import annotations

import contextlib
import importlib
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import did_you_mean
from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox.base import Sandbox
from pytest_ooda.sandbox.spec import OptionError, SandboxSpec, check_options

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from pytest_ooda.errors import SandboxWarning
    from pytest_ooda.sandbox.base import SandboxRun

__all__ = [
    "DOCS",
    "ENTRY_POINT_GROUP",
    "kinds",
    "load_kind",
    "open_sandbox",
    "parse_spec",
    "sandboxed",
    "unattended_warning",
]

#: Where the sandbox is explained (in messages).
DOCS = "`ooda help sandbox`"

#: The entry-point group out-of-tree sandboxes register under (name = the kind).
ENTRY_POINT_GROUP = "pytest_ooda.sandboxes"
_BUILTIN = {
    "none": "pytest_ooda.sandbox.none:NoSandbox",
    "bwrap": "pytest_ooda.sandbox.bwrap:BwrapSandbox",
    "docker": "pytest_ooda.sandbox.docker:DockerSandbox",
}
_loaded: dict[str, type[Sandbox]] = {}
_open: dict[tuple[str, str, str], Sandbox] = {}


def _plugins() -> dict[str, Any]:
    """The installed plugins' kinds (reading the distributions' metadata: only when a
    kind is looked up that is not built in, or every kind is listed)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def kinds() -> tuple[str, ...]:
    """Every kind that can be named: the built-in ones first, then installed plugins."""
    return (*_BUILTIN, *sorted(set(_plugins()) - set(_BUILTIN)))


def _kind_hint(kind: str) -> str:
    """Did you mean, and the known kinds. A container engine's name is the ``docker``
    kind with that engine (Podman takes the same flags)."""
    from pytest_ooda._types import CONTAINER_ENGINES

    if kind in CONTAINER_ENGINES:
        known = ", ".join(sorted(kinds()))
        return (
            f"did you mean 'docker'? ({kind} is an engine of the docker kind: "
            f"sandbox: {{kind: docker, engine: {kind}}})\n  known kinds: {known}"
        )
    return did_you_mean(kind, kinds(), label="known kinds")


def load_kind(kind: str) -> type[Sandbox]:
    """The class of ``kind``; ``OptionError`` naming the known kinds when there is none."""
    found = _loaded.get(kind)
    if found is not None:
        return found
    cls: Any
    if kind in _BUILTIN:
        module, _, name = _BUILTIN[kind].partition(":")
        cls = getattr(importlib.import_module(module), name)
    else:
        plugin = _plugins().get(kind)
        if plugin is None:
            raise OptionError(f"unknown sandbox kind {kind!r}", hint=_kind_hint(kind))
        try:
            cls = plugin.load()
        except Exception as exc:  # a broken plugin is the user's to fix, not a crash
            raise OptionError(
                f"sandbox kind {kind!r} (entry point {plugin.value}) cannot be loaded: {exc}"
            ) from None
        if not (isinstance(cls, type) and issubclass(cls, Sandbox)):
            raise OptionError(
                f"sandbox kind {kind!r} (entry point {plugin.value}) is not a "
                "pytest_ooda.sandbox.Sandbox subclass"
            )
    checked: type[Sandbox] = cls
    _loaded[kind] = checked
    return checked


def parse_spec(value: Any, *, base_dir: Path | None = None) -> SandboxSpec:
    """A ``sandbox:`` value — a kind name, or a mapping with ``kind`` and the kind's
    options — checked; ``OptionError`` (with the offending key) otherwise."""
    if isinstance(value, SandboxSpec):
        return value
    if isinstance(value, str):
        load_kind(value.strip())
        return SandboxSpec(value.strip(), base_dir=base_dir, bare=True)
    if not isinstance(value, dict) and not hasattr(value, "items"):
        raise OptionError("expected a kind name (none, bwrap, docker) or a mapping with kind:")
    options = dict(value.items())
    kind = options.pop("kind", None)
    if not isinstance(kind, str) or not kind:
        raise OptionError("a sandbox mapping needs kind: (none, bwrap, docker, or a plugin's)")
    cls = load_kind(kind)
    checked = check_options(cls.options, options, kind)
    return SandboxSpec(kind, MappingProxyType(checked), base_dir=base_dir, bare=False)


def _key(spec: SandboxSpec) -> tuple[str, str, str]:
    return (spec.kind, repr(sorted(spec.options.items())), str(spec.base_dir))


def open_sandbox(spec: SandboxSpec) -> Sandbox:
    """The prepared sandbox for ``spec``, made once per process: its checks (program,
    daemon, image, build) run before the first run and raise ``SandboxError``."""
    key = _key(spec)
    sandbox = _open.get(key)
    if sandbox is None:
        try:
            cls = load_kind(spec.kind)
        except OptionError as exc:
            raise SandboxError(exc.message) from None
        sandbox = cls(spec)
        sandbox.prepare()
        _open[key] = sandbox
    return sandbox


def identity_of(spec: SandboxSpec) -> Mapping[str, str | None]:
    """``{"kind", "image", "image_id"}`` of ``spec`` without starting anything."""
    return open_sandbox(spec).identity()


def isolates(spec: SandboxSpec | None) -> bool:
    """Whether ``spec`` isolates what runs in it (``None`` and ``none`` do not)."""
    if spec is None or spec.kind == "none":
        return False
    try:
        return load_kind(spec.kind).isolates
    except OptionError:
        return False


@contextlib.contextmanager
def sandboxed(spec: SandboxSpec | None, workspace: Path) -> Iterator[SandboxRun | None]:
    """A started run of ``spec`` around ``workspace``, stopped however the block ends
    (Ctrl-C included); ``None`` for no sandbox, which costs nothing. ``SandboxError``
    before anything starts when the sandbox cannot be used."""
    if spec is None or spec.kind == "none":
        yield None
        return
    sandbox = open_sandbox(spec)
    with tempfile.TemporaryDirectory(prefix="ooda-sandbox-") as scratch:
        run = sandbox.start(workspace, Path(scratch))
        try:
            yield run
        finally:
            run.stop()


def unattended_warning(
    spec: SandboxSpec | None, argv: Sequence[str] | None
) -> SandboxWarning | None:
    """The one-line note for an agent that runs unattended (its permission checks off,
    as the agent says of ``argv``) with no sandbox; ``None`` when there is a sandbox or
    the agent asks first."""
    from pytest_ooda.agents import agent_for
    from pytest_ooda.errors import SandboxWarning

    if argv is None or isolates(spec):
        return None
    if not agent_for(argv).unattended(argv):
        return None
    return SandboxWarning(
        f"the agent runs unattended ({argv[0]} with its permission checks off) and with no "
        f"sandbox: it can read and write whatever you can; set sandbox: bwrap or docker "
        f"(see {DOCS})"
    )

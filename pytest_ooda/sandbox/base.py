"""The sandbox interface: what a kind of isolation must provide for a live run.

A :class:`Sandbox` is one configured kind for a whole session: :meth:`Sandbox.prepare`
runs once before any run (program present, daemon reachable, image present or built)
and raises :class:`~pytest_ooda.errors.SandboxError` naming what to do. For each run it
:meth:`~Sandbox.start`\\ s a :class:`SandboxRun` around the run's workspace; that turns
the argv, environment and working directory of every process of the run (the agent each
iteration, the verification commands afterwards) into what is actually started
(:meth:`SandboxRun.launch`), and :meth:`SandboxRun.stop` removes whatever the run left.
A remote backend (Kubernetes, Modal, E2B) implements the same two classes and is
registered under the ``pytest_ooda.sandboxes`` entry-point group (docs/sandbox.md).
"""

from __future__ import annotations

import os
import shutil
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_ooda.errors import SandboxError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda._types import ProxyAccess
    from pytest_ooda.sandbox.spec import SandboxSpec

__all__ = [
    "BASE_ENV",
    "Launch",
    "Sandbox",
    "SandboxRun",
    "allowed_env",
    "fresh_home",
    "launcher_failure",
    "scrub_workspace",
]

#: Variables every isolating sandbox passes through; ``env:`` adds more.
BASE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")


@dataclass(frozen=True)
class Launch:
    """What is actually started for one process of a run."""

    argv: tuple[str, ...]
    env: Mapping[str, str] | None
    cwd: Path


class SandboxRun(ABC):
    """One run inside a sandbox: started by :meth:`Sandbox.start`, stopped once."""

    #: ``{"kind", "image", "image_id"}`` for results logs, reports and recordings.
    identity: Mapping[str, str | None]
    #: What :meth:`stop` had to undo in the workspace (a set-user-ID bit, a device
    #: node), one line each, for a warning.
    notes: Sequence[str] = ()
    #: The fresh ``HOME`` the run's processes get (``None``: the caller's).
    home: Path | None = None

    @abstractmethod
    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path) -> Launch:
        """The process to start for ``argv`` with ``env`` (``None``: the caller's
        environment) in ``cwd`` (the workspace or below)."""

    def not_started(self, exit_code: int, output: str) -> str | None:
        """Why the process that ended with ``exit_code`` and ``output`` (its first
        bytes) never got to start the command — the launcher's own failure (``bwrap:
        execvp …``, ``docker exec``'s 126/127) — or ``None`` when it did start."""
        return None

    def network_pid(self) -> int | None:
        """A host process id in the network namespace every process of this run shares
        (a container's), where a service for the run can listen on its loopback;
        ``None`` when the run has none of its own for its whole life (the host's network,
        or one per process)."""
        return None

    def stop(self) -> None:  # noqa: B027 - optional hook: most kinds hold nothing
        """Remove what the run left (a container, a process tree); safe to call twice."""

    def __enter__(self) -> SandboxRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Sandbox(ABC):
    """A kind of isolation, configured by ``spec``; see the module docstring."""

    #: The name under ``sandbox: {kind: …}`` and ``--ooda-sandbox``.
    kind: ClassVar[str]
    #: The option checks: key -> a function returning the checked value or raising
    #: :class:`~pytest_ooda.sandbox.spec.OptionError`.
    options: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    #: Whether an agent in it is isolated from the user's machine (``none``: not).
    isolates: ClassVar[bool] = True

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec

    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Check (and build) what every run needs, once per session, before any run."""

    @classmethod
    def proxy_access(cls, options: Mapping[str, Any]) -> ProxyAccess:
        """How an agent in this kind, with ``options``, reaches a proxy listening on the
        host's loopback (agent record and replay): ``loopback`` (it shares the host's
        network), ``relay`` (each process has a network of its own: the agent is
        started under a relay that gets connections as descriptors) or ``netns`` (the
        run's processes share one network namespace, where the proxy listens too:
        :meth:`SandboxRun.network_pid`). A remote backend that cannot reach the host
        says ``loopback`` and documents what it forwards."""
        return "loopback"

    def identity(self) -> Mapping[str, str | None]:
        """``{"kind", "image", "image_id"}`` of this sandbox."""
        return {"kind": self.kind, "image": None, "image_id": None}

    def inside_uid(self) -> int | None:
        """The uid processes have inside (``None``: not known, e.g. a remote backend)."""
        return None

    def agent_problem(self, argv: Sequence[str], env: Mapping[str, str] | None) -> str | None:
        """Why the agent ``argv`` (with the caller's ``env``) cannot start inside this
        sandbox, naming the path, or ``None``; checked before any run (and by the dry
        run), after :meth:`prepare`. Nothing of the agent is run."""
        return None

    @abstractmethod
    def start(self, workspace: Path, scratch: Path) -> SandboxRun:
        """A run around ``workspace`` (the only place it may write); ``scratch`` is an
        empty directory of the caller's for the run's own files (its fresh HOME)."""


def allowed_env(
    env: Mapping[str, str] | None, listed: Sequence[str], **fixed: str
) -> dict[str, str]:
    """The environment a sandboxed process gets: :data:`BASE_ENV` and the ``listed``
    names taken from ``env`` (the caller's), ``NAME=value`` entries set as written, then
    ``fixed``."""
    source = os.environ if env is None else env
    out: dict[str, str] = {}
    for name in BASE_ENV:
        if name in source:
            out[name] = source[name]
    for item in listed:
        name, equals, value = item.partition("=")
        if equals:
            out[name] = value
        elif name in source:
            out[name] = source[name]
    out.update(fixed)
    return out


def fresh_home(scratch: Path, files: Sequence[str], env: Mapping[str, str] | None) -> Path:
    """A new, empty HOME under ``scratch`` holding copies of ``files`` (``~/x`` or paths
    relative to the caller's HOME, or absolute paths under it), so an agent sees its
    own config and credentials and nothing else of the real home."""
    source = os.environ if env is None else env
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    real = Path(source.get("HOME") or os.path.expanduser("~"))
    for entry in files:
        given = Path(entry[2:]) if entry.startswith("~/") else Path(entry)
        origin = given if given.is_absolute() else real / given
        try:
            relative = origin.relative_to(real)
        except ValueError:
            raise SandboxError(
                f"home_files: {entry} is not under HOME ({real})",
                hint="list files of your home directory (e.g. ~/.config/my-agent/)",
            ) from None
        target = home / relative
        if origin.is_dir():
            shutil.copytree(origin, target, symlinks=True, dirs_exist_ok=True)
        elif origin.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
        # A listed file that does not exist is no error: credentials are optional.
    return home


def launcher_failure(exit_code: int, output: str, prefixes: Sequence[str]) -> str | None:
    """The launcher's last message when ``output`` is nothing but its messages (each
    line starting with one of ``prefixes``) and ``exit_code`` is a failure: the command
    itself never ran, so nothing else could have been said."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if exit_code == 0 or not lines or len(lines) > 5:
        return None
    if all(line.startswith(tuple(prefixes)) for line in lines):
        return lines[-1].strip()
    return None


def scrub_workspace(root: Path) -> list[str]:
    """Clear the set-user-ID and set-group-ID bits of files and remove device nodes
    under ``root``, so nothing a run left there gains privileges on the host; one line
    per change. Links are not followed."""
    notes: list[str] = []
    for directory, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(directory, name)
            try:
                info = path.lstat()
            except OSError:
                continue
            shown = path.relative_to(root).as_posix()
            if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
                try:
                    path.unlink()
                    notes.append(f"{shown}: a device node, removed")
                except OSError as exc:
                    notes.append(f"{shown}: a device node, which could not be removed: {exc}")
            elif stat.S_ISREG(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                try:
                    path.chmod(stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
                    notes.append(f"{shown}: its set-user/group-ID bit was cleared")
                except OSError as exc:
                    notes.append(f"{shown}: a set-user/group-ID file, left as it is: {exc}")
    return notes

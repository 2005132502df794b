"""The ``bwrap`` sandbox (Linux, bubblewrap): the host file system read-only, the run's
workspace the only writable place, a private ``/tmp``, ``/run`` and home directories, a
fresh ``HOME`` per run, the environment by allow-list, the network of the host or none,
and an own PID namespace that dies with the run (``--die-with-parent``), so no process
of the run outlives it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox.base import Launch, Sandbox, SandboxRun, allowed_env, fresh_home
from pytest_ooda.sandbox.spec import BWRAP_OPTIONS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.sandbox.spec import SandboxSpec

__all__ = ["BwrapSandbox", "bwrap_argv"]

INSTALL = "apt-get install -y bubblewrap"
#: Directories hidden behind an empty, read-only tmpfs: the homes and the runtime
#: directory (sockets such as a Docker daemon's, which a read-only bind does not stop a
#: process from connecting to).
HIDDEN = ("/home", "/root", "/run")
#: Replaced by a private, writable tmpfs: the shared temporary directories (where
#: sibling runs' workspaces live).
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
#: Kept visible inside a hidden directory: the resolver's files (``/etc/resolv.conf``
#: often links there) so an agent with ``network: host`` still finds its API.
KEPT = ("/run/systemd/resolve",)


def bwrap_argv(
    program: str,
    *,
    workspace: Path,
    home: Path,
    network: str,
    real_home: str | None,
    expose: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line for one run (the command to run is appended)."""
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = [path for path in HIDDEN if os.path.isdir(path)]
    if (
        real_home
        and os.path.isdir(real_home)
        and not any(
            real_home == path or real_home.startswith(path + "/") for path in (*hidden, *PRIVATE)
        )
    ):
        hidden.append(real_home)
    for path in (*hidden, *PRIVATE):
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
    for path in KEPT:
        if os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in expose:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", str(workspace), str(workspace), "--bind", str(home), str(home)]
    for path in hidden:  # after the binds: their mount points are made in the tmpfs
        argv += ["--remount-ro", path]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    argv += ["--new-session"]
    if network == "none":
        argv.append("--unshare-net")
    return argv


class _BwrapRun(SandboxRun):
    def __init__(self, sandbox: BwrapSandbox, workspace: Path, scratch: Path) -> None:
        self.sandbox = sandbox
        self.workspace = workspace.resolve()
        options = sandbox.spec.options
        self.home = fresh_home(scratch, options.get("home_files", ()), None).resolve()
        self.identity = sandbox.identity()
        self.prefix = bwrap_argv(
            sandbox.program,
            workspace=self.workspace,
            home=self.home,
            network=options.get("network", "host"),
            real_home=os.environ.get("HOME"),
            expose=[str(Path(p).expanduser().resolve()) for p in options.get("expose", ())],
        )

    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path) -> Launch:
        inner = allowed_env(
            env,
            self.sandbox.spec.options.get("env", ()),
            HOME=str(self.home),
            TMPDIR="/tmp",
            OODA_SANDBOXED="bwrap",
        )
        # The values travel in bwrap's own environment (kept for the child), never in
        # its argv, where any process could read them.
        return Launch((*self.prefix, "--chdir", str(cwd.resolve()), "--", *argv), inner, cwd)


class BwrapSandbox(Sandbox):
    """See the module docstring; options: ``network`` (host | none), ``env``,
    ``home_files``, ``expose`` (paths inside hidden directories to show read-only, e.g.
    an agent installed under ``~/.local``)."""

    kind = "bwrap"
    options = BWRAP_OPTIONS

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.program = "bwrap"
        self.version: str | None = None

    def prepare(self) -> None:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxError(
                "sandbox bwrap: bubblewrap is not installed", hint=f"install it: {INSTALL}"
            )
        self.program = found
        probe = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        probe += ["--unshare-pid", "--die-with-parent", "true"]
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode != 0:
            raise SandboxError(
                f"sandbox bwrap: bubblewrap cannot create a sandbox here: "
                f"{done.stderr.strip() or f'exit {done.returncode}'}",
                hint="unprivileged user namespaces may be off "
                "(sysctl kernel.unprivileged_userns_clone=1), or run in a VM/container "
                "that allows them; see `ooda help sandbox`",
            )
        version = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
        self.version = version.stdout.strip() or None

    def start(self, workspace: Path, scratch: Path) -> SandboxRun:
        return _BwrapRun(self, workspace, scratch)

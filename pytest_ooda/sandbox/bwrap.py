"""The ``bwrap`` sandbox (Linux, bubblewrap): the host file system read-only, the run's
workspace the only writable place, a private ``/tmp``, ``/run`` and home directories, a
fresh ``HOME`` per run, the environment by allow-list, the network of the host or none,
and an own PID namespace that dies with the run (``--die-with-parent``), so no process
of the run outlives it.

Run as root, bubblewrap would keep every capability for the agent, which could then
unmount what hides the homes or remount ``/`` writable. So every capability is dropped
(``--cap-drop ALL``) and, where the kernel allows user namespaces, the agent runs in its
own as an ordinary uid (:data:`INSIDE_UID` for root, your own otherwise) that cannot
make further ones (``--disable-userns``). A seccomp filter (:mod:`.seccomp`) refuses
set-user-ID files, the kernel keyring, ``io_uring`` and, under ``network: none``, every
socket that could reach outside (a Unix socket on the file system included). A pids
cgroup or ``RLIMIT_NPROC`` caps the run's processes (:mod:`.limits`). The agent's own
executable is shown read-only where the sandbox would hide it (:mod:`.executable`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox.base import (
    Launch,
    Sandbox,
    SandboxRun,
    allowed_env,
    fresh_home,
    launcher_failure,
    scrub_workspace,
)
from pytest_ooda.sandbox.executable import NotVisible, agent_needs
from pytest_ooda.sandbox.limits import process_limit
from pytest_ooda.sandbox.seccomp import native_arch, seccomp_filter
from pytest_ooda.sandbox.spec import BWRAP_OPTIONS, DEFAULT_PIDS_LIMIT

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import ProxyAccess
    from pytest_ooda.sandbox.executable import AgentNeeds
    from pytest_ooda.sandbox.spec import SandboxSpec

__all__ = ["INSIDE_UID", "BwrapSandbox", "bwrap_argv"]

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
#: The uid (and gid) the agent has inside when root starts the sandbox: an ordinary
#: user's, so nothing inside runs as root (Claude Code then needs no ``IS_SANDBOX``).
INSIDE_UID = 1000
#: The file descriptor bubblewrap reads the seccomp filter from (opened by the shell
#: that starts it: a launch is an argv). The last one a POSIX shell can name, far from
#: the low numbers a caller's ``pass_fds`` (inherited through this launcher) get.
_SECCOMP_FD = 9
# $1: the filter, $2: the run's cgroup.procs (or empty), then the command.
_WRAPPER = (
    'f=$1; p=$2; shift 2; if [ -n "$p" ]; then echo $$ > "$p" || exit 125; fi; exec "$@" 9<"$f"'
)
_WRAPPER_NAME = "ooda-bwrap"


def bwrap_argv(
    program: str,
    *,
    workspace: Path,
    home: Path,
    network: str,
    real_home: str | None,
    expose: Sequence[str] = (),
    user: tuple[int, int] | None = None,
) -> list[str]:
    """The bubblewrap command line for one run (the command to run is appended);
    ``user``: the uid and gid inside an own user namespace (``None``: none)."""
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = _hidden_dirs(real_home)
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
    argv += ["--new-session", "--cap-drop", "ALL", "--seccomp", str(_SECCOMP_FD)]
    if user is not None:
        argv += ["--unshare-user", "--uid", str(user[0]), "--gid", str(user[1])]
        argv.append("--disable-userns")
    if network == "none":
        argv.append("--unshare-net")
    return argv


def _hidden_dirs(real_home: str | None) -> list[str]:
    hidden = [path for path in HIDDEN if os.path.isdir(path)]
    if (
        real_home
        and os.path.isdir(real_home)
        and not any(_within(real_home, path) for path in (*hidden, *PRIVATE))
    ):
        hidden.append(real_home)
    return hidden


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _exposure(needs: AgentNeeds) -> list[str]:
    """The bubblewrap arguments that show what the agent needs."""
    argv: list[str] = []
    for path in needs.binds:
        argv += ["--ro-bind", path, path]
    for link, target in needs.links:
        argv += ["--symlink", target, link]
    return argv


class _BwrapRun(SandboxRun):
    def __init__(self, sandbox: BwrapSandbox, workspace: Path, scratch: Path) -> None:
        self.sandbox = sandbox
        self.workspace = workspace.resolve()
        options = sandbox.spec.options
        self.home: Path = fresh_home(scratch, options.get("home_files", ()), None).resolve()
        self.identity = sandbox.identity()
        self.notes: list[str] = []
        self.filter = scratch / "seccomp.bpf"
        self.filter.write_bytes(sandbox.filter)
        self.prefix = bwrap_argv(
            sandbox.program,
            workspace=self.workspace,
            home=self.home,
            network=options.get("network", "host"),
            real_home=os.environ.get("HOME"),
            expose=[str(Path(p).expanduser().resolve()) for p in options.get("expose", ())],
            user=sandbox.user,
        )
        self.limit = process_limit(options.get("pids_limit", DEFAULT_PIDS_LIMIT))
        self.stopped = False

    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path) -> Launch:
        inner = allowed_env(
            env,
            self.sandbox.spec.options.get("env", ()),
            HOME=str(self.home),
            TMPDIR="/tmp",
            OODA_SANDBOXED="bwrap",
        )
        return self.command(argv, inner, cwd, self.sandbox.needs(argv[0], inner.get("PATH", "")))

    def command(
        self, argv: Sequence[str], env: dict[str, str], cwd: Path, needs: AgentNeeds | None
    ) -> Launch:
        """The launch of ``argv`` with ``env`` inside, showing what ``needs`` names."""
        shown = _exposure(needs) if needs is not None else []
        command = (*self.prefix, *shown, "--chdir", str(cwd.resolve()), "--", *argv)
        procs = str(self.limit.procs) if self.limit.procs is not None else ""
        # The values travel in bwrap's own environment (kept for the child), never in
        # its argv, where any process could read them.
        wrapped = ("/bin/sh", "-c", _WRAPPER, _WRAPPER_NAME, str(self.filter), procs)
        return Launch((*wrapped, *self.limit.argv, *command), env, cwd)

    def not_started(self, exit_code: int, output: str) -> str | None:
        return launcher_failure(exit_code, output, ("bwrap: ", f"{_WRAPPER_NAME}: "))

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.limit.stop()
        self.notes.extend(scrub_workspace(self.workspace))


class BwrapSandbox(Sandbox):
    """See the module docstring; options: ``network`` (host | none), ``env``,
    ``home_files``, ``expose`` (paths inside hidden directories to show read-only),
    ``pids_limit``."""

    kind = "bwrap"
    options = BWRAP_OPTIONS

    @classmethod
    def proxy_access(cls, options: Mapping[str, Any]) -> ProxyAccess:
        """``network: none`` is a network namespace per process: the relay; ``host``
        shares the host's loopback."""
        return "relay" if options.get("network", "host") == "none" else "loopback"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        self.program = "bwrap"
        self.version: str | None = None
        #: The uid and gid inside an own user namespace, ``None`` where there is none.
        self.user: tuple[int, int] | None = None
        self.filter = b""
        self._needs: dict[tuple[str, str], AgentNeeds | str] = {}

    def prepare(self) -> None:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxError(
                "sandbox bwrap: bubblewrap is not installed", hint=f"install it: {INSTALL}"
            )
        self.program = found
        arch = native_arch()
        if arch is None:
            raise SandboxError(
                f"sandbox bwrap: no seccomp table for this machine ({os.uname().machine}): "
                "without it set-user-ID files and, under network: none, Unix sockets "
                "would not be refused",
                hint="use sandbox: docker here",
            )
        self.filter = seccomp_filter(arch, self.spec.options.get("network", "host") == "none")
        uid = os.getuid()
        inside = (INSIDE_UID, INSIDE_UID) if uid == 0 else (uid, os.getgid())
        problem = self._probe(inside)
        if problem is None:
            self.user = inside
        elif self._probe(None) is None:
            # No user namespaces here: every capability is still dropped.
            self.user = None
        else:
            raise SandboxError(
                f"sandbox bwrap: bubblewrap cannot create a sandbox here: {problem}",
                hint="unprivileged user namespaces may be off "
                "(sysctl kernel.unprivileged_userns_clone=1), or run in a VM/container "
                "that allows them; see `ooda help sandbox`",
            )
        version = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
        self.version = version.stdout.strip() or None

    def _probe(self, user: tuple[int, int] | None) -> str | None:
        """Why the run's flags fail here (with ``user``'s namespace), ``None`` if they work."""
        import tempfile

        with tempfile.NamedTemporaryFile(prefix="ooda-seccomp-") as handle:
            handle.write(self.filter)
            handle.flush()
            argv = [self.program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
            argv += ["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
            argv += ["--seccomp", str(_SECCOMP_FD)]
            if user is not None:
                argv += ["--unshare-user", "--uid", str(user[0]), "--gid", str(user[1])]
                argv.append("--disable-userns")
            argv.append("true")
            done = subprocess.run(
                ["/bin/sh", "-c", _WRAPPER, _WRAPPER_NAME, handle.name, "", *argv],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        if done.returncode == 0:
            return None
        return done.stderr.strip() or f"exit {done.returncode}"

    def inside_uid(self) -> int | None:
        return self.user[0] if self.user is not None else os.geteuid()

    def needs(self, command: str, search_path: str) -> AgentNeeds | None:
        """What ``command`` needs shown (``None`` when it cannot be shown; see
        :meth:`agent_problem`)."""
        found = self._needs_or_reason(command, search_path)
        return None if isinstance(found, str) else found

    def _needs_or_reason(self, command: str, search_path: str) -> AgentNeeds | str:
        key = (command, search_path)
        if key not in self._needs:
            hidden = [*_hidden_dirs(os.environ.get("HOME")), *PRIVATE]
            kept = KEPT

            def is_hidden(path: str) -> bool:
                return any(_within(path, d) for d in hidden) and not any(
                    _within(path, k) for k in kept
                )

            try:
                self._needs[key] = agent_needs(
                    command, search_path=search_path, hidden=is_hidden, roots=tuple(hidden)
                )
            except NotVisible as exc:
                self._needs[key] = str(exc)
        return self._needs[key]

    def agent_problem(self, argv: Sequence[str], env: Mapping[str, str] | None) -> str | None:
        inner = allowed_env(env, self.spec.options.get("env", ()))
        found = self._needs_or_reason(argv[0], inner.get("PATH", ""))
        if isinstance(found, str):
            return found
        return self._check_inside(found, inner)

    def _check_inside(self, needs: AgentNeeds, env: Mapping[str, str]) -> str | None:
        """Whether every path of ``needs`` is executable inside a sandbox like a run's
        (a probe with the host's ``/bin/sh``; nothing of the agent is run)."""
        import tempfile

        if not needs.executables:
            return None
        with tempfile.TemporaryDirectory(prefix="ooda-probe-") as scratch:
            workspace = Path(scratch) / "workspace"
            workspace.mkdir()
            run = _BwrapRun(self, workspace, Path(scratch))
            script = 'for p; do [ -x "$p" ] || { echo "$p"; exit 3; }; done'
            argv = ["/bin/sh", "-c", script, "sh", *needs.executables]
            launch = run.command(argv, {**env, "HOME": str(run.home)}, workspace, needs)
            try:
                done = subprocess.run(
                    list(launch.argv),
                    env=launch.env,
                    cwd=workspace,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
            finally:
                run.stop()
        if done.returncode == 0:
            return None
        missing = done.stdout.strip().splitlines()
        if done.returncode == 3 and missing:
            return f"{missing[-1]} is not executable inside the sandbox"
        return f"the check inside the sandbox failed: {(done.stderr or done.stdout).strip()}"

    def start(self, workspace: Path, scratch: Path) -> SandboxRun:
        return _BwrapRun(self, workspace, scratch)

"""The ``docker`` sandbox (and Podman with ``engine: podman``, same flags): one labelled
container per run, started before the run's first process and removed after the run —
also on Ctrl-C, and, after a killed session, at the next session's start. Every process
of the run (the agent each iteration, the verification commands) is a ``docker exec``
into it, in the workspace bind-mounted at its own path.

Nothing in it runs as root: the agent gets the invoking user's uid:gid, or, when that
is root, ``user:`` (default :data:`ROOT_STAND_IN`) — and then the workspace and the
fresh home are handed to that uid for the run and back to their owner after it. Every
capability is dropped (``--cap-drop ALL``: no device node, no ``chown`` to another
user), no process gains privileges (``no-new-privileges``: a set-user-ID file does not
work), and the run's processes and memory are capped (``pids_limit``, ``memory``; the
defaults are :data:`~pytest_ooda.sandbox.spec.DEFAULT_PIDS_LIMIT` and
:data:`~pytest_ooda.sandbox.spec.DEFAULT_MEMORY`). After the run the workspace is
scrubbed of set-user-ID bits and device nodes all the same.

Before any run (:meth:`DockerSandbox.prepare`): the engine is installed, its daemon
answers, the network exists, and the image is present — or built from ``build:`` once
per session, tagged by the content hash of its Dockerfile and build context, so an
unchanged Dockerfile is never built twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import secrets
import shutil
import socket
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
from pytest_ooda.sandbox.spec import DEFAULT_MEMORY, DEFAULT_PIDS_LIMIT, DOCKER_OPTIONS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda._types import ProxyAccess
    from pytest_ooda.sandbox.spec import SandboxSpec

__all__ = ["LABEL", "ROOT_STAND_IN", "DockerSandbox", "remove_leftovers"]

#: Every container we start carries this label (value: ``host:pid`` of the session).
LABEL = "pytest-ooda.run"
INSTALL = {"docker": "apt-get install -y docker.io", "podman": "apt-get install -y podman"}
#: Files of a build context hashed at most (a bigger context is hashed by its listing).
_HASH_LIMIT = 64 << 20
_names = itertools.count(1)
#: The uid:gid an agent gets when root starts the session (an ordinary user's).
ROOT_STAND_IN = "1000:1000"
#: What ``docker exec`` prints when it cannot start the command (exit 126 or 127).
_EXEC_FAILURES = ("OCI runtime exec failed", "Error response from daemon", "Error: ")


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _engine_run(
    argv: Sequence[str], *, timeout: float = 120.0, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(argv), 124, "", f"timed out after {timeout:g}s")


def remove_leftovers(engine: str) -> list[str]:
    """Remove containers labelled by a session of this host that is gone (killed before
    it could clean up); returns their names. Containers of live sessions (another xdist
    worker, another terminal) stay."""
    listed = _engine_run(
        [
            engine,
            "ps",
            "-a",
            "--filter",
            f"label={LABEL}",
            "--format",
            '{{.Names}}\t{{.Label "' + LABEL + '"}}',
        ],
        timeout=60,
    )
    if listed.returncode != 0:
        return []
    host = socket.gethostname()
    gone: list[str] = []
    for line in listed.stdout.splitlines():
        name, _, owner = line.partition("\t")
        owner_host, _, pid = owner.rpartition(":")
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            gone.append(name)
    if gone:
        _engine_run([engine, "rm", "-f", *gone], timeout=120)
    return gone


def context_hash(dockerfile: Path) -> str:
    """A digest of the Dockerfile and its build context (the Dockerfile's directory):
    names, modes and contents, so any change builds a new image."""
    digest = hashlib.sha256()
    context = dockerfile.parent
    budget = _HASH_LIMIT
    for path in sorted(context.rglob("*")):
        relative = path.relative_to(context).as_posix()
        if any(part.startswith(".git") for part in path.relative_to(context).parts):
            continue
        digest.update(relative.encode() + b"\0")
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            digest.update(f"{size}:{path.stat().st_mode & 0o777}".encode())
            if size <= budget:
                digest.update(path.read_bytes())
                budget -= size
    digest.update(b"\0Dockerfile\0" + dockerfile.read_bytes())
    return digest.hexdigest()


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """``chown -R`` without following links (the owner of what a link points at stays)."""
    os.lchown(root, uid, gid)
    for directory, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            with contextlib.suppress(OSError):
                os.lchown(os.path.join(directory, name), uid, gid)


class _DockerRun(SandboxRun):
    def __init__(self, sandbox: DockerSandbox, workspace: Path, scratch: Path) -> None:
        self.sandbox = sandbox
        self.engine = sandbox.engine
        options = sandbox.spec.options
        self.workspace = workspace.resolve()
        self.home: Path = fresh_home(scratch, options.get("home_files", ()), None).resolve()
        self.user = sandbox.user()
        self.identity = sandbox.identity()
        self.notes: list[str] = []
        self.name = f"ooda-{os.getpid()}-{next(_names)}-{secrets.token_hex(3)}"
        self.stopped = False
        # As root the agent is another uid: it gets the workspace for the run.
        owner = self.workspace.stat()
        self.owner = (owner.st_uid, owner.st_gid)
        self.handed = os.geteuid() == 0 and self.user != f"{owner.st_uid}:{owner.st_gid}"
        if self.handed:
            uid, _, gid = self.user.partition(":")
            _chown_tree(self.workspace, int(uid), int(gid))
            _chown_tree(self.home, int(uid), int(gid))
        argv = [self.engine, "run", "-d", "--init", "--name", self.name]
        argv += ["--label", f"{LABEL}={_owner()}", "--user", self.user]
        argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        argv += ["--network", options.get("network", "bridge")]
        if "cpus" in options:
            argv += ["--cpus", str(options["cpus"])]
        argv += ["--memory", str(options.get("memory", DEFAULT_MEMORY))]
        argv += ["--pids-limit", str(options.get("pids_limit", DEFAULT_PIDS_LIMIT))]
        argv += ["-v", f"{self.workspace}:{self.workspace}", "-v", f"{self.home}:{self.home}"]
        argv += ["--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777", "-w", str(self.workspace)]
        argv += ["--entrypoint", "", sandbox.image]
        argv += list(options.get("keepalive", ("sleep", "infinity")))
        started = _engine_run(argv, timeout=300)
        if started.returncode != 0:
            self.stop()
            raise SandboxError(
                f"sandbox docker: cannot start a container of {sandbox.image}: "
                f"{_tail(started.stderr)}",
                hint="the image needs the keepalive command (default `sleep infinity`; "
                "set sandbox.keepalive) and /bin/sh for verification commands",
            )

    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path) -> Launch:
        inner = allowed_env(env, self.sandbox.spec.options.get("env", ()), OODA_SANDBOXED="docker")
        client, flags = _client_env(env, inner)
        flags += [f"-eHOME={self.home}", "-eTMPDIR=/tmp"]
        command = (
            self.engine,
            "exec",
            "-i",
            "--user",
            self.user,
            "-w",
            str(cwd.resolve()),
            *flags,
            self.name,
            *argv,
        )
        return Launch(command, client, cwd)

    def network_pid(self) -> int | None:
        # The container's first process, as the host sees it (a local engine).
        found = _engine_run(
            [self.engine, "inspect", "--format", "{{.State.Pid}}", self.name], timeout=60
        )
        pid = found.stdout.strip()
        return int(pid) if found.returncode == 0 and pid.isdigit() and pid != "0" else None

    def not_started(self, exit_code: int, output: str) -> str | None:
        if exit_code not in (1, 126, 127):
            return None
        return launcher_failure(exit_code, output, _EXEC_FAILURES)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        _engine_run([self.engine, "rm", "-f", "-v", self.name], timeout=120)
        self.notes.extend(scrub_workspace(self.workspace))
        if self.handed:
            _chown_tree(self.workspace, *self.owner)
            _chown_tree(self.home, *self.owner)


def _client_env(
    env: Mapping[str, str] | None, inner: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """The docker client's environment and its ``-e`` flags: allowed values reach the
    container by name (``-e NAME``: the client copies its own value), never in argv."""
    client = dict(os.environ if env is None else env)
    client.update(inner)
    # HOME and TMPDIR are paths, not secrets: given in argv.
    for name in ("HOME", "TMPDIR"):
        client.pop(name, None)
    for keep in ("HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "PATH"):
        if keep in os.environ:
            client[keep] = os.environ[keep]
    return client, [f"-e{name}" for name in inner]


def _tail(text: str, lines: int = 6) -> str:
    shown = text.strip().splitlines()[-lines:]
    return " | ".join(shown) if shown else "(no output)"


class DockerSandbox(Sandbox):
    """See the module docstring; options: ``engine`` (docker | podman), ``image`` or
    ``build`` (a Dockerfile, relative to the declaring file), ``network`` (none | host
    | bridge; default bridge), ``cpus``, ``memory``, ``pids_limit``, ``env``,
    ``home_files``, ``keepalive`` (the container's idle command), ``user`` (the uid:gid
    the agent runs as when root starts the session)."""

    kind = "docker"
    options = DOCKER_OPTIONS

    @classmethod
    def proxy_access(cls, options: Mapping[str, Any]) -> ProxyAccess:
        """``network: host`` shares the host's loopback; ``none`` and ``bridge`` are the
        container's own namespace, shared by every process of the run."""
        return "loopback" if options.get("network", "bridge") == "host" else "netns"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        options = spec.options
        self.engine: str = options.get("engine", "docker")
        if ("image" in options) == ("build" in options):
            raise SandboxError(
                "sandbox docker: give exactly one of image: (an image name) or build: "
                "(a Dockerfile)",
                hint="e.g. sandbox: {kind: docker, image: python:3.12-slim}",
            )
        self.image: str = options.get("image", "")
        self.image_id: str | None = None
        self.prepared = False
        self._checked: dict[str, str | None] = {}

    def identity(self) -> Mapping[str, str | None]:
        return {"kind": self.kind, "image": self.image or None, "image_id": self.image_id}

    def user(self) -> str:
        """The uid:gid processes run as inside: yours, or when you are root the ``user``
        option (an ordinary user's, never 0)."""
        if os.geteuid() != 0:
            return f"{os.getuid()}:{os.getgid()}"
        return str(self.spec.options.get("user", ROOT_STAND_IN))

    def inside_uid(self) -> int | None:
        return int(self.user().partition(":")[0])

    def agent_problem(self, argv: Sequence[str], env: Mapping[str, str] | None) -> str | None:
        """Whether the image has ``argv[0]`` (on the ``PATH`` a run passes in), checked in
        a throwaway container with no network: ``command -v`` and ``-x`` by the image's
        ``/bin/sh``, nothing of the agent run. An image without ``/bin/sh`` is not
        checked (verification commands would need it)."""
        key = argv[0]
        if key not in self._checked:
            self._checked[key] = self._check(argv[0], env)
        return self._checked[key]

    def _check(self, command: str, env: Mapping[str, str] | None) -> str | None:
        inner = allowed_env(env, self.spec.options.get("env", ()))
        client, flags = _client_env(env, {"PATH": inner["PATH"]} if "PATH" in inner else {})
        script = 'p=$(command -v "$1") || exit 3; case $p in /*) [ -x "$p" ] || exit 4;; esac'
        done = _engine_run(
            [self.engine, "run", "--rm", "--network", "none", "--user", self.user(),
             "--cap-drop", "ALL", "--entrypoint", "", *flags, self.image,
             "/bin/sh", "-c", script, "sh", command],
            timeout=120,
            env=client,
        )  # fmt: skip
        if done.returncode == 0:
            return None
        where = f"in the image {self.image}"
        if done.returncode == 3:
            return f"{command} is not on the PATH {where} ({inner.get('PATH', 'unset')})"
        if done.returncode == 4:
            return f"{command} is not executable {where}"
        return None

    def prepare(self) -> None:
        if self.prepared:
            return
        engine = self.engine
        if shutil.which(engine) is None:
            raise SandboxError(
                f"sandbox docker: {engine} is not installed", hint=f"install it: {INSTALL[engine]}"
            )
        version = _engine_run([engine, "version", "--format", "{{.Server.Version}}"], timeout=60)
        if version.returncode != 0:
            where = os.environ.get("DOCKER_HOST", "the default socket")
            raise SandboxError(
                f"sandbox docker: the {engine} daemon does not answer at {where}: "
                f"{_tail(version.stderr)}",
                hint=f"start it (systemctl start {engine}, or dockerd as `ooda help sandbox` "
                "shows) "
                "or point DOCKER_HOST at it; nothing was run",
            )
        remove_leftovers(engine)
        network = self.spec.options.get("network", "bridge")
        if network == "bridge" and engine == "docker":
            found = _engine_run([engine, "network", "inspect", "bridge"], timeout=60)
            if found.returncode != 0:
                raise SandboxError(
                    "sandbox docker: network: bridge, but this daemon has no bridge network "
                    "(started with --bridge=none?)",
                    hint="use network: host (the agent reaches its API through the host) or "
                    "none, or start the daemon with a bridge; nothing was run",
                )
        if "build" in self.spec.options:
            self.image = self._build(self.spec.options["build"])
        inspected = _engine_run(
            [engine, "image", "inspect", "--format", "{{.Id}}", self.image], timeout=60
        )
        if inspected.returncode != 0:
            raise SandboxError(
                f"sandbox docker: image {self.image!r} is not present",
                hint=f"{engine} pull {self.image}, or build it, or give sandbox.build: "
                "a Dockerfile; nothing was run",
            )
        self.image_id = inspected.stdout.strip() or None
        self.prepared = True

    def _build(self, build: str) -> str:
        base = self.spec.base_dir or Path.cwd()
        dockerfile = (base / build).resolve()
        if dockerfile.is_dir():
            dockerfile = dockerfile / "Dockerfile"
        if not dockerfile.is_file():
            raise SandboxError(
                f"sandbox docker: build: {build} not found (looked for {dockerfile})",
                hint="build: is a Dockerfile (or its directory), relative to the file "
                "declaring the sandbox",
            )
        tag = f"pytest-ooda-build:{context_hash(dockerfile)[:16]}"
        present = _engine_run([self.engine, "image", "inspect", tag], timeout=60)
        if present.returncode == 0:
            return tag
        built = _engine_run(
            [self.engine, "build", "-q", "-t", tag, "-f", str(dockerfile), str(dockerfile.parent)],
            timeout=3600,
        )
        if built.returncode != 0:
            raise SandboxError(
                f"sandbox docker: building {dockerfile} failed: "
                f"{_tail(built.stderr or built.stdout)}",
                hint="fix the Dockerfile (try the same `docker build` by hand); nothing was run",
            )
        return tag

    def start(self, workspace: Path, scratch: Path) -> SandboxRun:
        self.prepare()
        return _DockerRun(self, workspace, scratch)

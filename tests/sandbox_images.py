"""The real programs the sandbox tests drive: bubblewrap, a Docker daemon, and test
images built offline (no registry is reachable in CI) by ``ooda sandbox image``: of
busybox, and of the host's Claude Code. Each image is tagged by a hash of what went
into it, so it is built once."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from external_tools import BWRAP_INSTALL, DOCKER_INSTALL, require

if TYPE_CHECKING:
    from collections.abc import Iterator


def bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe += ["--unshare-pid", "--die-with-parent", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def require_bwrap() -> None:
    __tracebackhide__ = True
    require(bwrap_works(), "bubblewrap (able to create a sandbox here)", BWRAP_INSTALL)


def docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    done = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode == 0


def require_docker() -> None:
    __tracebackhide__ = True
    require(docker_answers(), "a Docker daemon", DOCKER_INSTALL)


def _image(agent: str) -> str:
    """The tag ``ooda sandbox image --agent AGENT`` built (or found unchanged): the
    command users run, so the tests use the images a user would."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "sandbox", "image", "--agent", agent],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    return first.split(": ", 1)[1].split(" ", 1)[0]


def busybox_image() -> str:
    """An image of busybox (``sh`` and the usual tools) for the sandbox tests."""
    assert shutil.which("busybox"), (
        "busybox-static builds the test images (apt-get install busybox-static)"
    )
    return _image("busybox")


def claude_image() -> str:
    """The image of the host's Claude Code (its native binary, the C library, bash,
    busybox) that ``ooda sandbox image`` builds."""
    return _image("claude")


def node_agent_image(agent: str) -> str:
    """The image ``ooda sandbox image`` builds of a Node agent on PATH (``gemini``,
    ``qwen``): node, the agent's npm package, bash, busybox."""
    return _image(agent)


def docker_env() -> dict[str, str]:
    """The environment for docker commands (DOCKER_HOST as the session has it)."""
    return {key: value for key, value in os.environ.items() if key.startswith("DOCKER_")}


# ------------------------------------------------------------------ the probe agent

#: The static C helper of the probe agent: one system call an escaping agent would
#: make per subcommand (tests/sandbox/probe.c).
PROBE_SOURCE = Path(__file__).resolve().parent / "sandbox" / "probe.c"
GCC_INSTALL = "apt-get install -y gcc libc6-dev"
#: Processes the probe's fork bomb asks for: more than the default limit (512).
FORK_BOMB = 1000


def probe_binary() -> Path:
    """The probe helper, built static (it runs the same on the host, under bubblewrap
    and in a FROM-scratch image), once per source text."""
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc (for the static probe helper)", GCC_INSTALL)
    assert gcc is not None
    source = PROBE_SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"ooda-probe-{digest}" / "probe"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"probe.{os.getpid()}")
        subprocess.run(
            [gcc, "-static", "-O1", "-o", str(partial), str(PROBE_SOURCE)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        partial.chmod(0o755)
        partial.rename(target)
    return target


def probe_script(
    *, secret: Path, hidden: str, host_pid: int, socket_path: Path, port: int, visible: Path
) -> str:
    """What the probe agent runs in its workspace (``./probe`` beside it): every escape
    issue 28 found, each printing ``<what>: ESCAPED`` or ``<what>: refused (…)``. With
    no sandbox (``OODA_SANDBOXED`` unset) it leaves the mounts of the host alone."""
    return f"""\
if [ -n "$OODA_SANDBOXED" ]; then
  ./probe umount {hidden}
  ./probe remount
fi
if cat {secret} 2>/dev/null; then echo "home-read: ESCAPED"; else echo "home-read: refused"; fi
if cat {visible} 2>/dev/null; then echo "host-read: ESCAPED"; else echo "host-read: refused"; fi
./probe mknod dev0
./probe setuid su
./probe chown result.txt
./probe ptrace {host_pid}
./probe unix {socket_path}
./probe tcp {port}
./probe forkbomb {FORK_BOMB}
ln -s {secret} PLAN.md
if ln {secret} hard.txt 2>/dev/null; then
  echo "hard-link: ESCAPED"
else
  echo "hard-link: refused"
fi
"""


def attempts(output: str) -> dict[str, str]:
    """``{what: "ESCAPED" | "refused"}`` from the probe's lines in ``output``."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        what, sep, rest = line.partition(": ")
        if sep and rest.split(" ")[0] in ("ESCAPED", "refused"):
            found[what.strip()] = rest.split(" ")[0]
    return found


@dataclass
class ProbeTargets:
    """What the probe aims at on the host: a secret in a home the sandboxes hide, a file
    and a Unix socket outside every hidden directory, a TCP port on the host's
    loopback, a process of the host, and what reached them."""

    secret: Path
    planted: str
    hidden: str
    socket_path: Path
    visible: Path
    port: int
    host_pid: int
    connections: list[str] = field(default_factory=list)

    def script(self) -> str:
        return probe_script(
            secret=self.secret,
            hidden=self.hidden,
            host_pid=self.host_pid,
            socket_path=self.socket_path,
            port=self.port,
            visible=self.visible,
        )


def _serve(server: socket.socket, name: str, seen: list[str], done: threading.Event) -> None:
    while not done.is_set():
        try:
            connection, _ = server.accept()
        except OSError:
            continue
        seen.append(name)
        connection.close()


@contextlib.contextmanager
def probe_targets(
    home: Path | None = None, owner: tuple[int, int] | None = None
) -> Iterator[ProbeTargets]:
    """The probe's targets, removed afterwards: the secret under ``home`` (default:
    ``/root`` as root, else your home), owned by ``owner`` when given; a socket, a file
    and a port anyone may reach."""
    token = secrets.token_hex(4)
    base = home or Path("/root" if os.geteuid() == 0 else os.path.expanduser("~"))
    hidden = "/" + base.parts[1] if base.parts[1] in ("root", "home") else str(base)
    folder = base / f".ooda-probe-{token}"
    folder.mkdir(parents=True)
    planted = f"PLANTED-HOST-SECRET-{token}"
    secret = folder / "id"
    secret.write_text(planted + "\n")
    outside = Path(f"/opt/ooda-probe-{token}" if os.geteuid() == 0 else f"/var/tmp/ooda-{token}")
    outside.mkdir(parents=True)
    outside.chmod(0o755)
    (outside / "visible.txt").write_text("a file of the host\n")
    if owner is not None:
        for path in (base, folder, secret):
            os.chown(path, *owner)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(outside / "sock"))
    (outside / "sock").chmod(0o777)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    listeners = [(unix, "unix"), (tcp, "tcp")]
    sleeper = subprocess.Popen(["sleep", "600"])
    targets = ProbeTargets(
        secret, planted, hidden, outside / "sock", outside / "visible.txt",
        tcp.getsockname()[1], sleeper.pid,
    )  # fmt: skip
    done = threading.Event()
    threads = []
    for server, name in listeners:
        server.listen(8)
        server.settimeout(0.2)
        thread = threading.Thread(
            target=_serve, args=(server, name, targets.connections, done), daemon=True
        )
        thread.start()
        threads.append(thread)
    try:
        yield targets
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=5)
        for server, _ in listeners:
            server.close()
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


def leftovers(workspace: Path) -> list[str]:
    """Device nodes and set-user/group-ID files under ``workspace`` (links not followed)."""
    found: list[str] = []
    for directory, dirnames, filenames in os.walk(workspace):
        for name in (*dirnames, *filenames):
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if (
                stat.S_ISCHR(mode)
                or stat.S_ISBLK(mode)
                or (stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID))
            ):
                found.append(name)
    return found


# ------------------------------------------------------------------ a Python image

#: The system's Python, whose standard library is small enough to image (the test
#: runner's own may be a development build of a gigabyte and more).
SYSTEM_PYTHON = Path("/usr/bin/python3")
PYTHON_INSTALL = "apt-get install -y python3"
#: The pure-Python distributions pytest needs, copied from the running interpreter.
_PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")


def _libraries(binary: Path) -> dict[str, Path]:
    """``binary``'s shared libraries, at the paths its loader looks for them."""
    listing = subprocess.run(
        ["ldd", str(binary)], capture_output=True, text=True, timeout=60, check=False
    )
    found: dict[str, Path] = {}
    for line in listing.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) >= 3 and words[2].startswith("/"):
            found[words[2].lstrip("/")] = Path(words[2]).resolve()
        elif words and words[0].startswith("/"):
            found[words[0].lstrip("/")] = Path(words[0]).resolve()
    return found


def _python_files() -> dict[str, Path]:
    """Image path -> host file: the system Python, its standard library and the
    libraries its extension modules load, pytest and its dependencies, busybox."""
    real = SYSTEM_PYTHON.resolve()
    version = real.name.removeprefix("python")
    stdlib = Path(f"/usr/lib/python{version}")
    files = {**_libraries(real), "usr/bin/python3": real}
    skipped = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "dist-packages"}
    for path in stdlib.rglob("*"):
        relative = path.relative_to(stdlib)
        if relative.parts[0] in skipped or "__pycache__" in relative.parts or not path.is_file():
            continue
        files[f"usr/lib/python{version}/{relative.as_posix()}"] = path
        if path.suffix == ".so":
            files.update(_libraries(path))
    import pytest

    site = Path(pytest.__file__).resolve().parents[1]
    for entry in site.iterdir():
        name = entry.name.split("-")[0].removesuffix(".py")
        if name not in _PYTEST_PACKAGES:
            continue
        members = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        for path in members:
            if "__pycache__" in path.parts:
                continue
            files[f"usr/lib/python3/dist-packages/{path.relative_to(site).as_posix()}"] = path
    busybox = shutil.which("busybox")
    assert busybox, "busybox-static builds the test images (apt-get install busybox-static)"
    files["bin/busybox"] = Path(busybox).resolve()
    return files


def python_image() -> str:
    """An image of the system's Python with pytest (and busybox for ``/bin/sh``), made
    offline with ``docker import`` and tagged by what went in, so it is built once."""
    import io
    import tarfile

    require(SYSTEM_PYTHON.exists(), "the system's python3", PYTHON_INSTALL)
    files = _python_files()
    digest = hashlib.sha256()
    for inside, host in sorted(files.items()):
        info = host.stat()
        digest.update(f"{inside} {info.st_size} {info.st_mtime_ns}\n".encode())
    tag = f"pytest-ooda-test-python:{digest.hexdigest()[:12]}"
    env = {**os.environ, **docker_env()}
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True, env=env,
                      check=False).returncode == 0:  # fmt: skip
        return tag
    applets = subprocess.run(
        [str(files["bin/busybox"]), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    buffer = io.BytesIO()
    made: set[str] = set()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def directory(name: str, mode: int = 0o755) -> None:
            if name not in made:
                made.add(name)
                info = tarfile.TarInfo(name)
                info.type, info.mode = tarfile.DIRTYPE, mode
                tar.addfile(info)

        for name in ("bin", "etc", "proc", "sys", "dev", "usr", "usr/bin"):
            directory(name)
        directory("tmp", 0o1777)
        passwd = b"root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/tmp:/bin/sh\n"
        for name, data in (("etc/passwd", passwd), ("etc/group", b"root:x:0:\nagent:x:1000:\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        for inside, host in sorted(files.items()):
            parts = inside.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                directory("/".join(parts[:depth]))
            info = tarfile.TarInfo(inside)
            data = host.read_bytes()
            info.size, info.mode = len(data), 0o755 if os.access(host, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
        for applet in applets:
            if applet != "busybox" and f"bin/{applet}" not in files:
                info = tarfile.TarInfo(f"bin/{applet}")
                info.type, info.linkname = tarfile.SYMTYPE, "busybox"
                tar.addfile(info)
    imported = subprocess.run(
        ["docker", "import", "-c", "ENV PATH=/usr/bin:/bin", "-", tag],
        input=buffer.getvalue(),
        capture_output=True,
        env=env,
        timeout=1800,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr.decode("utf-8", "replace")
    return tag

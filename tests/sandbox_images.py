"""The real programs the sandbox tests drive: bubblewrap, a Docker daemon, and test
images built offline (no registry is reachable in CI): a busybox rootfs, and the same
plus the host's C library and Claude Code's native binary, imported with ``docker
import``. Each image is tagged by a hash of what went into it, so it is built once."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from external_tools import BWRAP_INSTALL, DOCKER_INSTALL, require

#: Commands of the busybox image (links to the one static binary).
APPLETS = (
    "sh", "ls", "cat", "echo", "sleep", "touch", "mkdir", "id", "env", "true", "false",
    "rm", "wc", "nc", "setsid", "grep", "ln", "test", "[", "printf", "pgrep", "ps",
    "head", "tail", "sed", "cp", "mv", "kill", "readlink", "dirname", "basename", "tr",
    "uname", "which", "timeout", "chmod", "stat", "find", "sort", "cut", "date",
)  # fmt: skip
# busybox-static in Debian has no nohup applet; the image gets the usual script.
NOHUP = "#!/bin/sh\ntrap '' HUP\nexec \"$@\"\n"


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


def _busybox() -> Path:
    found = shutil.which("busybox")
    assert found, (
        "busybox-static is needed to build the test images (apt-get install busybox-static)"
    )
    return Path(found).resolve()


def _add_file(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = mode
    tar.addfile(info)


def _add_link(tar: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    tar.addfile(info)


def _rootfs(extra: dict[str, Path]) -> bytes:
    """A tar of a busybox rootfs plus ``extra`` files (path in the image -> host file)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory in (
            "bin",
            "etc",
            "home",
            "lib",
            "lib64",
            "usr",
            "usr/bin",
            "proc",
            "sys",
            "dev",
        ):
            _add_dir(tar, directory)
        _add_dir(tar, "tmp", 0o1777)
        _add_file(tar, "bin/busybox", _busybox().read_bytes())
        for applet in APPLETS:
            _add_link(tar, f"bin/{applet}", "busybox")
        _add_file(tar, "bin/nohup", NOHUP.encode())
        _add_file(tar, "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n", 0o644)
        _add_file(tar, "etc/group", b"root:x:0:\n", 0o644)
        made = {"bin", "etc", "home", "lib", "lib64", "usr", "usr/bin", "proc", "sys", "dev"}
        for inside, host in sorted(extra.items()):
            parts = inside.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                prefix = "/".join(parts[:depth])
                if prefix not in made:
                    made.add(prefix)
                    _add_dir(tar, prefix)
            _add_file(tar, inside, host.read_bytes())
    return buffer.getvalue()


def _import(tag: str, tar: bytes) -> str:
    present = subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False)
    if present.returncode != 0:
        subprocess.run(
            ["docker", "import", "-c", "ENV PATH=/usr/bin:/bin", "-", tag],
            input=tar,
            capture_output=True,
            check=True,
            timeout=600,
        )
    return tag


def _tag(name: str, parts: list[Path]) -> str:
    digest = hashlib.sha256(NOHUP.encode() + " ".join(APPLETS).encode())
    for part in parts:
        digest.update(str(part).encode())
        digest.update(str(part.stat().st_size).encode() + str(part.stat().st_mtime_ns).encode())
    return f"pytest-ooda-test-{name}:{digest.hexdigest()[:12]}"


def busybox_image() -> str:
    """A busybox image (sh and the usual tools) for the sandbox tests."""
    return _import(_tag("busybox", [_busybox()]), _rootfs({}))


def _shared_libraries(binary: Path) -> dict[str, Path]:
    """The C library files ``binary`` loads, at the paths the loader looks for them."""
    listing = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True)
    found: dict[str, Path] = {}
    for line in listing.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) >= 3 and words[2].startswith("/"):
            found[words[2].lstrip("/")] = Path(words[2]).resolve()
        elif words and words[0].startswith("/"):
            found[words[0].lstrip("/")] = Path(words[0]).resolve()
    return found


def claude_binary() -> Path | None:
    """Claude Code's native executable (``bin/claude.exe`` of its global npm package)."""
    found = shutil.which("claude")
    if found is None:
        return None
    resolved = Path(found).resolve()
    return resolved if resolved.name == "claude.exe" else None


def claude_image() -> str:
    """busybox + the host's glibc + Claude Code's native binary as /usr/bin/claude, and
    the host's bash: Claude Code's Bash tool refuses to work without bash or zsh ("No
    suitable shell found"), and busybox has neither."""
    binary = claude_binary()
    assert binary is not None, "Claude Code's native binary (bin/claude.exe) was not found"
    bash = Path(shutil.which("bash") or "/bin/bash").resolve()
    extra = {**_shared_libraries(binary), **_shared_libraries(bash)}
    extra["usr/bin/claude"] = binary
    extra["usr/bin/bash"] = bash
    return _import(_tag("claude", [_busybox(), *extra.values()]), _rootfs(extra))


def docker_env() -> dict[str, str]:
    """The environment for docker commands (DOCKER_HOST as the session has it)."""
    return {key: value for key, value in os.environ.items() if key.startswith("DOCKER_")}

"""``ooda sandbox image``: a minimal image for the ``docker`` sandbox, built offline
from what this machine already has — no registry, no Dockerfile, no network.

It holds the agent's own native executable (resolved through its links, at
``/usr/bin/<name>``), the shared libraries it loads (as ``ldd`` lists them), ``bash``
with its libraries (an agent's shell tool may refuse to work without bash or zsh), a
static busybox for ``/bin/sh`` and the usual tools, the host's CA certificates, and an
``/etc/passwd`` naming root and the uid the sandbox gives an agent started by root. The
tar is made here and handed to ``docker import`` (or ``podman import``); the tag is a
hash of what went in, so an unchanged agent is never imported twice.

An agent that is a Node script (``#!/usr/bin/env node``, as npm installs Gemini CLI,
Qwen Code and Codex) brings ``node`` with its libraries and its whole package (the
directory under ``node_modules`` holding it, dependencies included), at the paths they
have here, with ``/usr/bin/<name>`` a link to the script. Any other script is refused:
its interpreter's installation is not one directory; build such an image from a
Dockerfile (``sandbox: {kind: docker, build: …}``).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import SandboxError

if TYPE_CHECKING:
    import tarfile

__all__ = ["AgentImage", "build_agent_image", "image_files"]

#: Bumped when the layout changes, so images of an older layout are not reused.
_LAYOUT = "2"
#: A static busybox, as distributions ship it.
BUSYBOX_INSTALL = "apt-get install -y busybox-static"
# busybox-static in Debian has no nohup applet; the image gets the usual script.
_NOHUP = b"#!/bin/sh\ntrap '' HUP\nexec \"$@\"\n"
_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
_DIRS = ("bin", "etc", "home", "lib", "lib64", "usr", "usr/bin", "proc", "sys", "dev", "root")


@dataclass(frozen=True)
class AgentImage:
    """What ``build_agent_image`` made: the tag, whether it was imported now (``False``:
    the same content was there already), and the files it holds (image path -> host)."""

    tag: str
    created: bool
    files: dict[str, Path]
    agent: Path


def _elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"\x7fELF"


def _shared_libraries(binary: Path) -> dict[str, Path]:
    """The shared libraries ``binary`` loads, at the paths the loader looks for them."""
    try:
        listing = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, timeout=60, check=False
        )
    except FileNotFoundError:
        raise SandboxError(
            "sandbox image: ldd is not installed (it lists the libraries to copy)",
            hint="install your C library's tools (libc-bin on Debian)",
        ) from None
    found: dict[str, Path] = {}
    for line in listing.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) >= 3 and words[2].startswith("/"):
            found[words[2].lstrip("/")] = Path(words[2]).resolve()
        elif words and words[0].startswith("/"):
            found[words[0].lstrip("/")] = Path(words[0]).resolve()
    return found


@dataclass(frozen=True)
class _Agent:
    """The agent's command name, its real executable (or script), and for a Node
    script its interpreter and its package's directory."""

    name: str
    real: Path
    node: Path | None = None
    package: Path | None = None


def _agent(agent: str) -> _Agent:
    found = shutil.which(agent) if "/" not in agent else agent
    if found is None or not Path(found).is_file():
        raise SandboxError(
            f"sandbox image: no agent {agent!r} here (not on PATH, not a file)",
            hint="give --agent the command's name on PATH or its path",
        )
    real = Path(found).resolve()
    name = Path(agent).name
    if _elf(real):
        return _Agent(name, real)
    interpreter = _interpreter(real)
    if interpreter != "node":
        raise SandboxError(
            f"sandbox image: {real} is a script for {interpreter or 'no interpreter'}, not "
            "a native executable or a Node script: an image of it would need its "
            "interpreter's whole installation",
            hint="build that image from a Dockerfile instead: "
            "sandbox: {kind: docker, build: path/to/Dockerfile}",
        )
    node = shutil.which("node")
    if node is None:
        raise SandboxError(
            f"sandbox image: {real} is a Node script and node is not on PATH",
            hint="install Node.js (the agent runs with it here too)",
        )
    return _Agent(name, real, Path(node).resolve(), _package_of(real))


def _interpreter(script: Path) -> str | None:
    """The program a ``#!`` line names (``env``'s first argument when it is ``env``)."""
    with script.open("rb") as handle:
        first = handle.readline(256).decode("utf-8", "replace")
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    return Path(words[0]).name if words else None


def _package_of(script: Path) -> Path:
    """The npm package holding ``script``: the directory right under the last
    ``node_modules`` of its path (``@scope/name`` for a scoped one), else the nearest
    directory with a ``package.json``."""
    parts = script.parts
    if "node_modules" in parts[:-1]:
        at = len(parts) - 1 - parts[:-1][::-1].index("node_modules")
        depth = 2 if parts[at].startswith("@") else 1
        return Path(*parts[: at + depth])
    for parent in script.parents:
        if (parent / "package.json").is_file():
            return parent
    raise SandboxError(
        f"sandbox image: {script} is a Node script outside any package (no node_modules "
        "directory, no package.json above it): which files it needs is not known",
        hint="build that image from a Dockerfile: sandbox: {kind: docker, build: …}",
    )


def _tree(top: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Every file under ``top`` (image path -> host file) and every link (image path
    -> its target as written), at the paths they have here."""
    files: dict[str, Path] = {}
    links: dict[str, str] = {}
    for directory, names, leaves in os.walk(top):
        for leaf in [*names, *leaves]:
            path = Path(directory, leaf)
            inside = str(path).lstrip("/")
            if path.is_symlink():
                links[inside] = os.readlink(path)
            elif leaf in leaves and path.is_file():
                files[inside] = path
    return files, links


def image_files(agent: str) -> tuple[dict[str, Path], Path]:
    """The host files the image of ``agent`` holds (image path -> host file) and the
    agent's real executable; :class:`SandboxError` for an agent that cannot be imaged."""
    files, _, real = _image_contents(agent)
    return files, real


def _image_contents(agent: str) -> tuple[dict[str, Path], dict[str, str], Path]:
    """What the image holds: files (image path -> host file), links (image path ->
    target) and the agent's real executable or script."""
    found = _agent(agent)
    bash = shutil.which("bash")
    busybox = shutil.which("busybox")
    if busybox is None:
        raise SandboxError(
            "sandbox image: busybox is not installed (the image's shell and tools)",
            hint=f"install it: {BUSYBOX_INSTALL}",
        )
    links: dict[str, str] = {}
    if found.node is None:
        files = {**_shared_libraries(found.real), f"usr/bin/{found.name}": found.real}
    else:
        assert found.package is not None
        files, links = _tree(found.package)
        files.update(_shared_libraries(found.node))
        files["usr/bin/node"] = found.node
        links[f"usr/bin/{found.name}"] = str(found.real)
        links["usr/bin/env"] = "/bin/busybox"  # for the script's #!/usr/bin/env node
    if bash is not None:
        files.update(_shared_libraries(Path(bash).resolve()))
        files["usr/bin/bash"] = Path(bash).resolve()
    files["bin/busybox"] = Path(busybox).resolve()
    for bundle in _CA_BUNDLES:
        if Path(bundle).is_file():
            files[bundle.lstrip("/")] = Path(bundle).resolve()
    return files, links, found.real


def _applets(busybox: Path) -> list[str]:
    listed = subprocess.run(
        [str(busybox), "--list"], capture_output=True, text=True, timeout=30, check=False
    )
    return sorted({name for name in listed.stdout.split() if name and "/" not in name})


def _add(tar: tarfile.TarFile, name: str, data: bytes | None = None, **kind: object) -> None:
    import tarfile

    info = tarfile.TarInfo(name)
    for key, value in kind.items():
        setattr(info, key, value)
    if data is not None:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)


def _rootfs(files: dict[str, Path], applets: list[str], links: dict[str, str]) -> bytes:
    """The image's root file system as a tar."""
    import tarfile

    from pytest_ooda.sandbox.docker import ROOT_STAND_IN

    uid = ROOT_STAND_IN.partition(":")[0]
    buffer = io.BytesIO()
    made = set(_DIRS)
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory in _DIRS:
            _add(tar, directory, type=tarfile.DIRTYPE, mode=0o755)
        _add(tar, "tmp", type=tarfile.DIRTYPE, mode=0o1777)
        passwd = f"root:x:0:0:root:/root:/bin/sh\nagent:x:{uid}:{uid}:agent:/tmp:/bin/sh\n"
        _add(tar, "etc/passwd", passwd.encode(), mode=0o644)
        _add(tar, "etc/group", f"root:x:0:\nagent:x:{uid}:\n".encode(), mode=0o644)
        entries: list[tuple[str, Path | str]] = [*files.items(), *links.items()]
        for inside, host in sorted(entries, key=lambda entry: entry[0]):
            parts = inside.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                prefix = "/".join(parts[:depth])
                if prefix not in made:
                    made.add(prefix)
                    _add(tar, prefix, type=tarfile.DIRTYPE, mode=0o755)
            if isinstance(host, str):
                _add(tar, inside, type=tarfile.SYMTYPE, linkname=host)
                continue
            mode = 0o755 if os.access(host, os.X_OK) else 0o644
            _add(tar, inside, host.read_bytes(), mode=mode)
        for applet in applets:
            if f"bin/{applet}" not in files and applet != "busybox":
                _add(tar, f"bin/{applet}", type=tarfile.SYMTYPE, linkname="busybox")
        if "nohup" not in applets:
            _add(tar, "bin/nohup", _NOHUP, mode=0o755)
    return buffer.getvalue()


def _digest(files: dict[str, Path], applets: list[str], links: dict[str, str]) -> str:
    digest = hashlib.sha256(f"layout {_LAYOUT}\n".encode() + " ".join(applets).encode())
    for inside, host in sorted(files.items()):
        info = host.stat()
        digest.update(f"\n{inside} {info.st_size} {info.st_mtime_ns}".encode())
    for inside, target in sorted(links.items()):
        digest.update(f"\n{inside} -> {target}".encode())
    return digest.hexdigest()


def build_agent_image(agent: str, *, tag: str | None = None, engine: str = "docker") -> AgentImage:
    """Build (or find, unchanged) the image of ``agent`` (a command on ``PATH``, or a
    path); see the module docstring."""
    if shutil.which(engine) is None:
        raise SandboxError(
            f"sandbox image: {engine} is not installed",
            hint="install it (apt-get install -y docker.io, or podman)",
        )
    files, links, real = _image_contents(agent)
    applets = _applets(files["bin/busybox"])
    name = Path(agent).name
    tag = tag or f"pytest-ooda-agent-{name.lower()}:{_digest(files, applets, links)[:12]}"
    present = subprocess.run(
        [engine, "image", "inspect", tag], capture_output=True, timeout=120, check=False
    )
    if present.returncode == 0 and tag.startswith("pytest-ooda-agent-"):
        return AgentImage(tag, False, files, real)
    imported = subprocess.run(
        [engine, "import", "-c", "ENV PATH=/usr/bin:/bin", "-c", "ENV SHELL=/usr/bin/bash",
         "-", tag],
        input=_rootfs(files, applets, links),
        capture_output=True,
        timeout=1800,
        check=False,
    )  # fmt: skip
    if imported.returncode != 0:
        text = (imported.stderr or imported.stdout).decode("utf-8", "replace").strip()
        raise SandboxError(
            f"sandbox image: {engine} import failed: {text or f'exit {imported.returncode}'}",
            hint=f"does the {engine} daemon answer? (DOCKER_HOST, `{engine} version`)",
        )
    return AgentImage(tag, True, files, real)

"""The seccomp filter of the ``bwrap`` sandbox, assembled here as classic BPF (the
``struct sock_filter`` array ``bwrap --seccomp FD`` loads): no library, one table per
architecture, a few dozen instructions.

What it refuses, and why each is not left to the other layers:

- **sockets of any family but IPv4, IPv6 and netlink** under ``network: none``. The
  network namespace empties the IP world and abstract Unix sockets, but a Unix socket
  on the file system is reached through the (read-only) mount, and a read-only mount
  does not stop ``connect``. ``socketpair`` (an unnamed pair, which reaches nothing
  outside) stays allowed; so do IP sockets, which only see the sandbox's own loopback.
- **set-user-ID and set-group-ID bits**: ``chmod``/``fchmod``/``fchmodat``/``fchmodat2``
  with either bit, and ``open``/``openat``/``creat``/``mknod``/``mknodat`` creating a
  file with one. Bubblewrap mounts nothing ``nosuid`` on the host's side: a set-user-ID
  file the agent leaves in the workspace would work there, owned by the user who ran
  the session (as root: a set-user-ID-root program). Device nodes (``mknod``) too,
  though dropping every capability refuses them already.
- ``openat2`` (its mode sits in a structure a filter cannot read) and ``io_uring``
  (whose operations open files and sockets without these system calls): ``ENOSYS``, so
  callers fall back to the calls above.
- the kernel keyring (``keyctl``, ``add_key``, ``request_key``): it is not namespaced,
  so it would show the sandbox the keys of the user outside.
- system calls of another ABI (i386 on x86-64, x32): the process is killed, since the
  table above names only the native numbers.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["ARCHES", "Arch", "native_arch", "seccomp_filter"]

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20  # A = data[k] (32 bits)
_ALU_AND_K = 0x54  # A &= k
_JEQ_K = 0x15  # pc += (A == k) ? jt : jf
_JSET_K = 0x45  # pc += (A & k) ? jt : jf
_JGE_K = 0x35  # pc += (A >= k) ? jt : jf
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR = 0
_ARCH = 4


def _arg(index: int) -> int:
    """Offset of the low 32 bits of argument ``index`` (little-endian): every argument
    checked here is an ``int`` or ``mode_t``, which the kernel reads as 32 bits."""
    return 16 + 8 * index


AF_INET, AF_INET6, AF_NETLINK = 2, 10, 16
_SETID_BITS = 0o6000
_S_IFMT, _S_IFCHR, _S_IFBLK = 0o170000, 0o020000, 0o060000
# O_CREAT and __O_TMPFILE: the flags with which open() takes a mode (same on both arches).
_CREATING = 0o100 | 0o20000000


@dataclass(frozen=True)
class Arch:
    """The numbers of one architecture: its ``AUDIT_ARCH_*`` value and the system calls
    the filter looks at (``None``: the architecture has no such call)."""

    name: str
    audit: int
    socket: int
    io_uring: tuple[int, int, int]
    openat2: int
    keyring: tuple[int, ...]
    # (number, index of the mode argument) of calls that set a mode outright …
    chmods: tuple[tuple[int, int], ...]
    # … of calls that create a node with a mode (mknod: any type; the mode's type bits
    # say whether it is a device) …
    mknods: tuple[tuple[int, int], ...]
    # … and of open-like calls: (number, flags index or None for creat, mode index).
    opens: tuple[tuple[int, int | None, int], ...]
    #: System call numbers at or above this belong to another ABI (x32), or ``None``.
    foreign_from: int | None = None


ARCHES = {
    "x86_64": Arch(
        name="x86_64",
        audit=0xC000003E,
        socket=41,
        io_uring=(425, 426, 427),
        openat2=437,
        keyring=(248, 249, 250),
        chmods=((90, 1), (91, 1), (268, 2), (452, 2)),
        mknods=((133, 1), (259, 2)),
        opens=((2, 1, 2), (257, 2, 3), (85, None, 1)),
        foreign_from=0x40000000,
    ),
    "aarch64": Arch(
        name="aarch64",
        audit=0xC00000B7,
        socket=198,
        io_uring=(425, 426, 427),
        openat2=437,
        keyring=(217, 218, 219),
        chmods=((52, 1), (53, 2), (452, 2)),
        mknods=((33, 2),),
        opens=((56, 2, 3),),
    ),
}
_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def native_arch() -> Arch | None:
    """The table of the machine this runs on, ``None`` when there is none here."""
    return ARCHES.get(_MACHINES.get(platform.machine().lower(), ""))


class _Assembler:
    """Straight-line BPF with forward jumps to labels (classic BPF only jumps forward)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):

            def offset(target: int | str, here: int = index) -> int:
                if isinstance(target, int):
                    return target
                distance = self.labels[target] - here - 1
                if not 0 <= distance <= 255:
                    raise ValueError(f"seccomp: jump to {target} out of range")
                return distance

            out += struct.pack("<HBBI", code, offset(jt), offset(jf), k)
        return bytes(out)


def _check_mode(asm: _Assembler, mode: int, deny: str, test: int = _SETID_BITS) -> None:
    """Jump to ``deny`` when argument ``mode`` has a bit of ``test``; else allow."""
    asm.op(_LD_W_ABS, _arg(mode))
    asm.op(_JSET_K, test, deny, 0)
    asm.op(_RET_K, _RET_ALLOW)


def seccomp_filter(arch: Arch, network_none: bool) -> bytes:
    """The BPF program for ``arch``: see the module docstring for what it refuses."""
    asm = _Assembler()
    asm.op(_LD_W_ABS, _ARCH)
    asm.op(_JEQ_K, arch.audit, 1, 0)
    asm.op(_RET_K, _RET_KILL_PROCESS)
    asm.op(_LD_W_ABS, _NR)
    if arch.foreign_from is not None:
        asm.op(_JGE_K, arch.foreign_from, "kill", 0)
    enosys = (*arch.io_uring, arch.openat2)
    for number in enosys:
        asm.op(_JEQ_K, number, "enosys", 0)
    for number in arch.keyring:
        asm.op(_JEQ_K, number, "eperm", 0)
    if network_none:
        asm.op(_JEQ_K, arch.socket, "socket", 0)
    for number, mode in arch.chmods:
        asm.op(_JEQ_K, number, f"chmod-{mode}", 0)
    for number, mode in arch.mknods:
        asm.op(_JEQ_K, number, f"mknod-{mode}", 0)
    for number, flags, mode in arch.opens:
        asm.op(_JEQ_K, number, f"open-{flags}-{mode}", 0)
    asm.op(_RET_K, _RET_ALLOW)

    if network_none:
        asm.label("socket")
        asm.op(_LD_W_ABS, _arg(0))
        for family in (AF_INET, AF_INET6, AF_NETLINK):
            asm.op(_JEQ_K, family, "allow", 0)
        asm.op(_RET_K, _RET_ERRNO | errno.EACCES)
    for mode in sorted({mode for _, mode in arch.chmods}):
        asm.label(f"chmod-{mode}")
        _check_mode(asm, mode, "eperm")
    for mode in sorted({mode for _, mode in arch.mknods}):
        asm.label(f"mknod-{mode}")
        asm.op(_LD_W_ABS, _arg(mode))
        asm.op(_JSET_K, _SETID_BITS, "eperm", 0)
        asm.op(_ALU_AND_K, _S_IFMT)
        asm.op(_JEQ_K, _S_IFCHR, "eperm", 0)
        asm.op(_JEQ_K, _S_IFBLK, "eperm", 0)
        asm.op(_RET_K, _RET_ALLOW)
    for flags, mode in sorted({(f, m) for _, f, m in arch.opens}, key=str):
        asm.label(f"open-{flags}-{mode}")
        if flags is not None:
            # Without O_CREAT the mode argument is whatever the register held.
            asm.op(_LD_W_ABS, _arg(flags))
            asm.op(_JSET_K, _CREATING, 0, "allow")
        _check_mode(asm, mode, "eperm")
    asm.label("allow")
    asm.op(_RET_K, _RET_ALLOW)
    asm.label("eperm")
    asm.op(_RET_K, _RET_ERRNO | errno.EPERM)
    asm.label("enosys")
    asm.op(_RET_K, _RET_ERRNO | errno.ENOSYS)
    asm.label("kill")
    asm.op(_RET_K, _RET_KILL_PROCESS)
    return asm.assemble()

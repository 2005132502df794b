"""The threat table of docs/sandbox.md and docs/security.md as the tests check it: one
row per attempt, what each kind does about it, and which test observes it. The docs'
tables are read back and must say the same, row by row, cell by cell (their first
word: ``stopped``, ``possible`` or ``n/a``)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
KINDS = ("none", "bwrap", "docker")
S, P, NA = "stopped", "possible", "n/a"
#: The live sessions of test_sandbox_adversarial.py (four runs at once per kind).
SESSION = "test_sandbox_adversarial"
#: The probe agent run by test_sandbox_threats.py (as root, and bwrap as a user).
PROBE = "test_sandbox_threats"
#: A row no test can observe.
UNTESTED = "untested"

#: (the docs' row, {kind: verdict}, the test that observes it, the probe's key)
THREATS: list[tuple[str, dict[str, str], str, str | None]] = [
    ("write into your real `$HOME`", {"none": P, "bwrap": S, "docker": S}, SESSION, None),
    (
        "write into the repository checkout or anywhere else on the host",
        {"none": P, "bwrap": S, "docker": S},
        SESSION,
        None,
    ),
    ("write into the host's `/tmp`", {"none": P, "bwrap": S, "docker": S}, SESSION, None),
    ("write into a sibling run's workspace", {"none": P, "bwrap": S, "docker": S}, SESSION, None),
    (
        "read a file in your real home (`~/.ssh`, cloud credentials)",
        {"none": P, "bwrap": S, "docker": S},
        PROBE,
        "home-read",
    ),
    (
        "unmount what hides a home (`umount /root`) to read behind it",
        {"none": NA, "bwrap": S, "docker": S},
        PROBE,
        "umount",
    ),
    (
        "remount `/` writable (`mount -o remount,rw,bind /`)",
        {"none": NA, "bwrap": S, "docker": S},
        PROBE,
        "remount rw",
    ),
    ("make a device node (`mknod`)", {"none": P, "bwrap": S, "docker": S}, PROBE, "mknod"),
    (
        "leave a set-user-ID file in the workspace",
        {"none": P, "bwrap": S, "docker": S},
        PROBE,
        "setuid",
    ),
    ("`chown` a file to another user", {"none": P, "bwrap": S, "docker": S}, PROBE, "chown"),
    ("`ptrace` a process outside the run", {"none": P, "bwrap": S, "docker": S}, PROBE, "ptrace"),
    (
        "read an environment variable you did not allow",
        {"none": P, "bwrap": S, "docker": S},
        SESSION,
        None,
    ),
    (
        "open a TCP connection with `network: none`",
        {"none": NA, "bwrap": S, "docker": S},
        PROBE,
        "tcp socket",
    ),
    (
        "connect to a Unix socket on the file system with `network: none`",
        {"none": NA, "bwrap": S, "docker": S},
        PROBE,
        "unix socket",
    ),
    ("fork without end (a fork bomb)", {"none": P, "bwrap": S, "docker": S}, PROBE, "fork bomb"),
    (
        "leave a process running (`setsid nohup sleep …`)",
        {"none": P, "bwrap": S, "docker": S},
        SESSION,
        None,
    ),
    (
        "hard-link a host secret into the workspace",
        {"none": P, "bwrap": S, "docker": S},
        PROBE,
        "hard-link",
    ),
    (
        "have `expect.files` read a host file through a symlink",
        {"none": S, "bwrap": S, "docker": S},
        SESSION,
        None,
    ),
    (
        "get a secret recorded through a symlink or a hard link in the workspace",
        {"none": S, "bwrap": S, "docker": S},
        SESSION,
        None,
    ),
    (
        "use `network: host` to reach any host",
        {"none": P, "bwrap": P, "docker": P},
        PROBE,
        "tcp socket, network host",
    ),
    (
        "read the rest of the host file system (`/etc`, `/usr`, `/opt`, checkouts outside "
        "`/home` and `/tmp`)",
        {"none": P, "bwrap": P, "docker": S},
        PROBE,
        "host-read",
    ),
    ("exploit a kernel bug", {"none": P, "bwrap": P, "docker": P}, UNTESTED, None),
]


def verdict(cell: str) -> str:
    """A table cell's verdict: its first word (bold or not)."""
    word = cell.strip().split()[0].strip("*").rstrip(",")
    return {"stopped": S, "possible": P, "n/a": NA}.get(word, word)


def docs_table(page: str) -> list[tuple[str, dict[str, str]]]:
    """The threat table of ``docs/<page>``: its rows' first cells and verdicts."""
    text = (DOCS / page).read_text(encoding="utf-8")
    header = "| the agent tries to … | `none` | `bwrap` | `docker` |"
    start = text.index(header)
    rows: list[tuple[str, dict[str, str]]] = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        rows.append(
            (cells[0], dict(zip(KINDS, (verdict(cell) for cell in cells[1:]), strict=True)))
        )
    return rows


def expected(probe_key: str, kind: str) -> str:
    """What the table says the probe's ``probe_key`` comes to under ``kind``."""
    [cells] = [cells for _, cells, test, key in THREATS if test == PROBE and key == probe_key]
    return cells[kind]


def session_rows() -> dict[str, dict[str, str]]:
    """The rows the live sessions observe, by their docs text."""
    return {row: cells for row, cells, test, _ in THREATS if test == SESSION}

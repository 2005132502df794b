"""A project for the scale-out sessions and an agent that says where it ran.

The agent is a Python script (on the same machine as every worker, so one absolute path
serves them all): it reads the prompt, appends one JSON line to ``agent.jsonl`` beside
itself — its pid, its process group, the command lines of its ancestors, when it started
and ended — sleeps as long as ``sleep.txt`` says, and succeeds, except every
``fail_every``-th run to start (a shared counter under a lock), which fails.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

AGENT = """\
import fcntl, json, os, sys, time
from pathlib import Path

sys.stdin.read()
here = Path(__file__).parent
started = time.time()
chain, pid = [], os.getpid()
while pid > 1:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\\0", b" ").decode()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        break
    chain.append(cmdline)
    pid = int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])
with open(here / "counter", "a+") as counter:
    fcntl.flock(counter, fcntl.LOCK_EX)
    counter.seek(0)
    number = int(counter.read() or 0) + 1
    counter.seek(0)
    counter.truncate()
    counter.write(str(number))
settings = json.loads((here / "settings.json").read_text())
time.sleep(settings["sleep"])
every = settings["fail_every"]
ok = not every or number % every
line = {"pid": os.getpid(), "pgid": os.getpgid(0), "chain": chain, "started": started,
        "ended": time.time(), "number": number, "ok": bool(ok)}
with open(here / "agent.jsonl", "a") as out:
    out.write(json.dumps(line) + "\\n")
print("<promise>SUCCESS</promise>" if ok else "<promise>FAILURE</promise>")
"""


def agent(project: Project, *, sleep: float = 0.5, fail_every: int = 0) -> str:
    """Write the agent; its command line."""
    script = project.write("agent/agent.py", AGENT)
    project.write("agent/settings.json", json.dumps({"sleep": sleep, "fail_every": fail_every}))
    return f"{sys.executable} {script}"


def agent_lines(project: Project) -> list[dict[str, Any]]:
    path = project.path / "agent/agent.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def scenario(project: Project, name: str = "s", *, repeat: int = 1, gate: str = "") -> None:
    """A scenario of the greet procedure: one iteration, expecting success (``gate``:
    aggregate keys of ``expect:``, e.g. ``success_rate: {min: 0.9}``)."""
    project.scenario(
        name,
        f"procedure: greet\nmax_iterations: 1\nrepeat: {repeat}\n"
        f"expect:\n  status: success\n{textwrap.indent(gate, '  ')}iterations: []\n",
    )


def records(project: Project) -> list[dict[str, Any]]:
    """Every results record under ``.ooda/results``, every session's."""
    found = []
    for log in sorted((project.path / ".ooda/results").glob("*.jsonl")):
        found += [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [record for record in found if "run_id" in record or "id" in record]


def peak(spans: list[tuple[float, float]]) -> int:
    """The most spans open at once."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    level = top = 0
    for _, step in events:
        level += step
        top = max(top, level)
    return top


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def session_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inner sessions' environment: no outer coverage or xdist markers."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_ADDOPTS"):
        monkeypatch.delenv(name, raising=False)
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")


def agent_pids() -> list[int]:
    """The processes running the agent script now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if b"agent/agent.py" in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def ancestors(pid: int) -> list[int]:
    """The process ids above ``pid``, nearest first."""
    chain = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/status") as handle:
                line = next(line for line in handle if line.startswith("PPid:"))
        except (OSError, StopIteration):
            break
        pid = int(line.split()[1])
        chain.append(pid)
    return chain

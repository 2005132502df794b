"""The concurrency cap's lock-file semaphore, across real processes."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import TYPE_CHECKING

from pytest_ooda.live.slots import acquire

if TYPE_CHECKING:
    from pathlib import Path

HOLDER = """
import sys, time, json
from pathlib import Path
from pytest_ooda.live.slots import acquire
directory, log = Path(sys.argv[1]), Path(sys.argv[2])
# All five start together, however slowly each process came up.
ready = log.parent / "ready"
ready.mkdir(exist_ok=True)
(ready / sys.argv[3]).touch()
while len(list(ready.iterdir())) < 5:
    time.sleep(0.01)
with acquire(directory, "claude -p", 2) as slot:
    with log.open("a") as out:
        out.write(json.dumps(["in", time.monotonic(), slot.waited]) + "\\n")
    time.sleep(0.4)
    with log.open("a") as out:
        out.write(json.dumps(["out", time.monotonic()]) + "\\n")
"""


def test_at_most_n_processes_hold_a_slot_at_once(tmp_path: Path) -> None:
    import json

    log = tmp_path / "log.jsonl"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(tmp_path / "slots"), str(log), str(number)]
        )
        for number in range(5)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    events = sorted(
        (entry[1], 1 if entry[0] == "in" else -1)
        for entry in map(json.loads, log.read_text().splitlines())
    )
    # "out" before "in" at the same instant: a slot freed and retaken is not overlap.
    events.sort(key=lambda item: (item[0], item[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    assert peak == 2
    waits = [
        entry[2] for entry in map(json.loads, log.read_text().splitlines()) if entry[0] == "in"
    ]
    assert sum(wait > 0.2 for wait in waits) >= 3


def test_a_killed_holder_frees_its_slot(tmp_path: Path) -> None:
    hold = (
        "import sys, time\nfrom pathlib import Path\n"
        "from pytest_ooda.live.slots import acquire\n"
        "with acquire(Path(sys.argv[1]), 'api', 1):\n"
        "    print('held', flush=True)\n    time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", hold, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    waited: list[float] = []
    proc.kill()
    proc.wait()
    started = time.monotonic()
    with acquire(tmp_path, "api", 1, on_wait=waited.append):
        pass
    assert time.monotonic() - started < 5
    # Another command has its own slots.
    with acquire(tmp_path, "other", 1), acquire(tmp_path, "api", 1):
        pass

#!/usr/bin/env python3
"""A fake AI CLI for tests: behaves as one JSON "step" says.

Usage: ``agent.py '<json step>'`` or ``agent.py --plan PLAN.json`` where the plan is a list
of steps, one per invocation (a counter file ``PLAN.json.count`` remembers where it is;
the last step repeats). Step keys, all optional, applied in this order:

  pidfile: path        write own pid (== process group id) there
  ignore_term: bool    ignore SIGTERM
  read_stdin: bool     read the whole prompt first (default true)
  record_prompt: path  append the prompt received to that file
  echo_prompt: bool    print the prompt
  grandchild: float    start a grandchild that sleeps this long with our stdout
  interleave: int      alternate N numbered lines between stdout and stderr
  flood: int           print this many filler bytes; with ``signal_at`` start|end the
                       ``<promise>{signal}</promise>`` line goes before or after them
  invalid_utf8: bool   print bytes that are not UTF-8
  print: str           print this text
  stderr: str          print this text to stderr
  sleep: float         then sleep
  kill: str            then kill itself with this signal name (SIGKILL, SIGSEGV)
  exit: int            exit status (default 0)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def load_step(argv: list[str]) -> dict[str, Any]:
    if len(argv) >= 2 and argv[0] == "--plan":
        plan_path = Path(argv[1])
        plan = json.loads(plan_path.read_text())
        counter = Path(str(plan_path) + ".count")
        index = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(index + 1))
        step: dict[str, Any] = plan[min(index, len(plan) - 1)]
        return step
    return json.loads(argv[0]) if argv else {}


def main() -> int:
    step = load_step(sys.argv[1:])
    out = sys.stdout.buffer
    if "pidfile" in step:
        Path(step["pidfile"]).write_text(str(os.getpid()))
    if step.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    prompt = b""
    if step.get("read_stdin", True):
        prompt = sys.stdin.buffer.read()
    if "record_prompt" in step:
        with open(step["record_prompt"], "ab") as fh:
            fh.write(prompt + b"\n=====\n")
    if step.get("echo_prompt"):
        out.write(prompt)
    if "grandchild" in step:
        code = "import signal,time;signal.signal(signal.SIGTERM, signal.SIG_IGN)"
        code += f";time.sleep({float(step['grandchild'])})"
        subprocess.Popen([sys.executable, "-c", code])
    for i in range(int(step.get("interleave", 0))):
        stream = out if i % 2 == 0 else sys.stderr.buffer
        stream.write(f"line {i}\n".encode())
        stream.flush()
    if "flood" in step:
        line = b"x" * 1023 + b"\n"
        marker = f"<promise>{step.get('signal', 'SUCCESS')}</promise>\n".encode()
        if step.get("signal_at") == "start":
            out.write(marker)
        block = line * 1024
        remaining = int(step["flood"])
        while remaining > 0:
            piece = block if remaining >= len(block) else block[:remaining]
            out.write(piece)
            remaining -= len(piece)
        if step.get("signal_at") == "end":
            out.write(marker)
    if step.get("invalid_utf8"):
        out.write(b"bad \xff\xfe bytes \xc3(\n")
    if "print" in step:
        out.write(step["print"].encode())
    out.flush()
    if "stderr" in step:
        sys.stderr.write(step["stderr"])
        sys.stderr.flush()
    if "sleep" in step:
        time.sleep(float(step["sleep"]))
    if "kill" in step:
        os.kill(os.getpid(), getattr(signal, step["kill"]))
        time.sleep(5)
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())

"""A stand-in AI command for the behaviour runs (tests/rooda/behaviour.json), the same
for rooda and for ``ooda run``: it reads the prompt, counts its start in COUNT_FILE, and
ends as MODE says.

Usage: python stand_in.py MODE COUNT_FILE
  silent-failure  prints nothing, exits 1 (an agent that dies before saying a word)
  no-signal       prints a line, exits 0 (never signals: the loop runs to its limit)
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    mode, count = sys.argv[1], Path(sys.argv[2])
    sys.stdin.buffer.read()
    with count.open("a", encoding="utf-8") as starts:
        starts.write("started\n")
    if mode == "silent-failure":
        return 1
    print("working on it")
    return 0


if __name__ == "__main__":
    sys.exit(main())

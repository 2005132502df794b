"""A stand-in AI command for regen.py: saves the prompt it is given and signals SUCCESS.

Usage (as rooda's --ai-cmd): python capture_ai.py OUTPUT_FILE
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    Path(sys.argv[1]).write_bytes(sys.stdin.buffer.read())
    print("<promise>SUCCESS</promise>")
    return 0


if __name__ == "__main__":
    sys.exit(main())

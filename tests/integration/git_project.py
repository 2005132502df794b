"""A git repository holding three scenarios over shared and private fragments, for the
change-impact tests (``ooda changed``, ``pytest --ooda-changed``).

- ``greet/hello`` reads ``prompts/shared.md``, its own ``prompts/greet.md`` and the
  template ``prompts/tone.md`` with ``mode: calm``;
- ``farewell/bye`` reads ``prompts/shared.md``, its own ``prompts/farewell.md`` and
  ``prompts/tone.md`` with ``mode: loud``; its workspace is ``workspaces/bye``;
- ``count/numbers`` reads only its own ``prompts/count.md``.

``prompts/tone.md`` has a branch per mode and one (``silent``) that no scenario takes.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """\
loop:
  default_max_iterations: 3
procedures:
  greet:
    observe:
      - path: prompts/shared.md
      - path: prompts/greet.md
      - path: prompts/tone.md
        parameters: {mode: calm}
    act:
      - content: "Say hello, then output <promise>SUCCESS</promise>."
  farewell:
    observe:
      - path: prompts/shared.md
      - path: prompts/farewell.md
    act:
      - path: prompts/tone.md
        parameters: {mode: loud}
      - content: "Say goodbye, then output <promise>SUCCESS</promise>."
  count:
    observe:
      - path: prompts/count.md
    act:
      - content: "Count to three, then output <promise>SUCCESS</promise>."
"""

TONE = """\
{{if eq .mode "calm"}}Speak softly.
{{else if eq .mode "loud"}}Speak up.
{{else if eq .mode "silent"}}Say nothing.
{{end}}"""

FILES = {
    "ooda-config.yml": CONFIG,
    "prompts/shared.md": "Read the room first.\n",
    "prompts/greet.md": "Find who arrived.\n",
    "prompts/farewell.md": "Find who is leaving.\n",
    "prompts/count.md": "Find the numbers.\n",
    "prompts/tone.md": TONE,
    "scenarios/greet/hello.yml": "procedure: greet\niterations: []\n",
    "scenarios/farewell/bye.yml": "procedure: farewell\nworkspace: ../../workspaces/bye\n"
    "iterations: []\n",
    "scenarios/count/numbers.yml": "procedure: count\niterations: []\n",
    "workspaces/bye/guests.txt": "Ada\nGrace\n",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def write(root: Path, relative: str, text: str) -> None:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def make_project(root: Path) -> str:
    """Write the project into ``root``, commit it on ``main``; returns the commit."""
    git(root, "init", "-q", "-b", "main")
    for relative, text in FILES.items():
        write(root, relative, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return git(root, "rev-parse", "HEAD")

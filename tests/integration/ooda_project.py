"""A small project for the plugin's end-to-end tests, written by pytester.

``project`` writes an ``ooda-config.yml`` whose procedure ``greet`` uses every kind of
fragment (inline, relative file, built-in, templated) and a ``fake-ai`` script standing
in for a real AI CLI. Tests then run pytest on it and assert on the outcome lines.
"""

from __future__ import annotations

import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


GREET_CONFIG = """\
procedures:
  greet:
    display: "Greet"
    summary: "Say hello"
    observe:
      - content: "Look around the room."
      - path: prompts/observe.md
    orient:
      - path: "builtin:fragments/orient/identify_drift.md"
    decide:
      - path: prompts/decide.md
    act:
      - content: |
          Say hello.
          Output <promise>SUCCESS</promise> when everyone was greeted.
          Output <promise>FAILURE</promise> if nobody is there.
"""

OBSERVE_MD = "Read the README.\nList the people present.\n"
DECIDE_MD = "Decide whom to greet first.\n"
TEMPLATED_DECIDE_MD = "Decide whom to greet first, starting with {{.target}}.\n"

#: ``GREET_CONFIG`` with a templated fragment (rendered with its parameters).
TEMPLATED_CONFIG = GREET_CONFIG.replace(
    "      - path: prompts/decide.md\n",
    '      - path: prompts/decide.md\n        parameters:\n          target: "the README"\n',
)

# Prints a planted secret and whatever the plan file says; records every prompt.
FAKE_AI = """\
import json, os, sys
from pathlib import Path

prompt = sys.stdin.read()
here = Path(__file__).parent
with open(here / "prompts.log", "a", encoding="utf-8") as log:
    log.write(prompt + "\\n===\\n")
plan = json.loads((here / "plan.json").read_text())
count_file = here / "plan.count"
index = int(count_file.read_text()) if count_file.exists() else 0
count_file.write_text(str(index + 1))
step = plan[min(index, len(plan) - 1)]
print("token in use: " + os.environ.get("OODA_TEST_API_TOKEN", ""))
print(step.get("print", ""))
for name, text in step.get("files", {}).items():
    Path(name).write_text(text)
sys.exit(step.get("exit", 0))
"""


class Project:
    """The pytester directory plus helpers to write scenarios and drive the fake AI."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
        return target

    def scenario(self, name: str, text: str, procedure: str = "greet") -> Path:
        return self.write(f"scenarios/{procedure}/{name}.yml", text)

    def fake_ai(self, plan: str) -> str:
        """Write the fake AI and its plan (JSON list of steps); return its command line."""
        self.write("fake-ai/agent.py", FAKE_AI)
        self.write("fake-ai/plan.json", plan)
        return f"{sys.executable} {self.path / 'fake-ai' / 'agent.py'}"

    def run(self, *args: str) -> pytest.RunResult:
        # Plugins with no part in these sessions: pytest-benchmark warns in every xdist
        # run, and hypothesis's terminal summary costs about a second per run.
        return self.pytester.runpytest(
            "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest", *args
        )


def summary_line(nodeid: str, message: str) -> str:
    """The short-summary line pytest prints for a failed item whose report is our own
    text: pytest 9 appends the report's first line after ``-``, pytest 8 prints the node
    id alone."""
    if pytest.version_tuple >= (9,):
        return f"FAILED {nodeid} - {message}"
    return f"FAILED {nodeid}"


#: Variables of the outer session that must not reach an inner pytest run: the
#: developer's own AI command and sandbox, and xdist's worker markers (syrupy reads them
#: and would treat the inner run as a worker).
OUTER_VARIABLES = (
    "OODA_LOOP_AI_CMD",
    "OODA_LOOP_AI_CMD_ALIAS",
    "OODA_SANDBOX",
    "ROODA_LOOP_AI_CMD",
    "ROODA_LOOP_AI_CMD_ALIAS",
    "ROODA_CONFIG_HOME",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
)


def greet_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A pytester project holding the ``greet`` procedure, with the developer's own
    configuration and the outer session's variables kept out of its runs."""
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    for name in OUTER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    created = Project(pytester)
    created.write("ooda-config.yml", GREET_CONFIG)
    created.write("prompts/observe.md", OBSERVE_MD)
    created.write("prompts/decide.md", DECIDE_MD)
    return created

"""docs/ci.md stays true: its workflow uses this repository's action with inputs the
action has, its GitLab job is valid YAML whose `pytest` and `ooda` commands exist and
whose note-posting script compiles."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from pytest_ooda.cli.app import build_parser
from pytest_ooda.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[3]
TEXT = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
BLOCKS = [
    yaml.safe_load(body)
    for kind, body in re.findall(r"```(\w*)\n(.*?)```", TEXT, re.S)
    if kind == "yaml"
]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def test_the_workflow_gives_the_action_inputs_it_has() -> None:
    (workflow,) = [block for block in BLOCKS if "jobs" in block]
    steps = workflow["jobs"]["measure"]["steps"]
    (ours,) = [step for step in steps if str(step.get("uses", "")).endswith("/pytest-ooda@v1")]
    assert set(ours["with"]) <= set(ACTION["inputs"])
    assert workflow["permissions"]["pull-requests"] == "write"
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0
    # Each input of the action is in the table of the page.
    for name in ACTION["inputs"]:
        assert f"| `{name}` |" in TEXT


def test_the_gitlab_jobs_commands_exist_and_its_script_compiles() -> None:
    (job,) = [block["prompts"] for block in BLOCKS if "prompts" in block]
    flags = {row.pytest for row in SETTINGS if row.pytest} | {"-m", "-n"}
    parser = build_parser()
    args = shlex.split(job["variables"]["OODA_ARGS"])
    seen = set()
    for line in job["script"]:
        command = line.split("||")[0].split(" > ")[0]
        command = command.strip().removeprefix("(cd base && ").rstrip(")")
        words = shlex.split(command.replace("$OODA_ARGS", " ".join(args)))
        if words and words[0] == "ooda":
            parser.parse_args(words[1:])
            seen.add("ooda " + words[1])
        elif words and words[0] == "pytest":
            used = {word.split("=")[0] for word in words if word.startswith("-")}
            assert used <= flags, used - flags
            seen.add("pytest")
        elif line.startswith("python3 - <<'NOTE'"):
            compile(line.split("<<'NOTE'\n", 1)[1].rsplit("NOTE", 1)[0], "note", "exec")
            seen.add("note")
    assert seen == {"ooda changed", "ooda report", "pytest", "note"}

"""This repository's composite action (``action.yml``) run step by step as GitHub's
runner runs it, on this machine: each ``run`` step in bash with the step's ``env``, the
``${{ … }}`` expressions it uses filled in, its outputs read from ``$GITHUB_OUTPUT``,
its ``if`` decided; a step that fails fails the action and the steps after it are not
run. ``actions/upload-artifact`` is stood in for (the files it names must exist; its
``artifact-url`` is made up), and the install step is left out: pytest-ooda is
installed here already."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "action.yml"
ARTIFACT_URL = "https://github.example/octo/prompts/actions/runs/7/artifacts/11"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class ActionRun:
    """What a run of the action did: each step's outcome, outputs and log."""

    steps: list[tuple[str, str]] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    log: str = ""

    @property
    def failed(self) -> bool:
        return any(outcome == "failure" for _, outcome in self.steps)


def _value(expression: str, context: dict[str, Any]) -> str:
    node: Any = context
    for part in expression.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""
    return "" if node is None else str(node)


def _fill(text: str, context: dict[str, Any]) -> str:
    return _EXPRESSION.sub(lambda m: _value(m.group(1), context), text)


def _condition(text: str, context: dict[str, Any]) -> bool:
    """An ``if:`` of comparisons joined by ``&&``/``||`` (all this action uses)."""
    python = re.sub(
        r"[A-Za-z_][\w.-]*(?:\.[\w-]+)+",
        lambda m: repr(_value(m.group(0), context)),
        text.replace("&&", " and ").replace("||", " or "),
    )
    return bool(eval(python, {"__builtins__": {}}))  # the action's own, fixed text


def run_action(
    workspace: Path, inputs: dict[str, str], env: dict[str, str], temp: Path
) -> ActionRun:
    spec = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    given = {name: str(item.get("default", "")) for name, item in spec["inputs"].items()}
    given.update(inputs)
    context: dict[str, Any] = {"inputs": given, "steps": {}, "runner": {"temp": str(temp)}}
    done = ActionRun()
    base = {
        **os.environ,
        **env,
        "GITHUB_ACTION_PATH": str(ROOT),
        "RUNNER_TEMP": str(temp),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    for number, step in enumerate(spec["runs"]["steps"]):
        name = step.get("id") or f"step-{number}"
        if done.failed or ("if" in step and not _condition(step["if"], context)):
            done.steps.append((name, "skipped"))
            continue
        outputs: dict[str, str] = {}
        if step["name"] == "Install pytest-ooda":
            done.steps.append((name, "skipped"))
            continue
        if "uses" in step:
            assert step["uses"].startswith("actions/upload-artifact@")
            paths = _fill(step["with"]["path"], context).split()
            missing = [path for path in paths if not Path(path).exists()]
            outcome = "failure" if missing else "success"
            outputs["artifact-url"] = ARTIFACT_URL
            done.log += f"upload {paths} missing={missing}\n"
        else:
            output = temp / f"output-{number}"
            output.write_text("")
            step_env = {
                key: _fill(str(value), context) for key, value in step.get("env", {}).items()
            }
            command = _fill(step["run"], context)
            ran = subprocess.run(
                ["bash", "-e", "-c", command],
                cwd=workspace,
                env={**base, **step_env, "GITHUB_OUTPUT": str(output)},
                capture_output=True,
                text=True,
                check=False,
            )
            done.log += f"--- {name}\n{ran.stdout}{ran.stderr}"
            outcome = "success" if ran.returncode == 0 else "failure"
            for line in output.read_text().splitlines():
                key, _, value = line.partition("=")
                outputs[key] = value
        context["steps"][name] = {"outputs": outputs}
        done.outputs[name] = outputs
        done.steps.append((name, outcome))
    return done

"""A plugin laid out as the user's own (seed 004, fractal-planner 0.1.1): a plugin and a
marketplace manifest, 8 subagents, 6 skills (one with a ``reference.md`` beside it, one
running a script of its own), 2 hooks with their scripts, and the package's other files
(``package.json``, ``README.md``, a built ``dist/``) at the top. The seed carries the
text of one file only, so the text here is ours; the layout is the seed's. Every
subagent and skill is collected under the name Claude Code gives it, snapshot and
linted; the hooks' scripts must be there and executable, and the files a skill points
at must exist — each mistake a failing item at its file, line and column."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from pytest_ooda.agents import MATERIAL_SECTIONS

if TYPE_CHECKING:
    from pathlib import Path

    from ooda_project import Project

(SECTION,) = MATERIAL_SECTIONS
NODE = f"ooda-config.yml::{SECTION}[fractal-planner]"

SUBAGENTS = {
    "fp-analyst": "Analyses a goal's requirements and risks before it is decomposed",
    "fp-context-builder": "Collects the files and conventions a task's builder needs",
    "fp-critic": "Challenges a draft plan and lists the gaps it finds in it",
    "fp-decomposer": "Splits a goal into a tree of tasks with acceptance criteria",
    "fp-interviewer": "Asks the user the questions that settle an ambiguous goal",
    "fp-linear-sync": "Mirrors a plan's task tree into Linear issues and back",
    "fp-researcher": "Reads the codebase and documentation a plan depends on",
    "fp-task-tracker": "Records each task's status as the implementation proceeds",
}
SKILLS = {
    "commit": "Commits the finished task's changes with a message naming the task",
    "fp": "Plans a goal as a fractal tree of tasks through interview and critique",
    "handoff": "Writes the handoff notes another session needs to resume a plan",
    "implement": "Implements a plan's leaf tasks in order and verifies each",
    "retry": "Retries a failed task with the verifier's feedback in hand",
    "status": "Reports a plan's progress task by task",
}
HOOKS = {
    "hooks": {
        "TeammateIdle": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "${CLAUDE_PLUGIN_ROOT}/hooks/nudge-teammate.sh",
                    }
                ]
            }
        ],
        "PostToolUse": [
            {
                "matcher": "Write|Edit",
                "hooks": [
                    {
                        "type": "command",
                        "command": "${CLAUDE_PLUGIN_ROOT}/hooks/run-comment-checker.sh",
                        "timeout": 30,
                    }
                ],
            }
        ],
    }
}


def _front(**keys: str) -> str:
    return "---\n" + "".join(f"{key}: {value}\n" for key, value in keys.items()) + "---\n"


def _write(root: Path, relative: str, text: str, *, executable: bool = False) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        os.chmod(path, 0o755)


def _plugin(root: Path) -> Path:
    _write(root, ".claude-plugin/plugin.json", json.dumps({"name": "fp", "version": "0.1.1"}))
    _write(
        root,
        ".claude-plugin/marketplace.json",
        json.dumps(
            {
                "name": "fractal",
                "owner": {"name": "someone"},
                "plugins": [{"name": "fp", "source": "./"}],
            }
        ),
    )
    for name, summary in SUBAGENTS.items():
        what = summary.lower()
        _write(
            root,
            f"agents/{name}.md",
            _front(
                name=name,
                description=f"{summary}. Use when the fp skill asks for it.",
                tools="Read, Grep, Glob",
                model="sonnet",
            )
            + f"You are the planner's {name}: {what}.\n",
        )
    for name, summary in SKILLS.items():
        _write(
            root,
            f"skills/{name}/SKILL.md",
            _front(name=name, description=f"{summary}. Use when the user runs /fp:{name}.")
            + f"# fp:{name}\n\n{summary}.\n",
        )
    implement = root / "skills/implement/SKILL.md"
    implement.write_text(
        implement.read_text() + "Read [the task interface](reference.md) before the first task.\n"
    )
    _write(root, "skills/implement/reference.md", "# fp:implement reference\n")
    fp = root / "skills/fp/SKILL.md"
    fp.write_text(fp.read_text() + "First run `${CLAUDE_SKILL_DIR}/scripts/resolve-env.sh`.\n")
    _write(root, "skills/fp/scripts/resolve-env.sh", "#!/bin/sh\necho ok\n", executable=True)
    _write(root, "hooks/hooks.json", json.dumps(HOOKS, indent=2) + "\n")
    for script in ("nudge-teammate.sh", "run-comment-checker.sh"):
        _write(root, f"hooks/{script}", "#!/bin/sh\nexit 0\n", executable=True)
    _write(root, "package.json", json.dumps({"name": "@someone/fractal-planner"}))
    _write(root, "README.md", "# fractal-planner\n")
    _write(root, "dist/cli/validate-tasks.js", "console.log('ok');\n")
    return root


def test_the_seed_s_layout_collects_snapshots_and_passes(project: Project) -> None:
    _plugin(project.path / "fractal-planner")
    project.write("ooda-config.yml", f"{SECTION}: [fractal-planner]\n")
    listed = project.run("--collect-only", "-q")
    items = [line for line in listed.outlines if line.startswith(NODE)]
    names = sorted(
        [f"subagent/fp:{name}" for name in SUBAGENTS] + [f"skill/fp:{name}" for name in SKILLS]
    )
    assert items[0] == f"{NODE}::config"
    assert sorted(item[len(NODE) + 2 :] for item in items[1:]) == sorted(
        [f"config[{key}]" for key in names] + [f"prompt[{key}]" for key in names]
    )
    project.run("--snapshot-update").assert_outcomes(passed=29)
    result = project.run("-W", "error::pytest_ooda.errors.LintWarning")
    result.assert_outcomes(passed=29)
    stored = project.path / "__snapshots__" / "ooda-config" / f"{SECTION}[fractal-planner]"
    skill = (stored / "skill.fp~fp.md").read_text()
    assert "- fp:fp: Plans a goal as a fractal tree of tasks" in skill
    analyst = (stored / "subagent.fp~fp-analyst.md").read_text()
    assert "- fp:fp-analyst: Analyses a goal's requirements" in analyst


def test_its_hooks_scripts_and_references_must_be_there(project: Project) -> None:
    root = _plugin(project.path / "fractal-planner")
    project.write("ooda-config.yml", f"{SECTION}: [fractal-planner]\n")
    os.chmod(root / "hooks/nudge-teammate.sh", 0o644)
    (root / "hooks/run-comment-checker.sh").unlink()
    (root / "skills/implement/reference.md").unlink()
    (root / "skills/fp/scripts/resolve-env.sh").unlink()
    result = project.run("-k", "config and not prompt", "-p", "no:syrupy")
    result.assert_outcomes(passed=12, failed=3)
    hooks = "fractal-planner/hooks/hooks.json"
    result.stdout.fnmatch_lines(
        [
            f"{hooks}:8:24: OODA005 error: hooks.TeammateIdle?0?.hooks?0?.command: "
            "${CLAUDE_PLUGIN_ROOT}/hooks/nudge-teammate.sh is not executable*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            f"{hooks}:19:24: OODA005 error: hooks.PostToolUse?0?.hooks?0?.command: "
            "${CLAUDE_PLUGIN_ROOT}/hooks/run-comment-checker.sh does not exist*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "fractal-planner/skills/implement/SKILL.md:8:27: OODA005 error: skill fp:implement: "
            "references reference.md, which does not exist*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "fractal-planner/skills/fp/SKILL.md:8:12: OODA005 error: skill fp:fp: references "
            "scripts/resolve-env.sh, which does not exist*",
        ]
    )

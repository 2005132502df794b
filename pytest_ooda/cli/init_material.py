"""``ooda init --claude-plugin DIR``: testing an agent's own material from zero — a
config whose material section names the plugin (or ``.claude/`` directory), a ``raw``
procedure per command and skill (the prompt that invokes it, passed through as a person
types it), a scenario per procedure to record with the real agent (``expect.activation``
says the command or skill fired), and the prompt snapshots of every command, skill and
subagent, so plain ``pytest`` is green at once (or names what is wrong with the
material). Nothing is overwritten. The flag is named after the material's key."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.cli.common import EXIT_OK
from pytest_ooda.errors import OodaError, UsageError

if TYPE_CHECKING:
    from pytest_ooda.agents import Item, Material

__all__ = ["init_material", "planned_material_files"]

SCENARIO = "first-live"

HEAD = """\
# pytest-ooda configuration for {what} (written by `ooda init --{section}-plugin`).
# `pytest` checks, lints and snapshots every command, skill and subagent, and replays
# the scenarios; `ooda help {topic}` says what is rendered and how it is observed.
{section}: [{path}]

loop:
{agent}
procedures:
  # One per command and skill: the prompt that invokes it, passed through exactly as
  # written (prompt_format: raw, one turn of the agent's own loop). Give a command its
  # arguments; for a skill, words a user would say should make it fire too.
"""

PROCEDURE = """\
  {name}:   # {shown} ({file})
    prompt_format: raw
    act:
      - content: {prompt}{hint}
"""

LIVE = """\
# Record it with the real agent: pytest -m live -k {procedure} --ooda-record-mode=once
# (its workspace is an empty repository with the {section} material installed; give it
# `workspace: DIR` and checks such as `expect.files` or `expect.commands`).
procedure: {procedure}
expect:
  activation: {{{kind}: '{name}'}}
iterations: []
"""


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"


def _procedures(material: Material) -> list[tuple[str, Item]]:
    """``(procedure name, item)`` for each command and skill, names made unique."""
    found: list[tuple[str, Item]] = []
    used: set[str] = set()
    for item in material.items:
        if item.kind == "subagent":
            continue
        base = f"{'cmd' if item.kind == 'command' else 'skill'}-{_slug(item.name)}"
        name, number = base, 2
        while name in used:
            name, number = f"{base}-{number}", number + 1
        used.add(name)
        found.append((name, item))
    return found


def planned_material_files(
    section: str, material: Material, shown_path: str, agent_lines: str
) -> dict[str, str]:
    """What ``ooda init --SECTION-plugin`` writes (the snapshots apart), by path."""
    import json

    from pytest_ooda.agents import MATERIAL_HELP

    what = f"the {material.kind} {material.name}"
    text = HEAD.format(
        what=what,
        section=section,
        path=shown_path,
        agent=agent_lines,
        topic=MATERIAL_HELP[section],
    )
    files: dict[str, str] = {}
    for name, item in _procedures(material):
        hint = item.text("argument-hint")
        text += PROCEDURE.format(
            name=name,
            shown=item.shown,
            file=item.file.relative_to(material.root).as_posix(),
            prompt=json.dumps(f"/{item.name}"),
            hint=f"   # arguments: {hint}" if hint else "",
        )
        files[f"scenarios/{name}/{SCENARIO}.yml"] = LIVE.format(
            procedure=name, section=section, kind=item.kind, name=item.name
        )
    return {"ooda-config.yml": text, **files}


def snapshot_files(section: str, material: Material, config_file: Path) -> dict[str, str]:
    """Every prompt snapshot plain ``pytest`` compares: each command, skill and subagent
    (and each as a procedure invokes it), and each procedure's phases and prompt."""
    from pytest_ooda._types import PHASES
    from pytest_ooda.agents import render_snapshot, snapshot_name
    from pytest_ooda.compose import assemble_prompt, compose_phase
    from pytest_ooda.config import load_config, resolve_run_settings

    config = load_config(config_file, cwd=config_file.parent, env={}, global_config=False)
    node = f"__snapshots__/ooda-config/{section}[{material.root.name}]"
    files: dict[str, str] = {}
    invoked = {item.key: name for name, item in _procedures(material)}
    for item in material.items:
        files[f"{node}/{snapshot_name(item.key)}.md"] = render_snapshot(item, material)
        if item.key in invoked:
            key = f"{item.key}@{invoked[item.key]}"
            files[f"{node}/{snapshot_name(key)}.md"] = render_snapshot(
                item, material, "", label=f"/{item.name}"
            )
    for name in invoked.values():
        procedure = config.procedure(name)
        for phase in PHASES:
            composed = compose_phase(procedure.phases()[phase])
            files[f"__snapshots__/ooda-config/{name}/{phase}.md"] = (
                composed + "\n" if composed else ""
            )
        limit = resolve_run_settings(config, name, require_ai=False, agent=False).max_iterations
        files[f"__snapshots__/ooda-config/{name}/assembled.raw.md"] = assemble_prompt(
            procedure, iteration=1, max_iterations=limit
        )
    return files


def init_material(section: str, directory: str, root: Path) -> int:
    """Write the files for the material at ``directory`` into ``root`` (see above)."""
    from pytest_ooda.agents import MATERIAL_SECTIONS, load_agent

    target = (root / directory).resolve() if not Path(directory).is_absolute() else Path(directory)
    try:
        material = MATERIAL_SECTIONS[section](target)
    except OodaError as error:
        raise UsageError(
            f"--{section}-plugin {directory}: {error.message}", hint=error.hint
        ) from None
    shown = os.path.relpath(material.root, root.resolve())
    lines = load_agent(section).init_lines
    files = planned_material_files(section, material, shown, lines)
    existing = [name for name in [*files, "rooda-config.yml"] if os.path.lexists(root / name)]
    if existing:
        raise UsageError(
            "ooda init writes nothing over existing files: "
            + ", ".join(existing)
            + " (remove or rename them, or run it in another directory with --dir)"
        )
    written: list[Path] = []
    try:
        _write(root, files, written)
        snapshots = snapshot_files(section, material, root / "ooda-config.yml")
        _write(root, snapshots, written)
    except FileExistsError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise UsageError(f"ooda init writes nothing over existing files: {exc.filename}") from None
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    for name in files:
        print(f"wrote {name}")
    print(f"wrote {len(snapshots)} prompt snapshots in __snapshots__/ooda-config/")
    print("\nnext:")
    print("  pytest\n      # checks, lints and snapshots every command, skill and subagent")
    print(
        f"  pytest -m live -k {SCENARIO} --ooda-record-mode=once --ooda-sandbox=bwrap\n"
        "      # runs each command and skill with the real agent, in a fresh home, and "
        "records what fired"
    )
    return EXIT_OK


def _write(root: Path, files: dict[str, str], written: list[Path]) -> None:
    """Each file created (``x``: here or not at all, even if another process races us)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)

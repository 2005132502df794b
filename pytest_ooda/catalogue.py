"""The catalogue of built-in procedures: the signalling criteria each procedure's prompt
states, and the generator of ``docs/procedures.md``.

Run ``python -m pytest_ooda.catalogue`` to regenerate the document and
``python -m pytest_ooda.catalogue --check`` to verify that it is up to date (exit 1 when
stale). ``SIGNALS`` is the single place that records which success, continue and failure
conditions belong to which kind of procedure; the conditions are quoted from the fragments,
and the test suite checks that every procedure's composed prompt really states them.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda._util import atomic_write_text
from pytest_ooda.config import PHASES, load_config_file

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILTIN_FILE = REPO_ROOT / "procedures" / "builtin.yml"
DOC_FILE = REPO_ROOT / "docs" / "procedures.md"
BUILTIN_PREFIX = "builtin:"
BLOCKED_FRAGMENT = "fragments/decide/check_if_blocked.md"
GENERATOR_COMMAND = "python -m pytest_ooda.catalogue"


@dataclass(frozen=True)
class Signals:
    """When a kind of procedure ends with SUCCESS, ends without a signal, or ends with FAILURE.

    Each condition is quoted verbatim (up to whitespace and ``**`` emphasis) from a fragment
    that every procedure of the kind composes.
    """

    label: str
    success: tuple[str, ...]
    cont: tuple[str, ...]
    failure: tuple[str, ...]


SIGNALS: Mapping[str, Signals] = {
    "agents-sync": Signals(
        label="Direct action",
        success=(
            "AGENTS.md matches the repository state — every drift item resolved and every "
            "documented command verified — and the change is committed, or no drift was found "
            "so there was nothing to commit",
        ),
        cont=(
            "drift is detected but not yet resolved, or a documented command failed verification",
        ),
        failure=(
            "the repository state cannot be determined (neither a build system nor a directory "
            "layout can be identified) or AGENTS.md is corrupted (unreadable, binary, or full of "
            "merge-conflict markers whose intent is unclear)",
        ),
    ),
    "build": Signals(
        label="Direct action",
        success=(
            "the closing query shows no ready work remaining in the work tracking system (all "
            "tasks completed: nothing open and unblocked, nothing in progress)",
        ),
        cont=("ready work remains, or the chosen item is still in progress",),
        failure=(
            "the work tracking state is corrupted or the tracker cannot be queried",
            "the task is blocked by missing dependencies",
            "tests are broken and you cannot fix them in this iteration",
        ),
    ),
    "publish-plan": Signals(
        label="Direct action",
        success=(
            "all tasks from the draft plan have been created in the work tracking system "
            "(every plan task has a matching work item)",
        ),
        cont=("the draft plan exists but some of its work items are not yet created",),
        failure=(
            "the draft plan is missing or malformed, or the work tracking system is unavailable",
        ),
    ),
    "audit": Signals(
        label="Audit",
        success=(
            "the audit report has been written and is complete — every file in scope "
            "reviewed, every finding with evidence and a recommended action, and its status "
            "line set to complete",
        ),
        cont=("report generation is still in progress or incomplete",),
        failure=(
            "the target files cannot be read (no specifications for a spec audit, no source "
            "for an implementation audit, no AGENTS.md for an AGENTS.md audit) or no quality "
            "criteria can be established for them",
        ),
    ),
    "gap": Signals(
        label="Audit",
        success=(
            "the gap report has been written and is complete — every requirement or behavior "
            "in scope classified, every gap with evidence, impact and direction",
        ),
        cont=("the gap analysis is still in progress or incomplete",),
        failure=(
            "the specifications or the implementation files cannot be read (either side is "
            "missing or unreadable)",
        ),
    ),
    "draft-plan": Signals(
        label="Planning",
        success=(
            "the draft plan file has been created and is complete — every requirement covered "
            "by a task or listed as out of scope with a reason, every task with priority, "
            "dependencies and acceptance criteria, and no TODO placeholders left",
        ),
        cont=("plan generation is still in progress or incomplete",),
        failure=(
            "the task input is missing, malformed, or its requirements are too unclear to "
            "break into tasks",
        ),
    ),
}

#: Which kind of signalling each built-in procedure follows.
PROCEDURE_KINDS: Mapping[str, str] = {
    "agents-sync": "agents-sync",
    "build": "build",
    "publish-plan": "publish-plan",
    "audit-spec": "audit",
    "audit-impl": "audit",
    "audit-agents": "audit",
    "audit-spec-to-impl": "gap",
    "audit-impl-to-spec": "gap",
    **{
        f"draft-plan-{area}-{change}": "draft-plan"
        for area in ("spec", "impl")
        for change in ("feat", "fix", "refactor", "chore")
    },
}

CATEGORIES = ("Direct action", "Audit", "Planning")


@dataclass(frozen=True)
class ProcedureEntry:
    """What the catalogue shows about one procedure."""

    name: str
    display: str
    summary: str
    description: str
    phases: Mapping[str, tuple[str, ...]]  # phase -> fragment paths relative to the root

    @property
    def signals(self) -> Signals:
        return SIGNALS[PROCEDURE_KINDS[self.name]]

    @property
    def checks_blocked(self) -> bool:
        return any(BLOCKED_FRAGMENT in paths for paths in self.phases.values())


def load_entries(builtin_file: Path = BUILTIN_FILE) -> list[ProcedureEntry]:
    """The procedures of ``builtin_file``, loaded through the real config loader."""
    config = load_config_file(builtin_file)
    entries = []
    for name, procedure in config.procedures.items():
        phases: dict[str, tuple[str, ...]] = {}
        for phase, actions in procedure.phases().items():
            phases[phase] = tuple(_root_relative(action.source_label()) for action in actions)
        entries.append(
            ProcedureEntry(
                name=name,
                display=procedure.display,
                summary=procedure.summary,
                description=procedure.description,
                phases=phases,
            )
        )
    return entries


def _root_relative(label: str) -> str:
    return label[len(BUILTIN_PREFIX) :] if label.startswith(BUILTIN_PREFIX) else label


def fragment_title(path: Path) -> str:
    """The text of a fragment's first Markdown heading, or its file stem without one."""
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"#+\s+(.*\S)", line)
        if match:
            return match.group(1)
    return path.stem


def _fragment_link(fragment: str) -> str:
    return f"[`{Path(fragment).stem}`](../{fragment})"


def _conditions(conditions: Sequence[str]) -> str:
    return "; or ".join(conditions) + "."


def _render_procedure(entry: ProcedureEntry, lines: list[str]) -> None:
    lines += [f"### {entry.name}", "", f"**{entry.display}** — {entry.summary}.", ""]
    lines += [f"{entry.description}.", "", f"Run it with `ooda run {entry.name}`.", ""]
    lines += ["| Phase | Fragments, in order |", "| --- | --- |"]
    for phase in PHASES:
        fragments = entry.phases.get(phase, ())
        cell = ", ".join(_fragment_link(f) for f in fragments) or "—"
        lines.append(f"| {phase.capitalize()} | {cell} |")
    signals = entry.signals
    failure = _conditions(signals.failure)
    if entry.checks_blocked:
        failure += " Also whenever the agent is truly blocked (`check_if_blocked`)."
    lines += [
        "",
        f"- **SUCCESS** when {_conditions(signals.success)}",
        f"- **No signal** (the loop runs another iteration) when {_conditions(signals.cont)}",
        f"- **FAILURE** when {failure}",
        "",
    ]


def render(entries: Sequence[ProcedureEntry], root: Path = REPO_ROOT) -> str:
    """The Markdown text of ``docs/procedures.md``."""
    lines = [
        "# Built-in procedures",
        "",
        f"<!-- Generated by `{GENERATOR_COMMAND}` from procedures/builtin.yml and the "
        "fragment files. Do not edit by hand. -->",
        "",
        f"pytest-ooda ships {len(entries)} procedures. Each one composes fragment files from "
        "`fragments/<phase>/` into a single prompt (see `ooda show <name>`) that the loop "
        "sends to the AI command once per iteration.",
        "",
        "Every iteration ends in one of three ways. The agent prints "
        "`<promise>SUCCESS</promise>` on its own line when the procedure's goal is reached, "
        "and the loop stops with status `success`. It prints no signal when useful work "
        "remains, and the loop starts another iteration with a fresh context. It prints "
        "`<promise>FAILURE</promise>`, followed by the reason and next steps, when it is "
        "blocked; the loop counts a failure and aborts after `failure_threshold` "
        "consecutive ones. The conditions below are the ones each procedure's prompt states.",
        "",
        "| Procedure | Name | Summary |",
        "| --- | --- | --- |",
    ]
    for entry in entries:
        lines.append(f"| [`{entry.name}`](#{entry.name}) | {entry.display} | {entry.summary} |")
    lines.append("")
    for category in CATEGORIES:
        members = [e for e in entries if e.signals.label == category]
        if members:
            lines += [f"## {category} procedures", ""]
            for entry in members:
                _render_procedure(entry, lines)
    lines += _render_fragment_index(entries, root)
    return "\n".join(lines).rstrip("\n") + "\n"


def _render_fragment_index(entries: Sequence[ProcedureEntry], root: Path) -> list[str]:
    users: dict[str, list[str]] = {}
    for entry in entries:
        for fragments in entry.phases.values():
            for fragment in fragments:
                users.setdefault(fragment, []).append(entry.name)
    lines = [
        "## Fragments",
        "",
        "The built-in fragments follow a few conventions, which your own fragments can copy "
        "so that they mix with them:",
        "",
        "- Each starts with a `## ` title and holds one job, so any two read well joined by a "
        "blank line and none depends on which fragment comes before or after it.",
        "- Observe and orient fragments only read, run checks and take notes; each says what "
        "it must not change. Only act fragments modify the repository, and each opens with a "
        "`**Writes:**` line saying what it writes.",
        "- A procedure's success, continue and failure conditions live in the fragment that "
        "is specific to that kind of procedure, as `**SUCCESS:**`, `**Continue:**` and "
        "`**FAILURE:**` list items. `emit_success`, `check_if_blocked` and `emit_failure` "
        "only describe the signal format, so they fit any procedure. A procedure states one "
        "SUCCESS and one Continue condition; it may name several reasons for FAILURE.",
        "- `emit_success` comes last in every act phase: the signal closes the output, with only "
        "a brief recap after it. The loop matches a tag anywhere in the output, so the prompt "
        "tells the agent never to quote a tag except as that closing line.",
        "- Work tracking goes through whatever AGENTS.md describes: beads (`bd`), GitHub "
        "issues (`gh`), or a task file in the repository.",
        "",
        "Every built-in fragment, the procedures that compose it, and its title. Use a "
        "fragment in your own procedures as `builtin:fragments/<phase>/<file>`.",
        "",
    ]
    for phase in PHASES:
        files = sorted((root / "fragments" / phase).glob("*.md"))
        lines += [f"### {phase.capitalize()} ({len(files)})", ""]
        lines += ["| Fragment | Title | Used by |", "| --- | --- | --- |"]
        for path in files:
            fragment = f"fragments/{phase}/{path.name}"
            used = ", ".join(f"`{name}`" for name in dict.fromkeys(users.get(fragment, [])))
            lines.append(
                f"| {_fragment_link(fragment)} | {fragment_title(path)} | "
                f"{used or 'no built-in procedure'} |"
            )
        lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate ``docs/procedures.md``, or with ``--check`` report whether it is stale."""
    parser = argparse.ArgumentParser(
        prog=GENERATOR_COMMAND, description="Generate the built-in procedure catalogue."
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the document is out of date"
    )
    parser.add_argument("--output", type=Path, default=DOC_FILE, help="document to write")
    args = parser.parse_args(argv)
    text = render(load_entries())
    output: Path = args.output
    if args.check:
        try:
            current = output.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"{output} is out of date; run `{GENERATOR_COMMAND}`", file=sys.stderr)
            return 1
        print(f"{output} is up to date")
        return 0
    atomic_write_text(output, text)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

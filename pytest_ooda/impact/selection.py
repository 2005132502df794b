"""Which scenarios a change touched: every scenario's surface now against its surface
at a git revision, and why each touched one is touched.

A scenario is **touched** when a prompt it can send differs from the revision's (any
variant: a fragment's rendered text, a template parameter, the iteration limit, its
context, the agent material its runs install, the layout), when its workspace's files
differ, when it is new since the revision, or when it cannot be composed on either
side (a mistake is not evidence that nothing changed). Everything else is untouched:
its recording still stands for it, so it replays at no cost.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.impact.gitref import RefTree, changed_files, worktree_blobs
from pytest_ooda.impact.surface import Surface, VariantSurface, project_surfaces

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.settings import SessionSettings

__all__ = ["Impact", "ScenarioImpact", "changed_since"]

#: How many changed workspace files a reason names before it counts the rest.
_NAMED_FILES = 5


@dataclass(frozen=True)
class ScenarioImpact:
    """One scenario: touched or not, and the reasons (empty when untouched)."""

    key: str
    procedure: str
    scenario: str
    reasons: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"

    @property
    def touched(self) -> bool:
        return bool(self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "file": self.key,
            "touched": self.touched,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class Impact:
    """The selection of a change since ``ref`` (the commit it named)."""

    ref: str
    commit: str
    scenarios: tuple[ScenarioImpact, ...]

    @property
    def touched(self) -> tuple[ScenarioImpact, ...]:
        return tuple(item for item in self.scenarios if item.touched)

    @property
    def untouched(self) -> tuple[ScenarioImpact, ...]:
        return tuple(item for item in self.scenarios if not item.touched)

    def of(self, key: str) -> ScenarioImpact | None:
        """The scenario whose file is ``key`` (relative to the project root)."""
        return next((item for item in self.scenarios if item.key == key), None)

    def summary(self) -> str:
        """``changed since main (3f2a1c0d): 2 of 3 scenario(s) touched``."""
        return (
            f"changed since {self.ref} ({self.commit[:8]}): {len(self.touched)} of "
            f"{len(self.scenarios)} scenario(s) touched"
        )

    def lines(self) -> list[str]:
        """The summary, then a line per scenario, touched first, with its reasons."""
        out = [self.summary()]
        width = max((len(item.label) for item in self.scenarios), default=0)
        for item in (*self.touched, *self.untouched):
            word = "touched  " if item.touched else "untouched"
            why = "; ".join(item.reasons)
            out.append(f"  {word} {item.label:<{width}}  {why}".rstrip())
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "commit": self.commit,
            "scenarios": [item.to_json() for item in self.scenarios],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Impact:
        items = []
        for item in data.get("scenarios") or ():
            procedure, _, scenario = str(item["label"]).partition("/")
            reasons = tuple(str(reason) for reason in item.get("reasons") or ())
            items.append(ScenarioImpact(str(item["file"]), procedure, scenario, reasons))
        return cls(str(data["ref"]), str(data["commit"]), tuple(items))


def changed_since(session: SessionSettings, ref: str) -> Impact:
    """The scenarios of the project at ``session.root`` (found and planned as the
    session would) that a change since git revision ``ref`` touched. The revision is
    read from git's objects into a temporary directory; the working tree is not
    touched. A ``UsageError`` when ``ref`` names no commit."""
    tree = RefTree.read(session.root, ref)
    now = project_surfaces(session)
    with tempfile.TemporaryDirectory(prefix="ooda-changed-") as scratch:
        then_root = Path(scratch).resolve()
        tree.write_to(then_root)
        then = project_surfaces(_rooted(session, then_root))
    items = []
    for key, surface in sorted(now.items()):
        before = then.get(key)
        reasons = _reasons(surface, before)
        if surface.workspace is not None:
            reasons += _workspace(session.root, tree, surface.workspace)
        items.append(ScenarioImpact(key, surface.procedure, surface.scenario, tuple(reasons)))
    return Impact(ref, tree.commit, tuple(items))


def _rooted(session: SessionSettings, root: Path) -> SessionSettings:
    """The session's settings with its root, and the paths under it, moved to ``root``."""
    from pytest_ooda.settings import CONFIG, SCENARIO_DIR

    def moved(path: Path | None) -> Path | None:
        if path is None:
            return None
        try:
            return root / path.resolve().relative_to(session.root.resolve())
        except ValueError:
            return path

    return replace(session, root=root).but(
        config=moved(session[CONFIG]), scenario_dir=moved(session[SCENARIO_DIR])
    )


def _reasons(now: Surface, then: Surface | None) -> list[str]:
    if then is None:
        return ["new since the revision"]
    if now.error is not None:
        return [f"does not compose: {now.error}"]
    if then.error is not None:
        return [f"did not compose at the revision: {then.error}"]
    before = {item.variant: item for item in then.variants}
    reasons = []
    for item in now.variants:
        old = before.get(item.variant)
        prefix = f"variant {item.variant}: " if item.variant is not None else ""
        if old is None:
            reasons.append(f"{prefix}new since the revision")
        elif old.prompt_sha256 != item.prompt_sha256:
            reasons.extend(prefix + why for why in _prompt_reasons(old, item))
    if now.workspace != then.workspace:
        reasons.append(f"workspace: {then.workspace or 'none'} -> {now.workspace or 'none'}")
    return reasons


def _prompt_reasons(old: VariantSurface, new: VariantSurface) -> list[str]:
    """Why two prompts of a variant differ: the fragments (and material files) whose
    rendered text differs, then the loop's settings that show in the prompt."""
    before = {(item.phase, item.index): item for item in old.fragments}
    after = {(item.phase, item.index): item for item in new.fragments}
    reasons = []
    for place in dict.fromkeys([*after, *before]):
        was, now = before.get(place), after.get(place)
        where = f"{place[0]}[{place[1]}]"
        if was is None and now is not None:
            reasons.append(f"{where} {now.source} (added)")
        elif now is None and was is not None:
            reasons.append(f"{where} {was.source} (removed)")
        elif was is not None and now is not None and was != now:
            source = now.source if now.source == was.source else f"{was.source} -> {now.source}"
            reasons.append(f"{where} {source}")
    if old.limit != new.limit:
        reasons.append(f"iteration limit {_limit(old.limit)} -> {_limit(new.limit)}")
    if old.context != new.context:
        reasons.append("context")
    if old.prompt_format != new.prompt_format:
        reasons.append(f"prompt layout {old.prompt_format} -> {new.prompt_format}")
    return reasons or ["the prompt's header (the procedure's display name or layout)"]


def _limit(value: int | None) -> str:
    return "unlimited" if value is None else str(value)


def _workspace(root: Path, tree: RefTree, workspace: str) -> list[str]:
    """``workspace <dir>: a.py, b.txt`` when the workspace's files differ from the
    revision's, as git sees the working tree."""
    before = tree.blobs_under(workspace)
    files: Sequence[str] = changed_files(before, worktree_blobs(root, workspace))
    if not files:
        return []
    named = ", ".join(files[:_NAMED_FILES])
    more = f" and {len(files) - _NAMED_FILES} more" if len(files) > _NAMED_FILES else ""
    return [f"workspace {workspace}/: {named}{more}"]

"""Fragment coverage: which fragment files a session composed, and which template arms.

:class:`FragmentCoverage` hears every composition (``compose.add_use_observer``) and
knows, from the config files it is given, which procedures use each fragment file. Its
report lists, per fragment file (built-in and custom), the procedures using it, how often
it was composed and, for templates, which ``if``/``else``/``range``/``with`` arms were
rendered; never-composed fragments come first. Its data merges across processes
(``to_data``/``merge_data``). The pytest side (``--ooda-fragment-coverage``) is
``pytest_ooda.plugin.fragment_coverage``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from pytest_ooda.compose import FragmentUse
    from pytest_ooda.config import Config

__all__ = ["FragmentCoverage", "FragmentRecord"]


BranchKey = tuple[int, str, str]


@dataclass
class FragmentRecord:
    """What the session learnt about one fragment file."""

    file: str
    users: set[str] = field(default_factory=set)
    composed_by: set[str] = field(default_factory=set)
    compositions: int = 0
    templated: bool = False
    taken: set[BranchKey] = field(default_factory=set)
    rendered_lines: set[int] = field(default_factory=set)

    def to_data(self) -> dict[str, Any]:
        return {
            "users": sorted(self.users),
            "composed_by": sorted(self.composed_by),
            "compositions": self.compositions,
            "templated": self.templated,
            "taken": sorted([list(b) for b in self.taken]),
            "rendered_lines": sorted(self.rendered_lines),
        }

    def merge(self, data: Mapping[str, Any]) -> None:
        self.users.update(data.get("users", ()))
        self.composed_by.update(data.get("composed_by", ()))
        self.compositions += int(data.get("compositions", 0))
        self.templated = self.templated or bool(data.get("templated", False))
        self.taken.update((int(b[0]), str(b[1]), str(b[2])) for b in data.get("taken", ()))
        self.rendered_lines.update(int(n) for n in data.get("rendered_lines", ()))


def _branch_key(branch: Any) -> BranchKey:
    return (int(branch.line), str(branch.construct), str(branch.arm))


class FragmentCoverage:
    """Collects fragment uses (static, from configs) and compositions (dynamic)."""

    def __init__(self) -> None:
        self.records: dict[str, FragmentRecord] = {}
        self._keys: dict[str, str] = {}
        self._remove: Callable[[], None] | None = None

    def _record(self, file: Path | str) -> FragmentRecord:
        key = self._keys.get(str(file))
        if key is None:
            key = self._keys[str(file)] = str(Path(file).resolve())
        record = self.records.get(key)
        if record is None:
            record = self.records[key] = FragmentRecord(key)
        return record

    def start(self) -> None:
        """Begin observing compositions (idempotent)."""
        if self._remove is None:
            from pytest_ooda.compose import add_use_observer

            self._remove = add_use_observer(self.observe)

    def stop(self) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None

    def observe(self, use: FragmentUse) -> None:
        """Record one composition (the ``compose`` observer)."""
        if use.file is None:
            return
        record = self._record(use.file)
        record.compositions += 1
        if use.procedure is not None:
            record.composed_by.add(use.procedure)
        if use.action.parameters:
            record.templated = True
        if use.trace is not None:
            record.templated = True
            record.taken.update(_branch_key(b) for b in use.trace.taken)
            record.rendered_lines.update(use.trace.lines)

    def register_config(self, config: Config, *, files: Iterable[Path] | None = None) -> None:
        """Note which procedures use which fragment files.

        Only procedures declared in ``files`` (default: every procedure) are registered, so
        a workspace config does not drag in the built-ins it did not touch.
        """
        wanted = {Path(f).resolve() for f in files} if files is not None else None
        for procedure in config.procedures.values():
            declared = procedure.location.file
            if wanted is not None and (declared is None or Path(declared).resolve() not in wanted):
                continue
            for actions in procedure.phases().values():
                for action in actions:
                    if action.file is None:
                        continue
                    record = self._record(action.file)
                    record.users.add(procedure.name)
                    if action.parameters:
                        record.templated = True

    def register_config_file(self, path: Path) -> bool:
        """Register the procedures declared in the config file ``path``; False if it fails."""
        from pytest_ooda.config import load_builtin_config, load_config
        from pytest_ooda.fragments import (
            BUILTIN_PREFIX,
            builtin_procedures_file,
            builtin_root,
            list_builtin_fragments,
        )

        is_builtin = path.resolve() == builtin_procedures_file().resolve()
        try:
            if is_builtin:
                config = load_builtin_config()
            else:
                config = load_config(path, cwd=path.parent, env={}, global_config=False)
        except (OodaError, OSError):
            return False
        self.register_config(config, files=[path])
        if is_builtin:
            # The built-in library, including fragments no built-in procedure uses.
            for name in list_builtin_fragments():
                self._record(builtin_root() / name.removeprefix(BUILTIN_PREFIX))
        return True

    def to_data(self) -> dict[str, Any]:
        """A JSON-able copy (what an xdist worker sends to the controller)."""
        return {key: record.to_data() for key, record in self.records.items()}

    def merge_data(self, data: Mapping[str, Any]) -> None:
        for key, value in data.items():
            self._record(key).merge(value)

    def report_lines(self, *, rootdir: Path | None = None) -> list[str]:
        """The terminal report: never-composed fragments first, then the composed ones."""
        from pytest_ooda.fragments import builtin_root

        root = builtin_root().resolve()
        base = rootdir if rootdir is not None else Path.cwd()

        def label(record: FragmentRecord) -> str:
            path = Path(record.file)
            if path.is_relative_to(root):
                return "builtin:" + path.relative_to(root).as_posix()
            rel = os.path.relpath(path, base)
            return record.file if rel.startswith("..") else Path(rel).as_posix()

        ordered = sorted(self.records.values(), key=label)
        idle = [r for r in ordered if r.compositions == 0]
        busy = [r for r in ordered if r.compositions > 0]
        total = len(ordered)
        lines = [f"{len(busy)} of {total} fragment files composed during the session"]
        if idle:
            lines.append(f"never composed ({len(idle)}):")
            lines.extend(f"  {label(r)}  used by: {_names(r.users)}" for r in idle)
        if busy:
            lines.append(f"composed ({len(busy)}):")
        for record in busy:
            users = _names(record.users | record.composed_by)
            head = f"  {label(record)}  used by: {users}  composed {record.compositions}x"
            missed = _missed_branches(record)
            if missed is None:
                lines.append(head)
                continue
            possible, not_rendered = missed
            rendered = possible - len(not_rendered)
            lines.append(f"{head}  branches {rendered}/{possible} rendered")
            lines.extend(
                f"      not rendered: line {line} {construct} {arm!r} arm"
                for line, construct, arm in not_rendered
            )
        return lines


def _names(names: set[str]) -> str:
    return ", ".join(sorted(names)) if names else "(no procedure)"


def _missed_branches(record: FragmentRecord) -> tuple[int, list[BranchKey]] | None:
    """``(branch points, arms never rendered)`` for a templated fragment, else ``None``."""
    if not record.templated:
        return None
    try:
        from pytest_ooda import gotemplate

        text = Path(record.file).read_text(encoding="utf-8", errors="replace")
        static = {_branch_key(b) for b in gotemplate.branches(text)}
    except (OSError, OodaError):
        return None
    if not static:
        return None
    return len(static), sorted(static - record.taken)

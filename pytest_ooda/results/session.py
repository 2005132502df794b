"""A session's stamp: what every record of one session says about the session — its
name (its start time and a random part), the series of runs it measures, the commit
of the repository it ran in, its budget (``--ooda-budget``) and, for an ``ooda
ablate`` session, how its arms are judged."""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["SessionStamp", "repository_state", "session_stamp"]


def session_stamp(epoch: float | None = None, *, unique: str | None = None) -> str:
    """A session's name in the log directory and its records: its UTC start time,
    sortable, then ``unique`` (default: six random hex digits), so two sessions started
    in the same second are two sessions (``20250611T093015Z-3fa9c1``)."""
    started = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(epoch))
    return f"{started}-{secrets.token_hex(3) if unique is None else unique}"


def repository_state(root: Path) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout at ``root``: ``HEAD``'s sha and whether
    tracked files differ from it (a fragment edited but not committed). ``(None,
    None)`` outside a repository or without git."""
    git = shutil.which("git")
    if git is None:
        return None, None
    try:
        head = subprocess.run(
            [git, "rev-parse", "--verify", "-q", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            [git, "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return head.stdout.strip() or None, dirty


@dataclass(frozen=True)
class SessionStamp:
    """What every record of one session says about the session: its name (the log
    file's stem), the series of runs it measures (its own name, or under
    ``--ooda-resume`` the series it continues) and the repository's commit."""

    session: str
    series: str
    git_commit: str | None = None
    git_dirty: bool | None = None
    #: The session's caps, ``{"usd": …, "tokens": …}`` (:class:`.budget.Budget`):
    #: what runs it did not make were left out for (``None``: no budget).
    budget: Mapping[str, Any] | None = None
    #: An ``ooda ablate`` session's ``{"margin": …, "alpha": …, "rounds": …}``: how
    #: its arms were judged, so a report judges them alike.
    ablation: Mapping[str, Any] | None = None

    @classmethod
    def start(
        cls, root: Path | None, *, started: float | None = None, series: str | None = None
    ) -> SessionStamp:
        """The stamp of a session starting now (or at ``started``) in ``root``."""
        session = session_stamp(started)
        commit, dirty = repository_state(root) if root is not None else (None, None)
        return cls(session, series or session, commit, dirty)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "series": self.series,
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
            "budget": dict(self.budget) if self.budget is not None else None,
            "ablation": dict(self.ablation) if self.ablation is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionStamp:
        budget, ablation = data.get("budget"), data.get("ablation")
        return cls(
            data["session"],
            data["series"],
            data["git_commit"],
            data["git_dirty"],
            MappingProxyType(dict(budget)) if budget is not None else None,
            MappingProxyType(dict(ablation)) if ablation is not None else None,
        )

"""Which agent made the runs, in words: a fingerprint in one line (``claude 2.1.197
(Claude Code) · model claude-opus-4-8 · settings 3f1c09a2b7d4 · env * · loaded: skills
greet (project); hooks PreToolUse:Write (user)``), the lines the text report and the
Markdown summary show per fingerprint with the scenarios it made, a note where a
scenario's runs were made by different agents, and the view the HTML pages show with
each run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pytest_ooda.stats import drift

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.facts import Fingerprint
    from pytest_ooda.stats import ScenarioStats

__all__ = ["fingerprint_lines", "fingerprint_text", "fingerprint_view"]


def _loaded(fingerprint: Fingerprint) -> str:
    kinds = [
        f"{kind} " + ", ".join(f"{item.name} ({item.scope})" for item in items)
        for kind, items in fingerprint.loaded.items()
        if items
    ]
    return "; ".join(kinds) if kinds else "nothing"


def fingerprint_text(fingerprint: Fingerprint) -> str:
    """The fingerprint in one line (see the module docstring)."""
    parts = [f"{fingerprint.agent} {fingerprint.version or '(version unknown)'}"]
    if fingerprint.model:
        parts.append(f"model {fingerprint.model}")
    if fingerprint.settings:
        parts.append(f"settings {fingerprint.settings[:12]}")
    parts.append("env " + (", ".join(fingerprint.env) or "none"))
    parts.append(f"loaded: {_loaded(fingerprint)}")
    return " · ".join(parts)


def _key(fingerprint: Fingerprint) -> str:
    return json.dumps(fingerprint.as_dict(), sort_keys=True)


def fingerprint_lines(stats: Sequence[ScenarioStats]) -> list[str]:
    """One line per fingerprint the runs were made with, naming its scenarios, and a
    note for each scenario whose runs do not share one (what differs); nothing for
    runs recorded before fingerprints."""
    made: dict[str, tuple[Fingerprint, list[str]]] = {}
    notes = []
    for item in stats:
        prints = [record.fingerprint for record in item.records if record.fingerprint]
        for fingerprint in prints:
            labels = made.setdefault(_key(fingerprint), (fingerprint, []))[1]
            if item.label not in labels:
                labels.append(item.label)
        differ = drift(prints[:1], prints, names=("first run", "others"))
        if differ:
            notes.append(
                f"note: {item.label}: its runs were not all made by the same agent: "
                + "; ".join(each.describe(("first run", "others")) for each in differ)
            )
    lines = [
        f"agent of {', '.join(labels)}: {fingerprint_text(fingerprint)}"
        for fingerprint, labels in made.values()
    ]
    return lines + notes


def fingerprint_view(fingerprint: Fingerprint | None) -> dict[str, Any] | None:
    """What a run's page shows of its fingerprint (``None``: the record has none)."""
    if fingerprint is None:
        return None
    return {
        "agent": fingerprint.agent,
        "version": fingerprint.version or "unknown",
        "model": fingerprint.model or "unknown",
        "settings": (fingerprint.settings or "")[:12],
        "env": ", ".join(fingerprint.env) or "none",
        "loaded": [
            (kind, [(item.name, item.scope, item.sha256[:12]) for item in items])
            for kind, items in fingerprint.loaded.items()
            if items
        ],
    }

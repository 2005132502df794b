"""``--ooda-changed=REF``: run live only what a change since a git revision touched.
Registered (as ``ooda-changed``) when the option is given.

The selection is :func:`pytest_ooda.impact.changed_since`'s — every scenario's prompts
and workspace composed here and at ``REF`` (read from git's objects; the working tree
is not touched) — computed once, by the process that is not an xdist worker, and handed
to the workers. Then, before ``-m`` selects: an untouched scenario's live items are
deselected, and its replay items are marked ``live`` so that ``-m live`` replays it
instead (at no cost); a touched scenario's runs record why (the record's ``changed``).
The selection is printed in the header.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.plugin import SESSION
from pytest_ooda.settings import CHANGED

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.impact import Impact
    from pytest_ooda.live import RunPlan

#: The ``workerinput`` key carrying the selection to xdist workers.
WORKER_CHANGED = "ooda_changed"


class ChangedSelection:
    """The session's selection, and what it does to the items and the runs."""

    def __init__(self, config: pytest.Config) -> None:
        from pytest_ooda.errors import OodaError
        from pytest_ooda.impact import Impact, changed_since

        self.config = config
        settings = config.stash[SESSION]
        self.root: Path = settings.root
        given = getattr(config, "workerinput", {}).get(WORKER_CHANGED)
        if given is not None:
            self.impact: Impact = Impact.from_json(given)
            return
        ref = settings[CHANGED]
        assert ref is not None, "registered only when --ooda-changed is given"
        try:
            self.impact = changed_since(settings, ref)
        except OodaError as error:
            raise pytest.UsageError(f"{settings.label('changed')}: {error}") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_CHANGED] = self.impact.to_json()

    def pytest_report_header(self) -> list[str]:
        first, *rest = self.impact.lines()
        return [f"ooda: {first}", *rest]

    def touched(self, scenario_path: Path) -> bool:
        """Whether the scenario in ``scenario_path`` is touched (one the selection does
        not know, a new file, is)."""
        try:
            key = scenario_path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return True
        found = self.impact.of(key)
        return found is None or found.touched

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        # tryfirst: before -m selects, so an untouched scenario's replay is `live` too.
        keep, dropped = [], []
        for item in items:
            path = getattr(item, "scenario_path", None)
            if path is None:
                keep.append(item)
                continue
            live = item.get_closest_marker("live") is not None
            touched = self.touched(path)
            if live and not touched:
                dropped.append(item)
                continue
            if not live and not touched:
                item.add_marker("live")
            keep.append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def before(self, plan: RunPlan) -> RunPlan:
        """``plan`` with why the selection runs it live (the record's ``changed``)."""
        key = plan.scenario.path
        found = None
        if key is not None:
            try:
                relative = key.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                relative = None
            found = self.impact.of(relative) if relative is not None else None
        why = {
            "ref": self.impact.ref,
            "commit": self.impact.commit,
            "reasons": list(found.reasons) if found is not None else ["new scenario"],
            "untouched": len(self.impact.untouched),
        }
        return replace(plan, changed=MappingProxyType(why))

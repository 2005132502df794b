"""An upgrade canary (``ooda canary``, docs/agent-replay.md): a scenario's cassette
replayed through the pinned agent CLI and through a new version of it, offline, and what
the new one sends otherwise.

Each replay is an agent replay as the plugin runs one (:func:`run_live` of a plan with
the API proxy replaying the cassette), with two differences: the proxy answers a
request the cassette does not hold with the nearest recorded exchange instead of
stopping (:class:`pytest_ooda.apireplay.CanaryProxy`), so a new version that rewords
its system prompt still gets the recorded model answers and shows whether it does the
job with them; and it keeps every request, so the two agents' requests can be compared
(:func:`pytest_ooda.apireplay.what_changed`). The new version is **safe to unpin** for
a scenario when its replay meets the scenario's expectations (the pinned one's must
too: a cassette the pinned agent no longer replays says nothing of the new one).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from pytest_ooda.apireplay import Change, Sent
    from pytest_ooda.config import Config
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.scenario import Scenario

__all__ = ["AgentReplay", "CanaryResult", "canary_scenario", "new_command"]


@dataclass(frozen=True)
class AgentReplay:
    """One agent's replay of a cassette: its command line and version, whether the run
    met the scenario's expectations (and why not), and what it sent."""

    command: str
    version: str | None
    passed: bool
    why: str | None
    sent: tuple[Sent, ...]

    @property
    def as_recorded(self) -> int:
        """How many of its requests the cassette held as sent."""
        return sum(sent.as_recorded for sent in self.sent)

    def describe(self) -> str:
        version = f" ({self.version})" if self.version else ""
        held = f"{self.as_recorded} of {len(self.sent)} request(s) as recorded"
        verdict = "passes" if self.passed else f"fails: {self.why}"
        return f"{self.command}{version}: {held}; {verdict}"


@dataclass(frozen=True)
class CanaryResult:
    """One scenario's cassette through both agents."""

    label: str
    cassette: Path
    pinned: AgentReplay
    new: AgentReplay
    changes: tuple[Change, ...]

    @property
    def safe(self) -> bool:
        """Whether the new version may replace the pinned one for this scenario."""
        return self.pinned.passed and self.new.passed

    def verdict(self) -> str:
        if not self.pinned.passed:
            return (
                "inconclusive: the cassette does not replay with the pinned agent either; "
                "re-record it, then ask again"
            )
        if not self.new.passed:
            return f"NOT safe to unpin: {self.new.why}"
        if self.changes:
            return "safe to unpin (what it sends changed: re-record the cassette with it)"
        return "safe to unpin"


def new_command(new: str, pinned: Sequence[str] | None) -> str:
    """The new agent's command line: ``new`` as written, or — when it is a program alone
    — the pinned command line with its program replaced (its flags kept)."""
    words = shlex.split(new)
    if len(words) == 1 and pinned:
        return shlex.join([words[0], *pinned[1:]])
    return new


def _replay(plan: RunPlan) -> AgentReplay:
    from pytest_ooda.agents import agent_for, agent_version
    from pytest_ooda.live.run import run_live

    argv = plan.settings.ai_cmd or ()
    done = run_live(plan)
    api = done.api
    why: str | None = None
    if api is not None and api.divergence is not None:
        why = api.divergence.splitlines()[0]
    elif done.outcome == "error":
        why = done.error_reason
    elif done.problems:
        why = "; ".join(problem.strip().lstrip("- ") for problem in done.problems)
    elif done.outcome != "success":
        why = f"the run ended {done.result.status}"
    return AgentReplay(
        command=shlex.join(argv),
        version=agent_version(agent_for(argv), argv),
        passed=why is None,
        why=why,
        sent=api.sent if api is not None else (),
    )


def canary_scenario(
    root: Path,
    scenario: Scenario,
    cassette: Path,
    *,
    config: Config,
    new: str,
    settings: Mapping[str, Any] | None = None,
) -> CanaryResult:
    """``scenario``'s ``cassette`` replayed through the agent ``config`` names (the
    pinned one) and through ``new`` (:func:`new_command`), with the session ``settings``
    (typed values by row name, as the command line gives them; ``root``: the project);
    nothing is written."""
    from pytest_ooda.apireplay import what_changed
    from pytest_ooda.live.plan import ApiPlan, plan_run
    from pytest_ooda.settings import session_settings

    given = {**(settings or {}), "record_mode": "none"}
    api = ApiPlan("replay", cassette, canary=True)
    session = session_settings(root, front="ooda", **given)
    pinned = plan_run(session, scenario.procedure, scenario, config=config, read_only=True, api=api)
    command = new_command(new, pinned.settings.ai_cmd)
    given.pop("ai_cmd_alias", None)
    session = session_settings(root, front="ooda", **{**given, "ai_cmd": command})
    candidate = plan_run(
        session, scenario.procedure, scenario, config=config, read_only=True, api=api
    )
    before, after = _replay(pinned), _replay(candidate)
    return CanaryResult(
        label=pinned.label,
        cassette=cassette,
        pinned=before,
        new=after,
        changes=what_changed(before.sent, after.sent),
    )

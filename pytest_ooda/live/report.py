"""What a live run reports beside its outcome: what a person must hear about a run that
did not fail it (an agent's denied tools, what the stopped sandbox undid), the failure
report (laid out by the scenario's
:func:`pytest_ooda.scenario.failure_text`), and the record's ``judge`` field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.errors import OodaWarning
    from pytest_ooda.judge import Grading
    from pytest_ooda.live.plan import RunPlan
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.redact import Redactor
    from pytest_ooda.sandbox import SandboxRun

__all__ = ["agent_warnings", "failure_report", "judge_field", "sandbox_warnings"]


def agent_warnings(result: LoopResult) -> list[str]:
    """What a person must hear about an agent's run that did not fail it: tools it was
    denied, a budget it could not be held to."""
    from pytest_ooda.loop import unenforced_warning

    found = [text for record in result.records if (text := record.denial_warning())]
    unenforced = unenforced_warning(result)
    if unenforced is not None:
        found.append(unenforced)
    return found


def sandbox_warnings(run: SandboxRun | None, plan: RunPlan, file: Path | None) -> list[OodaWarning]:
    """One warning per thing the stopped sandbox undid in the workspace (a set-user-ID
    bit cleared, a device node removed: ``SandboxRun.notes``); without a sandbox, one
    when the run installed agent material and the agent also loaded the user's own."""
    from pytest_ooda.errors import AgentWarning, SandboxWarning

    where = str(file) if file is not None else None
    notes = getattr(run, "notes", ()) if run is not None else ()
    found: list[OodaWarning] = [
        SandboxWarning(
            f"scenario {plan.label}: the workspace was scrubbed after the run: {note}",
            file=where,
        )
        for note in notes
    ]
    own = _own_material(plan) if run is None and plan.material else ()
    if own:
        found.append(
            AgentWarning(
                f"scenario {plan.label}: ran without a sandbox, so the agent also loaded your "
                f"own {', '.join(own)}: any of them can fire instead of the material under "
                "test (--ooda-sandbox=bwrap runs it in a fresh home)",
                file=where,
            )
        )
    return found


def _own_material(plan: RunPlan) -> tuple[str, ...]:
    """The user's own directories of commands, skills, subagents and plugins the plan's
    agent reads (those with anything in them), as ``~/.claude/skills``."""
    import os
    from pathlib import Path

    from pytest_ooda.agents import agent_for

    if plan.settings.ai_cmd is None:
        return ()
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    kinds = ("commands", "skills", "agents", "plugins")
    sources = agent_for(plan.settings.ai_cmd).config_sources(home, Path.cwd())
    return tuple(
        str(source.path).replace(str(home), "~", 1)
        for source in sources
        if source.scope == "user"
        and source.what in kinds
        and source.path.is_dir()
        and any(source.path.iterdir())
    )


def judge_field(plan: RunPlan, grading: Grading, redactor: Redactor) -> dict[str, Any]:
    """The record's ``judge``: the grading, the rubric it answered and who judged
    (redacted), so a report can show what was asked beside the votes."""
    out = grading.as_dict()
    expect = plan.scenario.expect
    spec = expect.judge if expect is not None else None
    if spec is not None:
        backend = spec.backend
        if backend.ai_api is not None:
            who = f"{backend.ai_api.provider}:{backend.ai_api.model}"
        else:
            who = backend.ai_cmd or f"alias {backend.ai_cmd_alias}"
        out["rubric"] = redactor(spec.rubric)
        out["rubric_file"] = spec.rubric_file
        out["judge"] = redactor(who)
    return out


def failure_report(
    plan: RunPlan,
    result: LoopResult,
    problems: tuple[str, ...],
    judge_error: str | None,
    not_recorded: str | None,
    redactor: Redactor,
) -> str:
    """The failure report (empty when every expectation held), redacted: live output
    lands in CI logs."""
    from pytest_ooda.scenario import failure_text

    if not problems and judge_error is None:
        return ""
    shown = problems or (f"{judge_error} (an error of the judge, not of the run)",)
    # Each value redacted before it is laid out (and the whole again, below).
    report = failure_text(
        plan.scenario, result, shown, root=plan.root, mode="live", redact=redactor
    )
    if not_recorded:
        report += f"\n\n  not recorded: {not_recorded}"
    return redactor(report)

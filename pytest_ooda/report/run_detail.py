"""One run as the HTML pages show it, in the static report and in ``ooda view`` alike:
its title (``scenario · variant · run k of n``), its verdict and why, each iteration's
outcome as the loop decided it, the transcript (the agent's output, tool calls with
input and result, diffs), the verification commands, the protected paths the agent
changed, the judge section built for reading — the rubric, a table of votes,
agreement, the judge's tokens and cost, and whether the votes came from the cache — and
the agent's fingerprint (its version, model, settings, environment and what it loaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.report.render_fingerprint import fingerprint_view
from pytest_ooda.report.render_text import money, seconds
from pytest_ooda.results import expected_status, shown

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda.results import IterationEntry, RunRecord

__all__ = [
    "diff_lines",
    "iteration_story",
    "judge_view",
    "reason",
    "run_title",
    "run_view",
    "transcript_size",
]


def reason(record: RunRecord) -> str:
    """Why a run is not a success, in one line (empty for a success)."""
    if record.outcome == "success":
        return ""
    if record.outcome == "error":
        why = record.error_reason or record.error or "the run could not be measured"
        return f"⚠ infrastructure error: {why}"
    if record.problems:
        more = len(record.problems) - 1
        return record.problems[0] + (f" (+{more} more)" if more else "")
    return record.error or f"ended {record.status}"


def run_title(record: RunRecord) -> str:
    """``scenario · variant · run k of n`` (the variant only when there is one)."""
    parts = [f"{record.head.procedure}/{record.head.scenario}"]
    if record.head.variant:
        parts.append(record.head.variant)
    parts.append(f"run {record.head.run} of {record.head.runs}")
    return " · ".join(parts)


def iteration_story(record: RunRecord, entry: IterationEntry) -> tuple[str, str]:
    """What the loop made of ``entry``, in words, and its kind (``ok``, ``bad``,
    ``neutral``): a failed iteration says how it failed, and the last iteration of a run
    says how the loop ended after it."""
    last = bool(record.iterations) and entry.number == record.iterations[-1].number
    if entry.infra_error:
        tries = f" after {entry.retries + 1} tries" if entry.retries else ""
        return "bad", f"infrastructure error{tries}: {entry.infra_error}"
    if entry.outcome == "failure":
        how = entry.reason or entry.error or "the iteration failed"
        if entry.timed_out:
            how = f"timed out ({how})" if entry.reason else "timed out"
        elif entry.signal == "FAILURE" and not entry.reason:
            how = "the agent signalled FAILURE"
        text = f"failed: {how}; it counts toward the abort threshold"
        if last and record.status == "aborted":
            text += "; the loop aborted"
        return "bad", text
    if entry.outcome == "success":
        text = "SUCCESS signalled: the loop stopped"
        if last and record.outcome == "failure" and record.problems:
            return "bad", f"{text}, but the run missed {_missed(record)}"
        return "ok", text
    text = "no signal: the loop went on"
    if last:
        if record.status == "max-iters":
            text = "no signal, and the iteration limit was reached (max-iters)"
        elif record.status == "interrupted":
            text = "interrupted during or after this iteration"
        elif record.status == "aborted":
            text = f"the loop aborted: {record.error or 'the failure threshold was reached'}"
        expected = expected_status((record.head.expect or {}).get("status"))
        if record.outcome == "failure" and record.status != expected:
            return "bad", f"{text} (the scenario expects {expected})"
        if record.outcome == "failure":
            return "bad", f"{text}; the run missed {_missed(record)}"
    return "neutral", text


def _missed(record: RunRecord) -> str:
    if not record.problems:
        return "its expectations"
    more = len(record.problems) - 1
    return f"an expectation: {record.problems[0]}" + (f" (+{more} more)" if more else "")


def diff_lines(text: str) -> list[tuple[str, str]]:
    """``(css class, line)`` pairs of a unified diff."""
    out = []
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = ""
        out.append((kind, line))
    return out


def transcript_size(record: RunRecord) -> int:
    """Characters of a run's transcript texts (what a page spends showing it)."""
    transcript = record.transcript or {}
    size = 0
    for item in transcript.get("iterations") or ():
        if isinstance(item, dict):
            size += len(str(item.get("output") or ""))
            size += sum(len(str(text)) for text in (item.get("diffs") or {}).values())
            for call in item.get("tool_calls") or ():
                if isinstance(call, dict):
                    size += len(str(call.get("input") or "")) + len(str(call.get("result") or ""))
    return size


def _transcript_iterations(record: RunRecord) -> dict[int, dict[str, Any]]:
    transcript = record.transcript or {}
    out: dict[int, dict[str, Any]] = {}
    for item in transcript.get("iterations") or ():
        if isinstance(item, dict) and isinstance(item.get("number"), int):
            found = item.get("diffs")
            diffs: dict[str, Any] = found if isinstance(found, dict) else {}
            out[item["number"]] = {
                "output": item.get("output") if isinstance(item.get("output"), str) else None,
                "tool_calls": [c for c in item.get("tool_calls") or () if isinstance(c, dict)],
                "denials": [c for c in item.get("permission_denials") or () if isinstance(c, dict)],
                "diffs": [(path, diff_lines(str(text))) for path, text in diffs.items()],
            }
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _tokens(value: Any) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:,.0f}"


def judge_view(judge: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The record's ``judge`` field for reading: the verdict, the rule, the rubric, a
    row per vote, agreement, tokens and cost, and where the votes came from."""
    if judge is None:
        return None
    votes = [vote for vote in judge.get("votes") or () if isinstance(vote, dict)]
    cached = sum(1 for vote in votes if vote.get("cached"))
    if judge.get("replayed"):
        source = "replayed: the verdicts recorded with the scenario, no judge asked"
    elif votes and cached == len(votes):
        source = f"from the cache: all {len(votes)} vote(s) answered earlier, nothing paid again"
    elif cached:
        source = f"{cached} of {len(votes)} vote(s) from the cache, the others asked now"
    else:
        source = "asked now: no vote came from the cache"
    passed = judge.get("passed")
    verdict = "error" if judge.get("error") else "pass" if passed else "fail"
    agreement = _number(judge.get("agreement"))
    key = judge.get("key")
    return {
        "verdict": verdict,
        "passed": passed,
        "error": judge.get("error"),
        "rule": str(judge.get("rule") or ""),
        "pass_votes": judge.get("pass_votes"),
        "needed": judge.get("needed"),
        "rubric": judge.get("rubric") if isinstance(judge.get("rubric"), str) else None,
        "rubric_file": judge.get("rubric_file"),
        "who": judge.get("judge") if isinstance(judge.get("judge"), str) else None,
        "agreement": "n/a" if agreement is None else f"{agreement:.0%}",
        "tokens_in": _tokens(judge.get("input_tokens")),
        "tokens_out": _tokens(judge.get("output_tokens")),
        "cost": money(_number(judge.get("cost"))),
        "source": source,
        "key": key[:12] if isinstance(key, str) else None,
        "votes": [
            {
                "number": number,
                "verdict": vote.get("verdict") or "error",
                "reason": str(vote.get("reason") or ""),
                "score": vote.get("score"),
                "error": vote.get("error"),
                "tokens": f"{_tokens(vote.get('input_tokens'))} / "
                f"{_tokens(vote.get('output_tokens'))}",
                "cost": money(_number(vote.get("cost"))),
                "attempts": vote.get("attempts") or 1,
                "cached": bool(vote.get("cached")),
            }
            for number, vote in enumerate(votes, start=1)
        ],
    }


def _why_live(record: RunRecord) -> list[tuple[str, str]]:
    """Why ``--ooda-changed=REF`` ran the run live: what changed since the revision."""
    why = record.head.changed
    if not why:
        return []
    commit = str(why.get("commit") or "")[:8]
    reasons = "; ".join(str(reason) for reason in why.get("reasons") or ()) or "-"
    return [(f"live: changed since {why.get('ref')} ({commit})", reasons)]


def _protected(record: RunRecord) -> list[tuple[str, str]]:
    """The protected paths the agent changed (``expect.protect``), put back before the
    run was checked."""
    return [(path, "changed") for path in record.protected_changes]


def run_view(
    record: RunRecord, *, anchor: str, full: bool, prompt_anchor: str | None = None
) -> dict[str, Any]:
    """Everything a page shows of one run; ``full``: with its transcript."""
    transcript = _transcript_iterations(record) if full else {}
    notes = list((record.transcript or {}).get("notes") or ()) if full else []
    return {
        "record": record,
        "anchor": anchor,
        "title": run_title(record),
        "verdict": record.outcome,
        "reason": reason(record),
        "full": full,
        "has_transcript": record.transcript is not None,
        "notes": [str(note) for note in notes],
        "prompt_anchor": prompt_anchor,
        "judge": judge_view(record.judge),
        "protected": _protected(record),
        # The record's labelled fields (their columns' ``label``), as declared.
        "facts": [*shown(record), *_why_live(record)],
        "fingerprint": fingerprint_view(record.fingerprint),
        "cost": money(record.cost),
        "tokens": "-" if record.usage is None else f"{record.usage.total_tokens:,}",
        "time": seconds(record.elapsed_s),
        "iterations": [
            {
                "entry": entry,
                "story": iteration_story(record, entry),
                "time": seconds(entry.duration_s),
                "tokens": "-" if entry.usage is None else f"{entry.usage.total_tokens:,}",
                "cost": money(entry.usage.cost if entry.usage is not None else None),
                "transcript": transcript.get(entry.number),
            }
            for entry in record.iterations
        ],
    }

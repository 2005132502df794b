"""Grading a run: each vote from the content-addressed cache or from the judge, the votes
combined under the pass rule, and the judge's spending held to what is left of the
run's budget."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda._util import atomic_write_text
from pytest_ooda.errors import OodaError, ScenarioError
from pytest_ooda.judge.ask import ask_vote, judge_prompt
from pytest_ooda.judge.model import Grading, Vote, combine, grading_key, inputs_key
from pytest_ooda.reader import Reader

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ooda.judge.ask import Asker
    from pytest_ooda.judge.model import JudgeInputs, JudgeSpec, RecordedGrading

#: Folder of the grading cache inside a results directory.
CACHE_DIR = "judge-cache"
#: What a cache entry holds (``Vote.as_dict()``).
_ENTRY_KEYS = (
    "verdict",
    "reason",
    "score",
    "error",
    "input_tokens",
    "output_tokens",
    "cost",
    "attempts",
    "cached",
)


class GradingCache:
    """Votes by content key, one small JSON file each under ``directory``; a vote that
    errored is never kept (it is asked again next time). Safe for xdist workers: each
    file is written atomically and a half-read one counts as missing."""

    def __init__(self, directory: Path, *, ignore_dir: Path | None = None) -> None:
        self.directory = directory
        #: Created with a ``.gitignore`` of ``*`` when missing (the default ``.ooda/``),
        #: as the results log does: a cache written first must not let results into git.
        self.ignore_dir = ignore_dir
        self.hits = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Vote | None:
        """The vote kept under ``key``; ``None`` when there is none, or when the entry is
        damaged in any way (not JSON, nested past any bound, a field missing or of the
        wrong type): the judge is asked again and its vote replaces the entry."""
        path = self._path(key)
        try:
            vote = _read_vote(Reader(str(path), ScenarioError), path.read_bytes())
        except (OSError, OodaError):
            return None
        self.hits += 1
        return vote

    def put(self, key: str, vote: Vote) -> None:
        if vote.verdict is None:
            return
        path = self._path(key)
        try:
            if self.ignore_dir is not None and not self.ignore_dir.exists():
                self.ignore_dir.mkdir(parents=True, exist_ok=True)
                (self.ignore_dir / ".gitignore").write_text(
                    "# written by pytest-ooda: live-run results stay out of git\n*\n",
                    encoding="utf-8",
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(vote.as_dict(), sort_keys=True) + "\n")
        except OSError:
            # A cache that cannot be written costs a second question, never the run.
            return


def _read_vote(check: Reader, raw: bytes) -> Vote:
    """A cache entry (``Vote.as_dict()`` as JSON), every field checked."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise check.fail("not a JSON object") from None
    entry = check.mapping(data, None, "vote")
    check.keys(entry, _ENTRY_KEYS, "vote")
    if entry.get("error") is not None:
        raise check.fail("an errored vote is never kept")

    verdict = check.choice(entry.get("verdict"), None, "verdict", ("pass", "fail"))
    score, cost = entry.get("score"), entry.get("cost")
    return Vote(
        verdict="pass" if verdict == "pass" else "fail",
        reason=check.text(entry.get("reason", ""), None, "reason"),
        score=None if score is None else check.number(score, None, "score", None),
        input_tokens=check.integer(entry.get("input_tokens", 0), None, "input_tokens", 0),
        output_tokens=check.integer(entry.get("output_tokens", 0), None, "output_tokens", 0),
        cost=None if cost is None else check.number(cost, None, "cost"),
        attempts=check.integer(entry.get("attempts", 1), None, "attempts", 1),
    )


def cache_for(
    results_dir: Path | str | None, *, ignore_dir: Path | None = None
) -> GradingCache | None:
    """The grading cache of a results directory (``None``: no caching)."""
    if results_dir is None:
        return None
    return GradingCache(Path(results_dir) / CACHE_DIR, ignore_dir=ignore_dir)


def grade(
    spec: JudgeSpec,
    inputs: JudgeInputs,
    asker: Asker,
    *,
    cache: GradingCache | None = None,
    budget: float | None = None,
    redact: Callable[[str], str] | None = None,
    run: str | None = None,
) -> Grading:
    """Grade one run: ``spec.votes`` votes, each cached by content (and by ``run``, the
    live run's id, unless ``judge_cache: content``), combined under the pass rule.
    ``budget`` is what the judge may spend in US dollars; a vote that would start with
    it spent is not asked, and the grading is an error. ``redact`` (a callable on text)
    is applied to every reason before it is kept."""
    prompt = judge_prompt(spec, inputs)
    votes: list[Vote] = []
    spent = 0.0
    for index in range(spec.votes):
        key = grading_key(spec, inputs, index, run)
        cached = cache.get(key) if cache is not None else None
        if cached is not None:
            votes.append(_cached(cached))
            continue
        if budget is not None and spent >= budget:
            error = f"the run's budget (${budget:g} for the judge) is spent"
            votes.append(Vote(None, error=error, error_kind="budget-spent"))
            continue
        vote = ask_vote(asker, prompt, retries=spec.retries)
        if redact is not None:
            vote = _redacted(vote, redact)
        spent += vote.cost or 0.0
        if cache is not None:
            cache.put(key, vote)
        votes.append(vote)
    return combine(spec, tuple(votes), key=inputs_key(spec, inputs))


def _cached(vote: Vote) -> Vote:
    return replace(vote, cached=True)


def _redacted(vote: Vote, redact: Callable[[str], str]) -> Vote:
    return replace(
        vote,
        reason=redact(vote.reason),
        error=redact(vote.error) if vote.error is not None else None,
    )


def replay_grading(spec: JudgeSpec, recorded: RecordedGrading) -> Grading:
    """The recorded verdicts under ``spec``'s current rule, with no judge asked; the
    key says which rubric and inputs they were given for. The rule counts the votes
    that were recorded (a recording of one vote replays as one vote)."""
    count = len(recorded.votes)
    rule = replace(spec, votes=count, at_least=min(spec.at_least or 1, count))
    return replace(combine(rule, recorded.votes, key=recorded.key), replayed=True)

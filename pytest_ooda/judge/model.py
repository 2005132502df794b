"""The judge's data: what ``expect.judge`` asks (``JudgeSpec``), who answers
(``JudgeBackendSpec``), one answer (``Vote``), a run's grade (``Grading``) and the
verdicts a recording keeps (``RecordedGrading``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ooda._types import (
        JudgeCacheScope,
        JudgeErrorKind,
        JudgeInput,
        JudgePassRule,
        JudgeVerdict,
    )
    from pytest_ooda.config import ApiSettings

#: How often one vote is asked again after a judge ``error`` (malformed answer, HTTP 529).
DEFAULT_JUDGE_RETRIES = 2
#: Seconds an agent command judging one vote may take.
DEFAULT_JUDGE_TIMEOUT = 300.0
#: The inputs a judge sees when ``inputs:`` is not given.
DEFAULT_INPUTS: tuple[JudgeInput, ...] = ("output", "diff")


@dataclass(frozen=True)
class JudgeBackendSpec:
    """Who grades: an HTTP API (``ai_api``) or an agent command (``ai_cmd`` or an alias
    of the config's ``ai_cmd_aliases``), whose final text is the answer."""

    ai_api: ApiSettings | None = None
    ai_cmd: str | None = None
    ai_cmd_alias: str | None = None
    ai_output: str | None = None
    timeout: float = DEFAULT_JUDGE_TIMEOUT
    #: Where the ``judge:`` mapping sits in the scenario file (for a judge that does not
    #: resolve, e.g. an unknown alias).
    line: int | None = field(default=None, compare=False)
    column: int | None = field(default=None, compare=False)

    def identity(self) -> dict[str, Any]:
        """What decides a judge's answers, for the grading cache key and the record
        (never a key: ``api_key_env`` names a variable, the key itself is not read)."""
        if self.ai_api is not None:
            api = self.ai_api
            return {
                "kind": "ai_api",
                "provider": api.provider,
                "model": api.model,
                "base_url": api.base_url,
                "max_tokens": api.max_tokens,
            }
        return {
            "kind": "ai_cmd",
            "ai_cmd": self.ai_cmd,
            "ai_cmd_alias": self.ai_cmd_alias,
            "ai_output": self.ai_output,
        }


@dataclass(frozen=True)
class LabelledExample:
    """A calibration example: a run's inputs as text, and the verdict a person gave."""

    label: JudgeVerdict
    output: str = ""
    diff: str = ""
    transcript: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    line: int | None = field(default=None, compare=False)

    def inputs(self) -> JudgeInputs:
        return JudgeInputs(
            output=self.output, diff=self.diff, transcript=self.transcript, files=self.files
        )


@dataclass(frozen=True)
class JudgeSpec:
    """``expect.judge``: the rubric, what of the run the judge sees, who judges, how
    many votes and how they combine (``at_least`` is the k of ``pass: {at_least: k}``)."""

    rubric: str
    backend: JudgeBackendSpec
    inputs: tuple[JudgeInput, ...] = DEFAULT_INPUTS
    files: tuple[str, ...] = ()
    votes: int = 1
    pass_rule: JudgePassRule = "majority"
    at_least: int | None = None
    retries: int = DEFAULT_JUDGE_RETRIES
    rubric_file: str | None = None
    examples: tuple[LabelledExample, ...] = ()
    line: int | None = field(default=None, compare=False)
    #: ``judge_cache:``: ``run`` (default) keys a cached vote by the run as well as by
    #: the question, so each run samples the judge's noise; ``content`` shares one vote
    #: between runs asking the same question (identical outputs), on purpose.
    cache: JudgeCacheScope = "run"

    @property
    def needed(self) -> int:
        """Pass votes needed for the run to pass."""
        if self.pass_rule == "all":
            return self.votes
        if self.pass_rule == "at_least":
            return self.at_least or 1
        return self.votes // 2 + 1

    def describe_rule(self) -> str:
        if self.pass_rule == "at_least":
            return f"at least {self.needed} of {self.votes}"
        if self.pass_rule == "all":
            return f"all {self.votes}"
        return f"a majority ({self.needed}) of {self.votes}"

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rubric": self.rubric_file or self.rubric}
        inputs: list[Any] = [name for name in self.inputs if name != "files"]
        if self.files:
            inputs.append({"files": list(self.files)})
        out["inputs"] = inputs
        judge: dict[str, Any] = {}
        backend = self.backend
        if backend.ai_api is not None:
            api = backend.ai_api
            judge["ai_api"] = {
                key: value
                for key, value in (
                    ("provider", api.provider),
                    ("model", api.model),
                    ("base_url", api.base_url),
                    ("api_key_env", api.api_key_env),
                    ("max_tokens", api.max_tokens if api.max_tokens != 4096 else None),
                    ("timeout", api.timeout if api.timeout != 600.0 else None),
                    ("price_input_per_mtok", api.price_input_per_mtok),
                    ("price_output_per_mtok", api.price_output_per_mtok),
                )
                if value is not None
            }
        if backend.ai_cmd is not None:
            judge["ai_cmd"] = backend.ai_cmd
        if backend.ai_cmd_alias is not None:
            judge["ai_cmd_alias"] = backend.ai_cmd_alias
        if backend.ai_output is not None:
            judge["ai_output"] = backend.ai_output
        if backend.ai_api is None and backend.timeout != DEFAULT_JUDGE_TIMEOUT:
            judge["timeout"] = backend.timeout
        out["judge"] = judge
        if self.votes != 1:
            out["votes"] = self.votes
        if self.pass_rule == "at_least":
            out["pass"] = {"at_least": self.needed}
        elif self.pass_rule != "majority":
            out["pass"] = self.pass_rule
        if self.retries != DEFAULT_JUDGE_RETRIES:
            out["retries"] = self.retries
        if self.examples:
            out["examples"] = [example_yaml(example) for example in self.examples]
        if self.cache != "run":
            out["judge_cache"] = self.cache
        return out


def example_yaml(example: LabelledExample) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if example.name:
        out["name"] = example.name
    out["label"] = example.label
    for key in ("output", "diff", "transcript"):
        value = getattr(example, key)
        if value:
            out[key] = value
    if example.files:
        out["files"] = dict(example.files)
    return out


@dataclass(frozen=True)
class JudgeInputs:
    """What the judge is shown of one run, each part as text (empty when not asked)."""

    output: str = ""
    diff: str = ""
    transcript: str = ""
    files: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "diff": self.diff,
            "transcript": self.transcript,
            "files": dict(sorted(self.files.items())),
        }


def grading_key(spec: JudgeSpec, inputs: JudgeInputs, vote: int, run: str | None = None) -> str:
    """The key of one vote: the rubric, the inputs, the judge's settings and the vote's
    index — and, under ``judge_cache: run`` (the default), the ``run`` it grades (a live
    run's id), so two runs with identical outputs are graded apart. The same key is the
    same question, asked before."""
    payload: dict[str, Any] = {
        "rubric": spec.rubric,
        "inputs": inputs.as_dict(),
        "judge": spec.backend.identity(),
        "vote": vote,
    }
    if run is not None and spec.cache == "run":
        payload["run"] = run
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def inputs_key(spec: JudgeSpec, inputs: JudgeInputs) -> str:
    """A key over the rubric and the inputs only (the judge may change): recorded
    verdicts stand for a run graded with this rubric on these inputs."""
    payload = {"rubric": spec.rubric, "inputs": inputs.as_dict()}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class Vote:
    """One grading: the verdict and its reason, or ``error`` when the judge gave no
    usable answer (after its retries), with ``error_kind`` saying why (kept in memory
    only: an errored vote is never cached or recorded as a verdict). ``cached`` when it
    came from the cache."""

    verdict: JudgeVerdict | None
    reason: str = ""
    score: float | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    attempts: int = 1
    cached: bool = False
    error_kind: JudgeErrorKind | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "reason": self.reason}
        if self.score is not None:
            out["score"] = self.score
        if self.error is not None:
            out["error"] = self.error
        out["input_tokens"] = self.input_tokens
        out["output_tokens"] = self.output_tokens
        out["cost"] = self.cost
        out["attempts"] = self.attempts
        if self.cached:
            out["cached"] = True
        return out


@dataclass(frozen=True)
class Grading:
    """A run's grade: its votes, whether it passed under the rule, the agreement of the
    votes (the share agreeing with the most common verdict), and ``error`` when a vote
    had no usable answer — a judge error, not a procedure failure."""

    votes: tuple[Vote, ...]
    passed: bool | None
    needed: int
    rule: str
    error: str | None = None
    key: str | None = None
    replayed: bool = False

    @property
    def pass_votes(self) -> int:
        return sum(1 for vote in self.votes if vote.verdict == "pass")

    @property
    def agreement(self) -> float | None:
        verdicts = [vote.verdict for vote in self.votes if vote.verdict is not None]
        if not verdicts:
            return None
        top = max(verdicts.count("pass"), verdicts.count("fail"))
        return top / len(verdicts)

    @property
    def input_tokens(self) -> int:
        return sum(vote.input_tokens for vote in self.votes if not vote.cached)

    @property
    def output_tokens(self) -> int:
        return sum(vote.output_tokens for vote in self.votes if not vote.cached)

    @property
    def cost(self) -> float | None:
        """What this grading paid (cached votes cost nothing again)."""
        costs = [vote.cost for vote in self.votes if vote.cost is not None and not vote.cached]
        return sum(costs) if costs else None

    def problem(self) -> str | None:
        """The expectation miss this grading stands for (``None`` when it passed or errored)."""
        if self.passed is not False:
            return None
        reasons = "; ".join(
            f"vote {index + 1}: {vote.reason}"
            for index, vote in enumerate(self.votes)
            if vote.verdict == "fail" and vote.reason
        )
        text = f"judge: {self.pass_votes} of {len(self.votes)} vote(s) passed, needed {self.rule}"
        return f"{text} ({reasons})" if reasons else text

    def as_dict(self) -> dict[str, Any]:
        """The results record's ``judge`` field (redacted by the caller)."""
        return {
            "passed": self.passed,
            "error": self.error,
            "rule": self.rule,
            "needed": self.needed,
            "pass_votes": self.pass_votes,
            "agreement": self.agreement,
            "votes": [vote.as_dict() for vote in self.votes],
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "key": self.key,
            "replayed": self.replayed,
        }


@dataclass(frozen=True)
class RecordedGrading:
    """``judged:`` in a recording: the verdicts the run got, and the key of the rubric
    and inputs they were given for, so a replay grades offline and says when the
    rubric has changed since."""

    key: str
    votes: tuple[Vote, ...]
    line: int | None = field(default=None, compare=False)

    def to_yaml(self) -> dict[str, Any]:
        votes: list[dict[str, Any]] = []
        for vote in self.votes:
            item: dict[str, Any] = {"verdict": vote.verdict or "error", "reason": vote.reason}
            if vote.score is not None:
                item["score"] = vote.score
            votes.append(item)
        return {"key": self.key, "votes": votes}


def combine(spec: JudgeSpec, votes: tuple[Vote, ...], *, key: str | None = None) -> Grading:
    """The votes under ``spec``'s pass rule; any vote without an answer makes the
    grading an ``error`` (it cannot be told whether the run passed)."""
    errors = [vote.error for vote in votes if vote.verdict is None]
    if errors:
        error = f"judge error: {errors[0] or 'no verdict'}"
        return Grading(votes, None, spec.needed, spec.describe_rule(), error, key)
    passes = sum(1 for vote in votes if vote.verdict == "pass")
    return Grading(votes, passes >= spec.needed, spec.needed, spec.describe_rule(), None, key)

"""The scenario model: iterations, file checks, the ``expect`` block and the checks
it makes of a run (tool and command checks live in :mod:`.verify`)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import SIGNALS as PROMISE_SIGNALS
from pytest_ooda.backends import ReplayBackend, ReplayStep

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pytest_ooda._types import ReplayKind
    from pytest_ooda.agents import Activation
    from pytest_ooda.backends import ToolCall, Usage
    from pytest_ooda.config import RetrySettings
    from pytest_ooda.facts import CommandOutcome
    from pytest_ooda.judge import JudgeSpec, RecordedGrading
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.replay_rules import ReplayRule
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec
    from pytest_ooda.scenario.drive import Triggers
    from pytest_ooda.scenario.fired import ActivationExpect, Assertion, TrajectoryExpect
    from pytest_ooda.scenario.verify import CommandCheck, ToolExpect
    from pytest_ooda.variants import Variant


#: What ``expect.signals`` may list per iteration: a promise tag, or ``none``.
SIGNALS = ("none", *PROMISE_SIGNALS)
# A recording holds up to max_output_buffer bytes per iteration (10 MB by default).
MAX_SCENARIO_BYTES = 512 * 1024 * 1024

_PROCEDURE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_TOP_KEYS = (
    "procedure",
    "description",
    "context",
    "max_iterations",
    "failure_threshold",
    "repeat",
    "workspace",
    "expect",
    "iterations",
    "max_cost",
    "max_tokens",
    "recorded",
    "sandbox",
    "judged",
    "variants",
    "retry",
    "replay",
    "replay_normalise",
    "prompt",
    "setup",
    "triggers",
    "control",
)
_EXPECT_KEYS = (
    "status",
    "iterations",
    "signals",
    "files",
    "tools",
    "commands",
    "judge",
    "protect",
    "fresh_sandbox",
    "activation",
    "trajectory",
)
_TOOLS_KEYS = ("called", "not_called", "bash_matches", "max_calls")
_COMMAND_KEYS = ("run", "pytest", "exit_code", "timeout", "output_contains")
_RECORDED_KEYS = ("status", "reason", "iterations", "tokens", "cost", "sandbox")
#: ``expect`` keys about all runs of a scenario together (live repeats), never one run.
_AGGREGATE_KEYS = ("success_rate", "max_error_rate", "max_mean_iterations", "max_mean_cost")
#: The most runs ``repeat:`` (and ``--ooda-repeat``) may ask for: more is a typo.
MAX_REPEAT = 10_000
_ITERATION_KEYS = (
    "output",
    "exit_code",
    "prompt_sha256",
    "prompt",
    "duration_s",
    "delay",
    "timed_out",
    "files",
    "error",
    "usage",
    "turns",
    "model",
    "tool_calls",
    "permission_denials",
    "retries",
    "fired",
)
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cost",
)
_TOOL_CALL_KEYS = ("name", "summary", "ok", "error", "input")
#: How much of each argument of a tool call a recording keeps (``expect.trajectory``
#: matches its patterns against it on a replay).
RECORDED_ARGUMENT_CHARS = 500


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8 (what ``prompt_sha256`` holds).

    Bytes a ``!!binary`` parameter put in a prompt (carried as surrogate escapes) count as
    the bytes the AI receives.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class ScenarioIteration:
    """One recorded iteration. ``prompt`` is kept (for drift diffs) on the first only.

    What an agent CLI reported rides along (``usage``, ``tool_calls`` — ``None`` when
    the output format did not list them —, ``permission_denials``, ``turns``,
    ``model``), and ``error``, why the iteration failed when its output alone does not
    say (broken JSON, an error the agent reported), so a replay ends as the run did.
    """

    output: str = ""
    exit_code: int = 0
    prompt_sha256: str | None = None
    prompt: str | None = None
    duration_s: float | None = None
    delay: float = 0.0
    timed_out: bool = False
    files: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    line: int | None = field(default=None, compare=False)
    error: str | None = None
    usage: Usage | None = None
    turns: int | None = None
    model: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    permission_denials: tuple[ToolCall, ...] = ()
    #: Tries of the iteration the infrastructure spoiled before the recorded one (a
    #: replay serves the recorded one only).
    retries: int = 0
    #: What fired besides the tool calls (``fired: [skill:greet, hook:Stop]``).
    activations: tuple[Activation, ...] = ()

    def to_step(self) -> ReplayStep:
        return ReplayStep(
            output=self.output,
            exit_code=self.exit_code,
            delay=self.delay,
            timed_out=self.timed_out,
            files=self.files,
            usage=self.usage,
            tool_calls=self.tool_calls or (),
            permission_denials=self.permission_denials,
            turns=self.turns,
            model=self.model,
            tools_reported=self.tool_calls is not None,
            error=self.error,
            activations=self.activations,
        )

    def agent_yaml(self) -> dict[str, Any]:
        """The agent's report of this iteration as written in a scenario file."""
        out: dict[str, Any] = {}
        if self.error is not None:
            out["error"] = self.error
        if self.usage is not None:
            usage = self.usage.as_dict()
            cost = usage.pop("cost")
            if cost is not None:
                usage["cost"] = round(cost, 6)
            out["usage"] = usage
        if self.turns is not None:
            out["turns"] = self.turns
        if self.model is not None:
            out["model"] = self.model
        if self.tool_calls is not None:
            out["tool_calls"] = [_call_yaml(call) for call in self.tool_calls]
        if self.permission_denials:
            out["permission_denials"] = [_call_yaml(call) for call in self.permission_denials]
        if self.retries:
            out["retries"] = self.retries
        if self.activations:
            out["fired"] = [activation.label for activation in self.activations]
        return out


def _call_yaml(call: ToolCall) -> dict[str, Any]:
    """A tool call without its unset fields (no empty summary, no unknown result), and
    its arguments, each cut at :data:`RECORDED_ARGUMENT_CHARS` characters."""
    out = {key: value for key, value in call.as_dict().items() if value not in ("", None)}
    if isinstance(call.arguments, dict) and call.arguments:
        out["input"] = {str(key): _argument(value) for key, value in call.arguments.items()}
    return out


def _argument(value: Any) -> Any:
    if isinstance(value, bool | int | float) or value is None:
        return value
    if not isinstance(value, str):
        import json

        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return value[:RECORDED_ARGUMENT_CHARS]


@dataclass(frozen=True)
class RecordedOutcome:
    """``recorded:``: how the recorded run ended, written by the recorder for a person
    reading the file (why it stopped — a budget, a failure threshold —, what it cost)."""

    status: str
    reason: str | None = None
    iterations: int | None = None
    tokens: int | None = None
    cost: float | None = None
    #: Where the recorded run executed: ``{kind, image, image_id}`` (``None``: no sandbox).
    sandbox: Mapping[str, str] | None = None

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.iterations is not None:
            out["iterations"] = self.iterations
        if self.tokens is not None:
            out["tokens"] = self.tokens
        if self.cost is not None:
            out["cost"] = round(self.cost, 6)
        if self.sandbox is not None:
            out["sandbox"] = dict(self.sandbox)
        return out


@dataclass(frozen=True)
class FileCheck:
    """A workspace check: ``exists`` True/False/None (don't care) and required substrings."""

    path: str
    exists: bool | None = True
    contains: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)

    def check(self, workspace: Path) -> str | None:
        from pytest_ooda.scenario.verify import check_file

        return check_file(workspace, self.path, exists=self.exists, contains=self.contains)

    def to_yaml(self) -> Any:
        if not self.contains:
            return "exists" if self.exists else "absent"
        out: dict[str, Any] = {}
        if self.exists is False:
            out["exists"] = False
        out["contains"] = self.contains[0] if len(self.contains) == 1 else list(self.contains)
        return out


@dataclass(frozen=True)
class AggregateExpect:
    """``expect`` keys judged over every run of a scenario (``success_rate: {min: …}``,
    ``max_mean_iterations``, ``max_mean_cost``): a CI gate on the measured procedure.
    A single run never checks them; the pytest session (or ``ooda report --check`` over
    merged results) does, once the runs are in."""

    min_success_rate: float | None = None
    max_mean_iterations: float | None = None
    max_mean_cost: float | None = None
    #: ``success_rate.stop_early``: skip the remaining runs once a sequential test has
    #: settled the verdict (docs/evaluating.md).
    stop_early: bool = False
    #: ``success_rate.min_runs``: the valid runs a verdict needs.
    min_runs: int | None = None
    #: ``max_error_rate``: the share of runs that may be infrastructure errors before
    #: the gates are inconclusive (``None``: the default, 0.2).
    max_error_rate: float | None = None

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.min_success_rate is not None:
            rate: dict[str, Any] = {"min": _plain(self.min_success_rate)}
            if self.stop_early:
                rate["stop_early"] = True
            if self.min_runs is not None:
                rate["min_runs"] = self.min_runs
            out["success_rate"] = rate
        if self.max_error_rate is not None:
            out["max_error_rate"] = _plain(self.max_error_rate)
        if self.max_mean_iterations is not None:
            out["max_mean_iterations"] = _plain(self.max_mean_iterations)
        if self.max_mean_cost is not None:
            out["max_mean_cost"] = _plain(self.max_mean_cost)
        return out


def _yaml_options(spec: SandboxSpec) -> dict[str, Any]:
    return {key: list(v) if isinstance(v, tuple) else v for key, v in spec.options.items()}


def _plain(value: float) -> float | int:
    """``3`` rather than ``3.0`` when written back, as the user most likely wrote it."""
    return int(value) if value.is_integer() else value


@dataclass(frozen=True)
class Assessment:
    """A run against its ``expect`` block: every way it missed (``problems``), what
    each verification command did, passed or not (``commands``), and the files under
    ``expect.protect`` the agent changed, put back before anything was checked
    (``protected_changes``, relative paths)."""

    problems: list[str]
    commands: tuple[CommandOutcome, ...] = ()
    protected_changes: tuple[str, ...] = ()
    #: Why the workspace could not be put back (``workspace: …``, an infrastructure
    #: error's reason): nothing was checked then, and ``problems`` says so.
    workspace_error: str | None = None
    #: Each ``expect.activation`` and ``expect.trajectory`` entry and whether the run
    #: met it: the named assertions a measurement gives a pass rate each.
    assertions: tuple[Assertion, ...] = ()


@dataclass(frozen=True)
class Expect:
    """The ``expect:`` block. ``iterations`` is exact; ``min/max_iterations`` bound a range.
    ``aggregate`` holds the keys about all runs together; ``check`` ignores them."""

    status: str | None = None
    iterations: int | None = None
    min_iterations: int | None = None
    max_iterations: int | None = None
    signals: tuple[str, ...] | None = None
    files: tuple[FileCheck, ...] = ()
    tools: ToolExpect | None = None
    commands: tuple[CommandCheck, ...] = ()
    aggregate: AggregateExpect | None = None
    #: ``judge:``: a rubric graded by a model after a run (``pytest_ooda.judge``); the
    #: live and replay paths grade it, ``check`` does not.
    judge: JudgeSpec | None = None
    #: ``protect:``: files and directories of the workspace put back as the run's
    #: source holds them before the files are checked and the commands run, so the
    #: agent's edits to them (a test rewritten to pass) cannot decide the verdict.
    protect: tuple[str, ...] = ()
    #: ``fresh_sandbox:``: a live run's verification commands run in a new sandbox
    #: over the workspace, not the agent's (whose processes, home and ``/tmp`` the
    #: agent could have prepared).
    fresh_sandbox: bool = False
    #: ``activation:``: skills, subagents, commands, MCP tools, hooks that must (not) fire.
    activation: tuple[ActivationExpect, ...] = ()
    #: ``trajectory:``: the tool calls the run makes, with argument patterns.
    trajectory: tuple[TrajectoryExpect, ...] = ()

    def check(
        self, result: LoopResult, workspace: Path | None = None, *, source: Path | None = None
    ) -> list[str]:
        """Every way ``result`` (and the ``workspace`` afterwards) misses this block.

        The verification ``commands`` run in ``workspace`` here, after the loop.
        """
        return self.assess(result, workspace, source=source).problems

    def assess(
        self,
        result: LoopResult,
        workspace: Path | None = None,
        *,
        sandbox: SandboxRun | None = None,
        run_commands: bool = True,
        redact: Callable[[str], str] | None = None,
        source: Path | None = None,
    ) -> Assessment:
        """:meth:`check`, keeping each verification command's outcome as well. The
        commands run inside ``sandbox`` when given; ``run_commands=False`` skips them
        (a replay told not to run a scenario's commands); ``redact`` cleans their whole
        output before its tail is kept. ``protect``'s paths are first put back as
        ``source`` holds them (the directory the workspace was copied from; ``None``:
        an empty one)."""
        problems: list[str] = []
        commands: list[CommandOutcome] = []
        protected: tuple[str, ...] = ()
        if self.protect and workspace is not None:
            from pytest_ooda.errors import WorkspaceError
            from pytest_ooda.workspace import restore_protected

            try:
                protected = restore_protected(workspace, source, self.protect)
            except WorkspaceError as error:
                # Nothing is checked in a workspace the protected paths are not back in.
                from pytest_ooda.backends import infra_reason

                reason = infra_reason("workspace", error.message)
                return Assessment([error.message], (), (), workspace_error=reason)
        if self.status is not None and result.status != self.status:
            problems.append(f"expected status {self.status!r}, got {result.status!r}")
        ran = result.iterations
        if self.iterations is not None and ran != self.iterations:
            problems.append(f"expected {self.iterations} iteration(s), ran {ran}")
        low, high = self.min_iterations, self.max_iterations
        if (low is not None and ran < low) or (high is not None and ran > high):
            bounds = f"{low if low is not None else 0}..{high if high is not None else '∞'}"
            problems.append(f"expected {bounds} iterations, ran {ran}")
        if self.signals is not None and list(self.signals) != result.signals:
            problems.append(f"expected signals {list(self.signals)}, got {result.signals}")
        if self.files:
            if workspace is None:
                problems.append("file checks need a workspace, but the run had none")
            else:
                for check in self.files:
                    problem = check.check(workspace)
                    if problem:
                        problems.append(problem)
        if self.tools is not None:
            problems.extend(self.tools.check(result))
        assertions = self._fired(result)
        problems.extend(a.detail or a.name for a in assertions if not a.passed)
        if self.commands and run_commands:
            if workspace is None:
                problems.append("verification commands need a workspace, but the run had none")
            else:
                for command in self.commands:
                    outcome = command.verify(
                        workspace,
                        sandbox=sandbox,
                        redact=redact,
                        source=source,
                        protect=self.protect,
                    )
                    commands.append(outcome)
                    if outcome.problem:
                        problems.append(outcome.problem)
        return Assessment(problems, tuple(commands), protected, assertions=assertions)

    def _fired(self, result: LoopResult) -> tuple[Assertion, ...]:
        """``expect.activation`` and ``expect.trajectory``, one assertion each."""
        found = tuple(expect.check(result.activations) for expect in self.activation)
        if self.trajectory and not result.tools_reported:
            from pytest_ooda.scenario.fired import Assertion

            why = (
                "the run did not report its tool calls (the output was read as text); use "
                "an output format that lists them, or re-record the scenario with one"
            )
            return found + tuple(Assertion(t.label, False, why) for t in self.trajectory)
        return found + tuple(expect.check(result.tool_calls) for expect in self.trajectory)

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.status is not None:
            out["status"] = self.status
        if self.iterations is not None:
            out["iterations"] = self.iterations
        elif self.min_iterations is not None or self.max_iterations is not None:
            bounds: dict[str, int] = {}
            if self.min_iterations is not None:
                bounds["min"] = self.min_iterations
            if self.max_iterations is not None:
                bounds["max"] = self.max_iterations
            out["iterations"] = bounds
        if self.signals is not None:
            out["signals"] = list(self.signals)
        if self.files:
            out["files"] = {check.path: check.to_yaml() for check in self.files}
        if self.tools is not None:
            out["tools"] = self.tools.to_yaml()
        if self.commands:
            out["commands"] = [command.to_yaml() for command in self.commands]
        if self.judge is not None:
            out["judge"] = self.judge.to_yaml()
        if self.protect:
            out["protect"] = list(self.protect)
        if self.fresh_sandbox:
            out["fresh_sandbox"] = True
        if self.activation:
            activation: dict[str, dict[str, str]] = {}
            for entry in self.activation:
                state = "fired" if entry.fired else "not_fired"
                activation.setdefault(entry.kind, {})[entry.name] = state
            out["activation"] = activation
        if self.trajectory:
            shaped = [entry.to_yaml() for entry in self.trajectory]
            out["trajectory"] = shaped[0] if len(shaped) == 1 else shaped
        if self.aggregate is not None:
            out.update(self.aggregate.to_yaml())
        return out


@dataclass(frozen=True)
class Scenario:
    """A validated scenario file. ``name`` is the file stem; ``path`` where it lives."""

    procedure: str
    name: str = "scenario"
    path: Path | None = None
    description: str | None = None
    context: tuple[str, ...] = ()
    max_iterations: int | None = None
    failure_threshold: int | None = None
    workspace: str | None = None
    expect: Expect | None = None
    iterations: tuple[ScenarioIteration, ...] = ()
    max_cost: float | None = None
    max_tokens: int | None = None
    recorded: RecordedOutcome | None = None
    #: Live runs per session (``repeat:``); ``None`` leaves it to the options.
    repeat: int | None = None
    #: Where this scenario's live runs (and verification commands) execute; ``None``
    #: leaves it to the procedure and ``loop:`` (docs/sandbox.md).
    sandbox: SandboxSpec | None = None
    #: ``judged:``: the verdicts the recorded run got, so a replay grades offline.
    judged: RecordedGrading | None = None
    #: ``variants:``: named settings each live run of the scenario is repeated under.
    variants: tuple[Variant, ...] = ()
    #: ``retry:`` after infrastructure errors; ``None``: the procedure's or the loop's.
    retry: RetrySettings | None = None
    #: ``replay: agent``: the scenario item replays through the real agent, its model
    #: calls answered from the cassette (docs/agent-replay.md); ``None``: as the session
    #: says (``--ooda-replay``).
    replay: ReplayKind | None = None
    #: ``replay_normalise:``: this scenario's rules for what its agent replay ignores
    #: in requests (``pytest_ooda.replay_rules``), after the config's.
    replay_normalise: tuple[ReplayRule, ...] = ()
    #: ``prompt:``: the exact text the agent receives, passed through (a slash command
    #: and its arguments); the procedure's fragments are not composed.
    prompt: str | None = None
    #: Each agent material key the scenario sets (``claude:``): the directories its runs
    #: install, relative to the scenario file (empty: none); ``None``: the config's.
    material: Mapping[str, tuple[str, ...]] | None = None
    #: ``setup:``: commands run in the workspace after it is copied and before the agent.
    setup: tuple[CommandCheck, ...] = ()
    #: ``triggers:``: prompts that should (not) fire a skill or subagent, each a run.
    triggers: Triggers | None = None
    #: ``control: true``: a positive control — a scenario that succeeds whenever the
    #: harness can observe the agent at all; when it fails, the session's gates and
    #: comparisons are inconclusive, not the prompts' failures (docs/evaluating.md).
    control: bool = False

    @property
    def label(self) -> str:
        """``procedure/name`` as used in messages."""
        return f"{self.procedure}/{self.name}"

    def replay_backend(self, *, sleep: bool = True, files_dir: Path | None = None) -> ReplayBackend:
        """A backend serving the recorded iterations; running out names this scenario.

        Recorded file changes go to ``files_dir`` (default: the run's working directory).
        """
        return ReplayBackend(
            [it.to_step() for it in self.iterations],
            name=self.label,
            file=self.path,
            sleep=sleep,
            files_dir=files_dir,
        )

    def workspace_dir(self) -> Path | None:
        """``workspace`` resolved against the scenario file's directory."""
        if self.workspace is None:
            return None
        base = self.path.parent if self.path is not None else Path.cwd()
        return (base / self.workspace).resolve()

    def check(self, result: LoopResult, workspace: Path | None = None) -> list[str]:
        """``expect.check`` (no expectations → nothing to report)."""
        return self.assess(result, workspace).problems

    def assess(
        self,
        result: LoopResult,
        workspace: Path | None = None,
        *,
        sandbox: SandboxRun | None = None,
        run_commands: bool = True,
        redact: Callable[[str], str] | None = None,
        source: Path | None = None,
    ) -> Assessment:
        """``expect.assess``: the problems, the verification commands' outcomes and the
        protected paths the agent changed (put back from ``source`` first)."""
        if self.expect is None:
            return Assessment([], ())
        return self.expect.assess(
            result,
            workspace,
            sandbox=sandbox,
            run_commands=run_commands,
            redact=redact,
            source=source,
        )

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"procedure": self.procedure}
        if self.description is not None:
            out["description"] = self.description
        if self.context:
            out["context"] = self.context[0] if len(self.context) == 1 else list(self.context)
        if self.max_iterations is not None:
            out["max_iterations"] = self.max_iterations
        if self.failure_threshold is not None:
            out["failure_threshold"] = self.failure_threshold
        if self.max_cost is not None:
            out["max_cost"] = self.max_cost
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.repeat is not None:
            out["repeat"] = self.repeat
        if self.control:
            out["control"] = True
        if self.workspace is not None:
            out["workspace"] = self.workspace
        if self.prompt is not None:
            out["prompt"] = self.prompt
        for key, dirs in (self.material or {}).items():
            out[key] = list(dirs) if dirs else "none"
        if self.setup:
            out["setup"] = [command.to_yaml() for command in self.setup]
        if self.triggers is not None:
            out["triggers"] = self.triggers.to_yaml()
        if self.sandbox is not None:
            spec = self.sandbox
            out["sandbox"] = spec.kind if spec.bare else {"kind": spec.kind, **_yaml_options(spec)}
        if self.expect is not None:
            out["expect"] = self.expect.to_yaml()
        if self.variants:
            out["variants"] = {variant.name: variant.to_yaml() for variant in self.variants}
        if self.recorded is not None:
            out["recorded"] = self.recorded.to_yaml()
        if self.judged is not None:
            out["judged"] = self.judged.to_yaml()
        if self.replay_normalise:
            out["replay_normalise"] = [rule.to_yaml() for rule in self.replay_normalise]
        items = []
        for it in self.iterations:
            item: dict[str, Any] = {"output": it.output, "exit_code": it.exit_code}
            if it.timed_out:
                item["timed_out"] = True
            if it.prompt_sha256 is not None:
                item["prompt_sha256"] = it.prompt_sha256
            if it.duration_s is not None:
                item["duration_s"] = it.duration_s
            if it.delay:
                item["delay"] = it.delay
            if it.files:
                item["files"] = dict(it.files)
            item.update(it.agent_yaml())
            if it.prompt is not None:
                item["prompt"] = it.prompt
            items.append(item)
        out["iterations"] = items
        return out


def assert_expectations(
    scenario: Scenario, result: LoopResult, workspace: Path | None = None
) -> None:
    """``AssertionError`` listing every unmet expectation plus the run's report."""
    problems = scenario.check(result, workspace)
    if problems:
        lines = [f"scenario {scenario.label}: {len(problems)} expectation(s) not met"]
        lines += [f"  - {p}" for p in problems]
        raise AssertionError("\n".join(lines) + "\n" + result.report())

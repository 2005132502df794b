"""Every closed vocabulary of pytest-ooda, defined once.

Options (``choices=``), the config and scenario schemas, the docs generator and the
type checker all read these; nothing else spells the values out. Each vocabulary is a
``Literal`` alias for annotations plus a tuple of its values in their documented order
(``typing.get_args`` of the alias, so the two cannot drift apart).
"""

from __future__ import annotations

from typing import Literal, get_args

#: The four OODA phases, in prompt order.
Phase = Literal["observe", "orient", "decide", "act"]
PHASES: tuple[Phase, ...] = get_args(Phase)

#: What a prompt snapshot can show: one phase or the assembled prompt.
PromptPart = Literal["observe", "orient", "decide", "act", "assembled"]
PROMPT_PARTS: tuple[PromptPart, ...] = get_args(PromptPart)

#: How a loop run ended.
Status = Literal["success", "max-iters", "aborted", "interrupted"]
STATUSES: tuple[Status, ...] = get_args(Status)

#: ``ooda run``'s exit code for each status.
#: ``max-iters`` has its own code: 2 is the ``ooda`` command's configuration error.
EXIT_CODES: dict[Status, int] = {"success": 0, "aborted": 1, "max-iters": 3, "interrupted": 130}

#: What one iteration meant: ``ok`` continues (and resets failures), ``success`` stops,
#: ``failure`` counts toward the abort threshold.
OutcomeKind = Literal["ok", "success", "failure"]
OUTCOME_KINDS: tuple[OutcomeKind, ...] = get_args(OutcomeKind)

#: What one measured live run counts as: ``success`` and ``failure`` are the prompt's
#: (the run met its expectations or not); ``error`` is the infrastructure's (an API
#: overload or rate limit, a dropped connection, an agent command that could not start or
#: died before saying anything, a sandbox that would not start). Errors carry a reason
#: and are left out of success rates.
RunOutcome = Literal["success", "failure", "error"]
RUN_OUTCOMES: tuple[RunOutcome, ...] = get_args(RunOutcome)

#: The promise signal an output carried, if any, and the tags that carry them.
Signal = Literal["SUCCESS", "FAILURE"]
SIGNALS: tuple[Signal, ...] = get_args(Signal)
SUCCESS_SIGNAL = "<promise>SUCCESS</promise>"
FAILURE_SIGNAL = "<promise>FAILURE</promise>"

#: How the iteration limit is applied.
IterationMode = Literal["max-iterations", "unlimited"]
ITERATION_MODES: tuple[IterationMode, ...] = get_args(IterationMode)

#: When live runs write their transcript into the scenario file (the default first).
RecordMode = Literal["none", "once", "new", "all"]
RECORD_MODES: tuple[RecordMode, ...] = get_args(RecordMode)

#: What a run's model-API proxy does (docs/agent-replay.md): forward every request to the
#: upstream and record it, answer from the cassette and record only what it lacks, or
#: answer from the cassette alone.
ApiMode = Literal["record", "new", "replay"]
API_MODES: tuple[ApiMode, ...] = get_args(ApiMode)
#: How an agent inside a sandbox reaches the API proxy on the host: its loopback port
#: (no sandbox, a sandbox sharing the host's network), a relay started around the agent
#: in a network of its own per process (``relay``), or a listener the proxy opens inside
#: the network namespace every process of the run shares (``netns``).
ProxyAccess = Literal["loopback", "relay", "netns"]

#: What ``--ooda-record-api`` records (the flag alone first): every exchange anew, or
#: only those the cassette lacks.
ApiRecord = Literal["all", "new"]
API_RECORDS: tuple[ApiRecord, ...] = get_args(ApiRecord)

#: How a recorded scenario is replayed (the default first): the loop serves the recorded
#: iterations, or the real agent runs with its model calls answered from the cassette.
ReplayKind = Literal["loop", "agent"]
REPLAY_KINDS: tuple[ReplayKind, ...] = get_args(ReplayKind)

#: What a replay does when the recorded prompt differs from the current one (the default
#: first).
DriftMode = Literal["fail", "warn", "ignore"]
DRIFT_MODES: tuple[DriftMode, ...] = get_args(DriftMode)

#: The loop's log levels, least severe first.
LogLevel = Literal["debug", "info", "warn", "error"]
LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)

#: How loop log lines are timestamped (rooda's ``loop.log_timestamp_format``): wall-clock
#: ``[HH:MM:SS.mmm]`` (``time``; ``time-ms`` is the same), seconds since the loop started
#: (``relative``), an RFC 3339 time (``iso``), or nothing (``none``, the default first).
LogTimestampFormat = Literal["none", "time", "time-ms", "relative", "iso"]
LOG_TIMESTAMP_FORMATS: tuple[LogTimestampFormat, ...] = get_args(LogTimestampFormat)

#: A lint finding's severity, most severe first.
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)

#: A lint rule's configured level: a severity, or ``off``.
SeverityLevel = Literal["error", "warning", "info", "off"]
SEVERITY_LEVELS: tuple[SeverityLevel, ...] = get_args(SeverityLevel)

#: Where a setting came from, highest precedence first.
Tier = Literal["cli", "env", "workspace", "global", "builtin", "default"]
TIERS: tuple[Tier, ...] = get_args(Tier)

#: How an AI command's stdout is read: ``text``, or the name of an output format an
#: agent registers (``pytest_ooda.agents.output_formats()``): an open vocabulary, since
#: agents of the ``pytest_ooda.agents`` entry-point group add their own.
AiOutput = str

#: How the assembled prompt is laid out: pytest-ooda's own format (the default), rooda's,
#: byte for byte, or ``raw``: the fragments' text alone, no header, preamble or
#: iteration line — what a slash command or a skill's trigger words need; a raw
#: procedure whose prompt asks for no promise runs one turn (docs/claude-code.md).
PromptFormat = Literal["ooda", "rooda", "raw"]
PROMPT_FORMATS: tuple[PromptFormat, ...] = get_args(PromptFormat)

#: What an agent reports as having fired in a run, besides its tool calls: a skill it
#: loaded, a subagent it started, the slash command its prompt ran, an MCP server's tool
#: it called, a hook that ran (``expect.activation``, docs/claude-code.md).
ActivationKind = Literal["skill", "subagent", "command", "mcp_tool", "hook"]
ACTIVATION_KINDS: tuple[ActivationKind, ...] = get_args(ActivationKind)

#: What ``expect.activation`` asks of one skill, subagent, command, tool or hook.
Fired = Literal["fired", "not_fired"]
FIRED: tuple[Fired, ...] = get_args(Fired)

#: How ``expect.trajectory`` matches the tool calls a run made (the default first): the
#: listed calls in this order with others between, all of them in any order, or no call
#: that is not listed.
TrajectoryMatch = Literal["ordered", "any_order", "subset"]
TRAJECTORY_MATCHES: tuple[TrajectoryMatch, ...] = get_args(TrajectoryMatch)

#: A judge's answer about one run (``expect.judge``): the rubric is met, or it is not.
JudgeVerdict = Literal["pass", "fail"]
JUDGE_VERDICTS: tuple[JudgeVerdict, ...] = get_args(JudgeVerdict)

#: How a judge's votes combine into the run's grade (``pass:``).
JudgePassRule = Literal["majority", "all", "at_least"]
JUDGE_PASS_RULES: tuple[JudgePassRule, ...] = get_args(JudgePassRule)

#: What a cached judge vote is shared by (``judge_cache:``): the run and the question
#: (each run samples the judge), or the question alone (identical runs share votes).
JudgeCacheScope = Literal["run", "content"]
JUDGE_CACHE_SCOPES: tuple[JudgeCacheScope, ...] = get_args(JudgeCacheScope)

#: Why a judge gave no usable answer (``ooda judge check`` counts its errors by kind): it
#: could not be asked at all (no API key, no command), the API refused the request, the
#: infrastructure failed (429, 5xx, connection), it timed out, its command failed, its
#: answer was not the required JSON, or the run's judge budget was spent.
JudgeErrorKind = Literal[
    "cannot-ask",
    "refused",
    "infrastructure",
    "timed-out",
    "command-failed",
    "bad-answer",
    "budget-spent",
]
JUDGE_ERROR_KINDS: tuple[JudgeErrorKind, ...] = get_args(JudgeErrorKind)

#: What of a run the judge is shown (``inputs:``).
JudgeInput = Literal["diff", "output", "transcript", "files"]
JUDGE_INPUTS: tuple[JudgeInput, ...] = get_args(JudgeInput)

#: How a live run left a file of its workspace (results log, reports).
FileChange = Literal["created", "modified", "deleted"]
FILE_CHANGES: tuple[FileChange, ...] = get_args(FileChange)

#: What ``ooda compare`` concludes about one scenario's success rate: a significant drop
#: or rise, not enough evidence either way, or runs on one side only.
Verdict = Literal["regressed", "improved", "inconclusive", "base-only", "new-only"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

#: What a scenario's history says of it (``ooda history``): every run of its current
#: prompt (since its last change point) succeeded, some did and some did not, none did,
#: or too few runs to say.
HistoryState = Literal["stable-pass", "flaky", "stable-fail", "too-few-runs"]
HISTORY_STATES: tuple[HistoryState, ...] = get_args(HistoryState)
#: What a scenario's history says of a new side's runs: significantly below its rate
#: (broke), not significantly different (within noise), significantly above (better).
HistoryCall = Literal["broke", "within noise", "better"]
HISTORY_CALLS: tuple[HistoryCall, ...] = get_args(HistoryCall)

#: What ``ooda ablate`` concludes about one fragment: removing it costs success (keep),
#: removing it costs less than the margin (cut), or the runs cannot tell yet.
AblationVerdict = Literal["keep", "cut", "can't tell"]
ABLATION_VERDICTS: tuple[AblationVerdict, ...] = get_args(AblationVerdict)

#: What an agent loaded, by kind, in a run's fingerprint (the order reports list them):
#: its skills, slash commands, subagents, MCP servers, hooks, plugins, and instructions
#: files (``CLAUDE.md``, ``AGENTS.md``).
LoadedKind = Literal["skills", "commands", "subagents", "mcp", "hooks", "plugins", "instructions"]
LOADED_KINDS: tuple[LoadedKind, ...] = get_args(LoadedKind)
#: The fields of a run's fingerprint a comparison holds both sides to (``ooda compare
#: --allow-drift FIELD``): the agent, its version, the model the API reported, the hash
#: of its effective settings, the environment allow-list, and what it loaded, by kind.
FingerprintField = Literal[
    "agent",
    "version",
    "model",
    "settings",
    "env",
    "skills",
    "commands",
    "subagents",
    "mcp",
    "hooks",
    "plugins",
    "instructions",
]
FINGERPRINT_FIELDS: tuple[FingerprintField, ...] = get_args(FingerprintField)
#: Where an agent's loaded configuration came from: the user's home, the workspace (the
#: project), the machine (managed settings, a ``CLAUDE.md`` above the workspace), or
#: the command line (``--plugin-dir``).
LoadedScope = Literal["user", "project", "system", "command-line"]
LOADED_SCOPES: tuple[LoadedScope, ...] = get_args(LoadedScope)

#: A sandbox's network: the host's, none (loopback only), or a container engine's bridge.
SandboxNetwork = Literal["host", "none", "bridge"]
SANDBOX_NETWORKS: tuple[SandboxNetwork, ...] = get_args(SandboxNetwork)

#: The program behind the ``docker`` sandbox kind (the same flags work for both).
ContainerEngine = Literal["docker", "podman"]
CONTAINER_ENGINES: tuple[ContainerEngine, ...] = get_args(ContainerEngine)

#: Whether replays run a scenario's ``expect.commands`` (inside the configured sandbox)
#: or skip them (the default first).
ReplayCommands = Literal["run", "skip"]
REPLAY_COMMANDS: tuple[ReplayCommands, ...] = get_args(ReplayCommands)

#: The front end that decided a session's settings (``settings.decide``): which flags
#: its messages name.
Front = Literal["pytest", "ooda"]
FRONTS: tuple[Front, ...] = get_args(Front)

#: How a setting is given (``settings.Setting.kind``): one value, a flag without one,
#: repeatable values, or a flag whose value may be left out.
SettingKind = Literal["value", "flag", "list", "optional"]
SETTING_KINDS: tuple[SettingKind, ...] = get_args(SettingKind)
#: Why an iteration (and, when retries do not help, its run) is an infrastructure
#: ``error`` rather than the procedure's failure: the API refused (429), was overloaded
#: (529/503) or failed (5xx), the agent's credentials were missing or refused
#: (``auth``: 401/403, "Not logged in"), the connection failed, the agent command could not be
#: started or died before any output, the sandbox did not start, the pytest worker
#: running it crashed, the cluster's workers running it were lost
#: (``--ooda-executor``), its workspace could not be put back or cleaned, or the
#: scenario's ``setup:`` commands failed.
InfraErrorKind = Literal[
    "rate-limit",
    "overloaded",
    "auth",
    "server-error",
    "connection",
    "cannot-start",
    "agent-died",
    "sandbox",
    "worker-crashed",
    "worker-lost",
    "workspace",
    "setup",
]
INFRA_ERROR_KINDS: tuple[InfraErrorKind, ...] = get_args(InfraErrorKind)
#: What an infrastructure error rests on: the harness saw it itself (an HTTP status it
#: received, the API proxy's record of a failed upstream call, a signal that killed the
#: agent, a sandbox that did not start), or only the agent says so (its ``API Error:
#: 529`` line, its ``Not logged in``, its own silent non-zero exit).
Evidence = Literal["agent", "harness"]
EVIDENCE: tuple[Evidence, ...] = get_args(Evidence)
#: How an error that rests on the agent's own word counts (``retry:``'s
#: ``count_agent_reported_errors``): as the prompt's failure (the default: an agent
#: cannot take its own failures out of the rate by saying the API failed), or as the
#: infrastructure's error (retried, and left out of success rates).
AgentReportedCount = Literal["as_failures", "as_errors"]
AGENT_REPORTED_COUNTS: tuple[AgentReportedCount, ...] = get_args(AgentReportedCount)

#: Words accepted for a boolean in ini keys, environment variables and option values.
TRUE_WORDS: frozenset[str] = frozenset({"1", "true", "yes", "y", "on"})
FALSE_WORDS: frozenset[str] = frozenset({"0", "false", "no", "n", "off", ""})


def parse_bool(text: str) -> bool | None:
    """``True``/``False`` for a recognised word (case-insensitive), ``None`` otherwise."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


__all__ = [
    "ABLATION_VERDICTS",
    "ACTIVATION_KINDS",
    "AGENT_REPORTED_COUNTS",
    "CONTAINER_ENGINES",
    "DRIFT_MODES",
    "EVIDENCE",
    "EXIT_CODES",
    "FAILURE_SIGNAL",
    "FALSE_WORDS",
    "FILE_CHANGES",
    "FINGERPRINT_FIELDS",
    "FIRED",
    "FRONTS",
    "HISTORY_CALLS",
    "HISTORY_STATES",
    "INFRA_ERROR_KINDS",
    "ITERATION_MODES",
    "JUDGE_CACHE_SCOPES",
    "JUDGE_INPUTS",
    "JUDGE_PASS_RULES",
    "JUDGE_VERDICTS",
    "LOADED_KINDS",
    "LOADED_SCOPES",
    "LOG_LEVELS",
    "LOG_TIMESTAMP_FORMATS",
    "OUTCOME_KINDS",
    "PHASES",
    "PROMPT_FORMATS",
    "PROMPT_PARTS",
    "RECORD_MODES",
    "REPLAY_COMMANDS",
    "RUN_OUTCOMES",
    "SANDBOX_NETWORKS",
    "SETTING_KINDS",
    "SEVERITIES",
    "SEVERITY_LEVELS",
    "SIGNALS",
    "STATUSES",
    "SUCCESS_SIGNAL",
    "TIERS",
    "TRAJECTORY_MATCHES",
    "TRUE_WORDS",
    "VERDICTS",
    "AblationVerdict",
    "ActivationKind",
    "AgentReportedCount",
    "AiOutput",
    "ContainerEngine",
    "DriftMode",
    "Evidence",
    "FileChange",
    "FingerprintField",
    "Fired",
    "Front",
    "HistoryCall",
    "HistoryState",
    "InfraErrorKind",
    "IterationMode",
    "JudgeCacheScope",
    "JudgeInput",
    "JudgePassRule",
    "JudgeVerdict",
    "LoadedKind",
    "LoadedScope",
    "LogLevel",
    "LogTimestampFormat",
    "OutcomeKind",
    "Phase",
    "PromptFormat",
    "PromptPart",
    "RecordMode",
    "ReplayCommands",
    "RunOutcome",
    "SandboxNetwork",
    "SettingKind",
    "Severity",
    "SeverityLevel",
    "Signal",
    "Status",
    "Tier",
    "TrajectoryMatch",
    "Verdict",
    "parse_bool",
]

#: What a procedure config or scenario file's name ends with: they are YAML.
SCENARIO_SUFFIXES = (".yml", ".yaml")

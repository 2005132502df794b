"""The table: every setting a session or an ``ooda run`` decides, one row each."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda import _types
from pytest_ooda.settings import checks
from pytest_ooda.settings.session import Given, SessionSettings, Setting

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from pytest_ooda._types import (
        AiOutput,
        ApiRecord,
        DriftMode,
        Front,
        PromptFormat,
        RecordMode,
        ReplayCommands,
        ReplayKind,
    )
    from pytest_ooda.variants import Variant


CONFIG: Setting[Path | None] = Setting(
    "config",
    "workspace config file for fixtures and live runs, collected too (default: ./ooda-config.yml)",
    checks.config_file,
    metavar="PATH",
    pytest="--ooda-config",
    ooda=("--config", "-c"),
    ooda_help="config file to use instead of ./ooda-config.yml (or ./rooda-config.yml "
    "when there is none); any file with the same schema",
    ini="ooda_config",
    path=True,
)
BUILTIN: Setting[bool] = Setting(
    "builtin",
    "also collect the packaged built-in procedures",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-builtin",
    ini="ooda_builtin",
)
AI_CMD: Setting[str | None] = Setting(
    "ai_cmd",
    "AI command for live runs and ooda_runner",
    checks.ai_cmd,
    metavar="CMD",
    pytest="--ooda-ai-cmd",
    ooda=("--ai-cmd",),
    ooda_help="AI command line (split like a shell would)",
    group="agent",
    ini="ooda_ai_cmd",
    run="ai_cmd",
)
AI_CMD_ALIAS: Setting[str | None] = Setting(
    "ai_cmd_alias",
    "AI command alias for live runs and ooda_runner",
    checks.text,
    metavar="NAME",
    pytest="--ooda-ai-cmd-alias",
    ooda=("--ai-cmd-alias",),
    ooda_help="AI command alias (a built-in agent's, or one of ai_cmd_aliases)",
    group="agent",
    ini="ooda_ai_cmd_alias",
    run="ai_cmd_alias",
)
AI_OUTPUT: Setting[AiOutput | None] = Setting(
    "ai_output",
    "how the AI command's output is read for live runs and ooda_runner (default: as "
    "the command's own flags say, else text): text or an agent's format (`ooda help agents`)",
    checks.ai_output,
    metavar="FORMAT",
    pytest="--ooda-ai-output",
    ooda=("--ai-output",),
    ini="ooda_ai_output",
    run="ai_output",
)
MAX_ITERATIONS: Setting[int | None] = Setting(
    "max_iterations",
    "iteration limit",
    checks.positive,
    metavar="N",
    ooda=("--max-iterations", "-n"),
    group="limit",
    run="max_iterations",
)
UNLIMITED: Setting[bool] = Setting(
    "unlimited",
    "no iteration limit",
    checks.same,
    kind="flag",
    default=False,
    ooda=("--unlimited",),
    group="limit",
    run="unlimited",
)
CONTEXT: Setting[tuple[str, ...]] = Setting(
    "context",
    "context text, or a file whose content is included (repeatable)",
    checks.context,
    kind="list",
    default=(),
    metavar="X",
    ooda=("--context", "-x"),
)
MAX_COST: Setting[float | None] = Setting(
    "max_cost",
    "budget per live run in US dollars: a run stops (aborted) after the iteration "
    "that reaches it; applies with the scenario's and the config's, the smallest wins",
    checks.amount,
    metavar="USD",
    pytest="--ooda-max-cost",
    ooda=("--max-cost",),
    ooda_help="stop (aborted) after the iteration that brings the run's cost to USD",
    ini="ooda_max_cost",
    run="max_cost",
)
MAX_TOKENS: Setting[int | None] = Setting(
    "max_tokens",
    "budget per live run in tokens (input, output and cache): as --ooda-max-cost",
    checks.positive,
    metavar="N",
    pytest="--ooda-max-tokens",
    ooda=("--max-tokens",),
    ooda_help="stop (aborted) after the iteration that brings the run's tokens to N",
    ini="ooda_max_tokens",
    run="max_tokens",
)
BUDGET: Setting[float | None] = Setting(
    "budget",
    "budget of the whole session in US dollars: no live run starts once the next, at "
    "the mean cost of those finished, would pass it; what it leaves unrun is reported "
    "`not run: budget spent` and makes its scenarios' gates and comparisons inconclusive, "
    "never failed",
    checks.amount,
    metavar="USD",
    pytest="--ooda-budget",
    ooda=("--budget",),
    ooda_help="budget of the session in US dollars: no run starts once the next would pass "
    "it (ooda run's one run stops at the iteration that reaches it, as --max-cost)",
    ini="ooda_budget",
    env="OODA_BUDGET",
)
BUDGET_TOKENS: Setting[int | None] = Setting(
    "budget_tokens",
    "budget of the whole session in tokens (input, output and cache): as --ooda-budget",
    checks.positive,
    metavar="N",
    pytest="--ooda-budget-tokens",
    ooda=("--budget-tokens",),
    ooda_help="the same in tokens (ooda run's one run: as --max-tokens)",
    ini="ooda_budget_tokens",
    env="OODA_BUDGET_TOKENS",
)
RECORD_MODE: Setting[RecordMode] = Setting(
    "record_mode",
    "record live runs into scenario files: none (default), once (only scenarios "
    "with no iterations), new (also drifted ones), all; once and new record only a "
    "run that met every per-run expectation (not an infrastructure error, a status "
    "other than expect.status, or a missed file, tool, command or judge check)",
    checks.same,
    choices=_types.RECORD_MODES,
    default=_types.RECORD_MODES[0],
    pytest="--ooda-record-mode",
    ini="ooda_record_mode",
)
RECORD_FAILURES: Setting[bool] = Setting(
    "record_failures",
    "with --ooda-record-mode=once or new, record a failed run too (an infrastructure "
    "error, a status other than the scenario's expect.status, or any other per-run "
    "expectation missed)",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-record-failures",
    ini="ooda_record_failures",
)
RECORD_API: Setting[ApiRecord | None] = Setting(
    "record_api",
    "live runs record their model calls (the agent's API traffic, through a loopback "
    "proxy) into <scenario>.cassette.jsonl: all (the flag alone) or new (keep the "
    "cassette's, add what it lacks); `ooda help agent-replay`",
    checks.same,
    kind="optional",
    choices=_types.API_RECORDS,
    const=_types.API_RECORDS[0],
    pytest="--ooda-record-api",
    ini="ooda_record_api",
)
REPLAY: Setting[ReplayKind | None] = Setting(
    "replay",
    "how scenario items replay: loop (the recorded iterations stand in for the agent) "
    "or agent (the real agent, its model calls answered from the scenario's cassette, "
    "for every scenario that has one); default: each scenario's replay:, else loop",
    checks.same,
    choices=_types.REPLAY_KINDS,
    pytest="--ooda-replay",
    ini="ooda_replay",
)
DRIFT: Setting[DriftMode] = Setting(
    "drift",
    "when a scenario's recorded prompt differs from the current one: fail "
    "(default), warn or ignore",
    checks.same,
    choices=_types.DRIFT_MODES,
    default=_types.DRIFT_MODES[0],
    pytest="--ooda-drift",
    ini="ooda_drift",
)
REPEAT: Setting[int | None] = Setting(
    "repeat",
    "run each live scenario N times, each run its own item live[name#k] in a fresh "
    "workspace (on the command line it beats a scenario's repeat:, which beats the "
    "ini key)",
    checks.repeat,
    metavar="N",
    pytest="--ooda-repeat",
    ini="ooda_repeat",
)
RESULTS: Setting[Path | None] = Setting(
    "results",
    "directory of the results log of live runs: a <session>.jsonl file per session, "
    "one line per run (default: .ooda/results under the rootdir)",
    checks.results,
    metavar="DIR",
    pytest="--ooda-results",
    ini="ooda_results",
    path=True,
)
SHARD: Setting[tuple[int, int] | None] = Setting(
    "shard",
    "run only share K of N of the live items (a stable split by item id), e.g. 2/4 "
    "on the second of four CI machines",
    checks.shard,
    metavar="K/N",
    pytest="--ooda-shard",
)
RETRIES: Setting[int | None] = Setting(
    "retries",
    "tries of an iteration after an infrastructure error (rate limit, overload, 5xx, "
    "dropped connection, agent dying before any output); beats every retry: setting "
    "(default: the config's, else 2; 0 turns retrying off)",
    checks.count,
    metavar="N",
    pytest="--ooda-retries",
    ini="ooda_retries",
    run="retries",
)
MAX_CONCURRENT: Setting[int | None] = Setting(
    "max_concurrent",
    "at most N live runs at once per agent command or API, across all xdist workers "
    "(the others wait; the progress line shows how long)",
    checks.positive,
    metavar="N",
    pytest="--ooda-max-concurrent",
    ini="ooda_max_concurrent",
)
EXECUTOR: Setting[str] = Setting(
    "executor",
    "where live runs are made: local (default: this session, and its -n workers) or "
    "ENGINE:ADDRESS, a cluster this session controls: dask:tcp://HOST:8786 (what "
    "distributed.Client accepts), ray:auto, ray:HOST:6379 or ray:ray://HOST:10001 "
    "(what ray.init accepts), or an installed engine's; also OODA_EXECUTOR "
    "(`ooda help scale-out`)",
    checks.executor,
    default="local",
    metavar="ENGINE:ADDRESS",
    pytest="--ooda-executor",
    ini="ooda_executor",
    env="OODA_EXECUTOR",
)
SHIP: Setting[tuple[str, ...]] = Setting(
    "ship",
    "with --ooda-executor: ship this file to the cluster's workers although its name "
    "says it holds a secret (.env, a key): untracked ones are held back otherwise; "
    "relative to the rootdir (repeatable)",
    checks.ship,
    kind="list",
    default=(),
    metavar="PATH",
    pytest="--ooda-ship",
    ini="ooda_ship",
)
RESUME: Setting[bool] = Setting(
    "resume",
    "resume an interrupted measurement: runs the results directory already holds "
    "(same scenario, prompt and run number, not an error) are not run again",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-resume",
    ini="ooda_resume",
)
CHANGED: Setting[str | None] = Setting(
    "changed",
    "run live only the scenarios a change since this git revision touched (their prompts "
    "or workspace differ: `ooda changed REF` prints the selection); the others replay",
    checks.text,
    metavar="REF",
    pytest="--ooda-changed",
)
STOP_EARLY: Setting[bool] = Setting(
    "stop_early",
    "skip a gated scenario's remaining runs once a sequential test has settled its "
    "success_rate gate (as stop_early: true on every gate)",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-stop-early",
    ini="ooda_stop_early",
)
FRAGMENT_COVERAGE: Setting[bool] = Setting(
    "fragment_coverage",
    "report which fragment files and template branches the session composed",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-fragment-coverage",
    ini="ooda_fragment_coverage",
)
LINT_SEVERITY: Setting[tuple[str, ...]] = Setting(
    "lint_severity",
    "override a lint rule's severity for the config items, RULE=LEVEL with LEVEL "
    "error, warning, info or off (repeatable; beats the config's lint: section)",
    checks.lint_severity,
    kind="list",
    default=(),
    metavar="RULE=LEVEL",
    pytest="--ooda-lint-severity",
    ini="ooda_lint_severity",
)
PROMPT_FORMAT: Setting[PromptFormat | None] = Setting(
    "prompt_format",
    "prompt layout of prompt items, scenarios and live runs: ooda (ours), rooda "
    "(rooda's, byte for byte) or raw (the fragments' text alone); default: each "
    "procedure's prompt_format",
    checks.same,
    choices=_types.PROMPT_FORMATS,
    pytest="--ooda-prompt-format",
    ooda=("--prompt-format",),
    ooda_help="prompt layout: ooda (ours), rooda (rooda's, byte for byte) or raw (the "
    "fragments' text alone); default: the procedure's prompt_format, else "
    "loop.prompt_format, else ooda",
    ini="ooda_prompt_format",
    config="prompt_format",
)
SANDBOX: Setting[str | None] = Setting(
    "sandbox",
    "where live runs (the agent and the verification commands) and replayed "
    "verification commands execute: none, bwrap, docker, or an installed plugin's "
    "kind; beats the config's and scenarios' sandbox: (their options for the same "
    "kind are kept; `ooda help sandbox`)",
    checks.sandbox,
    metavar="KIND",
    pytest="--ooda-sandbox",
    ooda=("--sandbox",),
    ooda_help="run the agent (and verification commands) in a sandbox: none, bwrap, "
    "docker or a plugin's kind; beats sandbox: in the config and scenario "
    "(`ooda help sandbox`)",
    ini="ooda_sandbox",
    run="sandbox",
)
REPLAY_COMMANDS: Setting[ReplayCommands] = Setting(
    "replay_commands",
    "whether replays (plain pytest) run scenarios' expect.commands: run (default; "
    "inside the configured sandbox) or skip",
    checks.same,
    choices=_types.REPLAY_COMMANDS,
    default=_types.REPLAY_COMMANDS[0],
    pytest="--ooda-replay-commands",
    ini="ooda_replay_commands",
)
VARIANT: Setting[tuple[Variant, ...]] = Setting(
    "variant",
    "also run every live scenario under a named variant NAME:KEY=VALUE,... with keys "
    "ai_cmd, ai_cmd_alias, model, prompt_format, ai_output, sandbox, param.NAME, "
    "fragment.OLD (=NEW path); items live[scenario@NAME#k] (repeatable)",
    checks.variants,
    kind="list",
    default=(),
    metavar="NAME:KEY=VALUE,...",
    pytest="--ooda-variant",
    ini="ooda_variant",
)
REGRADE: Setting[bool] = Setting(
    "regrade",
    "scenario replays ask expect.judge's judge again instead of using the recorded "
    "verdicts, and report the verdicts that flipped",
    checks.same,
    kind="flag",
    default=False,
    pytest="--ooda-regrade",
)
PROCEDURE_FILES: Setting[tuple[str, ...]] = Setting(
    "procedure_files",
    "globs (relative to the rootdir) of procedure config files to collect",
    checks.globs,
    kind="list",
    default=("ooda-config.yml", "rooda-config.yml", "procedures/*.yml", "procedures/*.yaml"),
    ini="ooda_procedure_files",
)
SCENARIO_DIR: Setting[Path | None] = Setting(
    "scenario_dir",
    "root of scenario files, <root>/<procedure>/<name>.yml "
    "(default: scenarios/ next to each config file)",
    checks.scenario_dir,
    ini="ooda_scenario_dir",
    path=True,
)
MATERIAL_DIRS: Setting[tuple[Path, ...]] = Setting(
    "claude_dirs",
    "agent material directories (a plugin, a project's agent directory), relative to the "
    "ini file, collected with it for a project without a procedure config",
    checks.directories,
    kind="list",
    default=(),
    ini="ooda_claude_dirs",
    path=True,
)

#: Every setting, declared once, in the order ``--help`` lists them.
SETTINGS: tuple[Setting[Any], ...] = (
    CONFIG,
    BUILTIN,
    AI_CMD,
    AI_CMD_ALIAS,
    AI_OUTPUT,
    MAX_ITERATIONS,
    UNLIMITED,
    CONTEXT,
    MAX_COST,
    MAX_TOKENS,
    BUDGET,
    BUDGET_TOKENS,
    RECORD_MODE,
    RECORD_FAILURES,
    RECORD_API,
    REPLAY,
    DRIFT,
    REPEAT,
    RESULTS,
    SHARD,
    RETRIES,
    MAX_CONCURRENT,
    EXECUTOR,
    SHIP,
    RESUME,
    CHANGED,
    STOP_EARLY,
    FRAGMENT_COVERAGE,
    LINT_SEVERITY,
    PROMPT_FORMAT,
    SANDBOX,
    REPLAY_COMMANDS,
    VARIANT,
    REGRADE,
    PROCEDURE_FILES,
    SCENARIO_DIR,
    MATERIAL_DIRS,
)


def decide(
    given: Mapping[str, Given],
    *,
    root: Path,
    front: Front,
    table: Sequence[Setting[Any]] = SETTINGS,
    typed: Mapping[str, Given] | None = None,
    show_ai_output: bool | None = None,
) -> SessionSettings:
    """The settings of a session from the values its front end found (``given``, by row
    name), each checked by its row; ``typed`` are values the front end decided itself
    (``ooda run --record``'s record mode), taken as they are. A mistake is a
    ``UsageError`` naming where the value was given."""
    unknown = sorted((set(given) | set(typed or {})) - {row.name for row in table})
    if unknown:
        raise TypeError(f"no such setting: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    tiers: dict[str, str] = {}
    labels: dict[str, str] = {}
    run: dict[str, str] = {}
    config: dict[str, str] = {}
    for row in table:
        labels[row.name] = row.flag(front)
        found = (typed or {}).get(row.name)
        if found is not None:
            values[row.name] = found.value
        elif row.name in given:
            found = given[row.name]
            values[row.name] = row.decide(found)
        if found is None or values[row.name] is None:
            # Not given, or given empty (``ooda_sandbox =``): the row's default.
            values[row.name] = row.default
            continue
        tiers[row.name] = found.tier
        labels[row.name] = found.label
        if row.run is not None:
            run[row.run] = row.name
        if row.config is not None:
            config[row.config] = row.name
    return SessionSettings(
        root=root,
        front=front,
        values=MappingProxyType(values),
        tiers=MappingProxyType(tiers),
        labels=MappingProxyType(labels),
        run=MappingProxyType(run),
        config=MappingProxyType(config),
        show_ai_output=show_ai_output,
    )


def session_settings(root: Path, *, front: Front = "pytest", **values: Any) -> SessionSettings:
    """Settings made in Python (a library caller, a test): values already typed, by row
    name, each as if given on the command line."""
    rows = {row.name: row for row in SETTINGS}
    typed = {
        name: Given(value, "cli", rows[name].flag(front) if name in rows else name)
        for name, value in values.items()
    }
    return decide({}, root=root, front=front, typed=typed)

"""From option to agent: every setting a live run takes, set where a user sets it (a
pytest option or ini key, an ``ooda run`` flag, the environment, the config file, a
scenario, a variant), has the value at the agent that the run's plan decided.

One table, both surfaces: a ``pytest -m live`` session (in process, with pytester) and
``ooda run``. The agent is a real subprocess that prints what it received — its
arguments, its working directory, its prompt, whether it ran in a sandbox — and the
plan is the one the run was given (:func:`pytest_ooda.live.run_live`, watched). For
settings the loop applies rather than the agent (budgets, the output format, the
streamed output), the value is read where the loop applied it; for a setting that acts
where no run is planned (collection, replays, the session), where it acted.

Every row of the settings table (:data:`pytest_ooda.settings.SETTINGS`) has a case on
each front end it has; a setting both have builds the same run from both (a row both
have and no case of builds fails the coverage test); and a setting added to the table as
one row reaches the plan from its pytest flag, ini key and variable and ooda run's flag.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest
from ooda_project import TEMPLATED_CONFIG, TEMPLATED_DECIDE_MD, greet_project

from pytest_ooda import live, settings
from pytest_ooda._types import PROMPT_FORMATS
from pytest_ooda.compose import assemble_prompt
from pytest_ooda.settings import SETTINGS, Setting as Row, checks

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ooda_project import Project

    from pytest_ooda.live import LiveRun, RunPlan

# Prints what it received, as JSON (inside a Claude Code json report with --claude-json);
# --count=FILE adds a line per start, --die is killed before a word (a signal: an
# infrastructure error the harness sees, retried), --hang sleeps past any iteration
# timeout, --succeed-at=N says SUCCESS on the Nth start (with --count).
AGENT = """\
import json, os, sys, time
prompt = sys.stdin.read()
args = sys.argv[1:]
starts = 0
for arg in args:
    if arg.startswith("--count="):
        with open(arg.partition("=")[2], "a") as counter:
            counter.write("started\\n")
        with open(arg.partition("=")[2]) as counter:
            starts = len(counter.read().splitlines())
if "--die" in args:
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
if "--hang" in args:
    time.sleep(30)
dump = json.dumps({
    "argv": args,
    "cwd": os.getcwd(),
    "prompt": prompt,
    "sandboxed": os.environ.get("OODA_SANDBOXED"),
})
if "--claude-json" in args:
    print(json.dumps({
        "type": "result", "subtype": "success", "is_error": False, "result": dump,
        "usage": {"input_tokens": 7, "output_tokens": 3}, "total_cost_usd": 0.001,
    }))
else:
    print(dump)
if f"--succeed-at={starts}" in args:
    print("<promise>SUCCESS</promise>")
"""

# The agent never says SUCCESS: one iteration unless a row sets more. A row's config
# lines go under loop:.
CONFIG = TEMPLATED_CONFIG + (
    "ai_cmd_aliases:\n  dumper: '{agent} via-alias'\n"
    "loop:\n  default_max_iterations: 1\n  retry: {delay: 0.01, max_delay: 0.01}\n"
)


# A scenario whose one recorded iteration succeeded, for the settings replays read.
RECORDED = (
    "expect:\n  status: success\n"
    "iterations:\n  - output: 'hello <promise>SUCCESS</promise>'\n    exit_code: 0\n"
)

# The recorded iteration's prompt as some other prompt hashed; a command that fails.
DRIFTED = "    prompt_sha256: '" + "0" * 64 + "'\n"
FAILING = "  commands: [{run: 'false'}]\n"

# An agent-command judge: says pass, and leaves a file saying it was asked.
JUDGE_AGENT = """\
import json, pathlib, sys
sys.stdin.read()
pathlib.Path(__file__).with_name("judge-asked").write_text("asked")
print(json.dumps({"verdict": "pass", "reason": "It says hello."}))
"""
JUDGE = (
    "  judge:\n    rubric: It says hello.\n    inputs: [output]\n"
    "    judge: {ai_cmd: '" + sys.executable + " {root}/judge.py'}\n"
)


@dataclass(frozen=True)
class Run:
    """One run as the test saw it: the plans it was given and what they produced, the
    agent's reports, what reached the terminal, and the pytest session's result."""

    runs: list[tuple[RunPlan, LiveRun]]
    dumps: list[dict[str, Any]]
    stdout: str
    counted: int
    #: The project's directory.
    root: Path
    result: pytest.RunResult | None = None

    @property
    def plan(self) -> RunPlan:
        return self.runs[0][0]

    @property
    def done(self) -> LiveRun:
        return self.runs[0][1]

    def outcomes(self) -> dict[str, int]:
        assert self.result is not None
        return self.result.parseoutcomes()


@dataclass(frozen=True)
class Setting:
    """A row of the test's table: the settings table's row it covers, how each surface
    sets it, the value expected, and where the plan and the agent (or the loop, or the
    session) hold it."""

    name: str
    expected: Any
    #: Where the plan holds it; ``None`` for a setting that acts where no run is planned
    #: (collection, replays, the session itself): then ``agent`` alone is compared.
    plan: Callable[[RunPlan], Any] | None
    agent: Callable[[Run], Any]
    #: Arguments (``{agent}`` and ``{count}`` filled in) per surface; a surface without
    #: the setting is not a row of it.
    pytest: tuple[str, ...] | None = None
    ooda: tuple[str, ...] | None = None
    #: Extra scenario lines, extra config, the environment, an ini file, other files.
    scenario: str = ""
    config: str = ""
    env: tuple[tuple[str, str], ...] = ()
    ini: str = ""
    files: tuple[tuple[str, str], ...] = ()
    #: Whether the surface's own agent flag is given too (off for agent settings).
    agent_flag: bool = True
    #: ``pytest -m live`` (a live run); off: a plain session (collection, replays).
    live: bool = True
    #: Where the config and the scenarios are written.
    config_file: str = "ooda-config.yml"
    scenario_dir: str = "scenarios"
    #: A first pytest session before the one measured (``--ooda-resume``'s earlier run).
    before: tuple[str, ...] | None = None

    @property
    def row(self) -> str:
        """The settings table's row this covers (``ai_cmd (ini)`` covers ``ai_cmd``)."""
        return self.name.split(" ")[0]


def _recorded(run: Run) -> bool:
    return run.done.recording is not None


def _usage_error(run: Run) -> str:
    assert run.result is not None
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    return run.result.stderr.lines[0].removeprefix("ERROR: ")


def _results_dir(run: Run) -> Any:
    logs = sorted(run.plan.root.rglob("*.jsonl"))
    return logs[0].parent if logs else None


def _layout(run: Run) -> str:
    """The prompt layout the agent's prompt was composed in."""
    plan, prompt = run.plan, run.dumps[0]["prompt"]
    for layout in PROMPT_FORMATS:
        procedure = replace(run.plan.procedure, prompt_format=layout)
        if _prompt(replace(plan, procedure=procedure)) == prompt:
            return layout
    return "unknown"


def _prompt(plan: RunPlan) -> str:
    """Iteration 1's prompt as the plan composes it."""
    return assemble_prompt(
        plan.procedure,
        iteration=1,
        max_iterations=plan.settings.max_iterations,
        context=plan.context,
    )


CASES_TABLE = (
    Setting(
        "ai_cmd",
        ["one", "two words"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        pytest=("--ooda-ai-cmd={agent} one 'two words'",),
        ooda=("--ai-cmd={agent} one 'two words'",),
        agent_flag=False,
    ),
    Setting(
        "ai_cmd (ini)",
        ["from-ini"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        ini="[pytest]\nooda_ai_cmd = {agent} from-ini\n",
        pytest=(),
        agent_flag=False,
    ),
    Setting(
        "ai_cmd (OODA_LOOP_AI_CMD)",
        ["from-env"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        env=(("OODA_LOOP_AI_CMD", "{agent} from-env"),),
        pytest=(),
        ooda=(),
        agent_flag=False,
    ),
    Setting(
        "ai_cmd (loop.ai_cmd)",
        ["from-config"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        config="  ai_cmd: '{agent} from-config'\n",
        pytest=(),
        ooda=(),
        agent_flag=False,
    ),
    Setting(
        "ai_cmd_alias",
        ["via-alias"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        pytest=("--ooda-ai-cmd-alias=dumper",),
        ooda=("--ai-cmd-alias=dumper",),
        agent_flag=False,
    ),
    Setting(
        "ai_output",
        "claude-json",
        plan=lambda plan: plan.settings.ai_output,
        # Read as Claude Code's report: the usage it states reached the loop.
        agent=lambda run: "claude-json" if run.done.result.usage is not None else "text",
        pytest=("--ooda-ai-cmd={agent} --claude-json", "--ooda-ai-output=claude-json"),
        ooda=("--ai-cmd={agent} --claude-json", "--ai-output=claude-json"),
        agent_flag=False,
    ),
    Setting(
        "prompt_format",
        "rooda",
        plan=lambda plan: plan.procedure.prompt_format,
        agent=_layout,
        pytest=("--ooda-prompt-format=rooda",),
        ooda=("--prompt-format=rooda",),
    ),
    Setting(
        "max_iterations",
        2,
        plan=lambda plan: plan.settings.max_iterations,
        agent=lambda run: len(run.dumps),
        scenario="max_iterations: 2\n",
        pytest=(),
        ooda=("--max-iterations=2",),
    ),
    Setting(
        "context",
        "Mind the door.",
        plan=lambda plan: plan.context[0],
        agent=lambda run: "Mind the door." if "Mind the door." in run.dumps[0]["prompt"] else "",
        scenario="context: Mind the door.\n",
        pytest=(),
        ooda=("--context=Mind the door.",),
    ),
    Setting(
        "max_cost",
        0.5,
        plan=lambda plan: plan.settings.max_cost,
        agent=lambda run: run.done.result.max_cost,
        pytest=("--ooda-max-cost=0.5",),
        ooda=("--max-cost=0.5",),
    ),
    Setting(
        "max_tokens",
        900,
        plan=lambda plan: plan.settings.max_tokens,
        agent=lambda run: run.done.result.max_tokens,
        pytest=("--ooda-max-tokens=900",),
        ooda=("--max-tokens=900",),
    ),
    Setting(
        "changed",
        "--ooda-changed: git rev-parse: fatal: not a git repository (or any of the parent "
        "directories): .git",
        plan=None,
        # Where it acts, the revision is read from git: this project is no repository
        # (tests/integration/plugin/test_option_ooda_changed.py runs the selection).
        agent=_usage_error,
        pytest=("--ooda-changed=main",),
    ),
    Setting(
        "budget (the session's)",
        ({"skipped": 2}, 1),
        plan=None,
        # $0.001 a run: a second would pass $0.0015, so one of the three runs is made.
        agent=lambda run: (
            {key: n for key, n in run.outcomes().items() if key == "skipped"},
            len(run.runs),
        ),
        scenario="repeat: 3\n",
        pytest=(
            "--ooda-ai-cmd={agent} --claude-json",
            "--ooda-ai-output=claude-json",
            "--ooda-budget=0.0015",
        ),
        agent_flag=False,
    ),
    Setting(
        "budget_tokens (ini)",
        ({"skipped": 2}, 1),
        plan=None,
        # 10 tokens a run: a second would pass 15.
        agent=lambda run: (
            {key: n for key, n in run.outcomes().items() if key == "skipped"},
            len(run.runs),
        ),
        scenario="repeat: 3\n",
        ini="[pytest]\nooda_budget_tokens = 15\n",
        pytest=("--ooda-ai-cmd={agent} --claude-json", "--ooda-ai-output=claude-json"),
        agent_flag=False,
    ),
    Setting(
        "budget (ooda run's one run)",
        0.5,
        # ooda run makes one run: its budget holds it as --max-cost does.
        plan=lambda plan: plan.settings.max_cost,
        agent=lambda run: run.done.result.max_cost,
        ooda=("--budget=0.5", "--max-cost=2"),
    ),
    Setting(
        "budget (ooda run's, from the environment)",
        0.25,
        # OODA_BUDGET gives ooda run's --budget as it gives the session's --ooda-budget.
        plan=lambda plan: plan.settings.max_cost,
        agent=lambda run: run.done.result.max_cost,
        ooda=("--max-cost=2",),
        env=(("OODA_BUDGET", "0.25"),),
    ),
    Setting(
        "budget_tokens (ooda run's one run)",
        900,
        plan=lambda plan: plan.settings.max_tokens,
        agent=lambda run: run.done.result.max_tokens,
        ooda=("--budget-tokens=900",),
    ),
    Setting(
        "show_ai_output",
        True,
        plan=lambda plan: plan.settings.show_ai_output,
        agent=lambda run: '"argv": [' in run.stdout,
        pytest=("-s",),
        ooda=("--verbose",),
    ),
    Setting(
        "unlimited",
        None,
        plan=lambda plan: plan.settings.max_iterations,
        # The config says 1; unlimited, the loop went on until the agent said SUCCESS.
        agent=lambda run: run.done.result.max_iterations if len(run.dumps) == 3 else "stopped",
        ooda=("--ai-cmd={agent} --count={count} --succeed-at=3", "--unlimited"),
        agent_flag=False,
    ),
    Setting(
        "iteration_timeout",
        1,
        plan=lambda plan: plan.settings.iteration_timeout,
        # The agent hangs: the loop stopped it when the plan's timeout ran out.
        agent=lambda run: next(
            (round(r.duration) for r in run.done.result.records if r.timed_out), "not timed out"
        ),
        config="  iteration_timeout: 1\n",
        pytest=("--ooda-ai-cmd={agent} --hang",),
        ooda=("--ai-cmd={agent} --hang",),
        agent_flag=False,
    ),
    Setting(
        "max_output_buffer",
        64,
        plan=lambda plan: plan.settings.max_output_buffer,
        # The agent printed more: the loop kept the plan's number of bytes, the tail.
        agent=lambda run: next(
            (len(r.output.encode()) for r in run.done.result.records if r.truncated), "whole"
        ),
        config="  max_output_buffer: 64\n",
        pytest=(),
        ooda=(),
    ),
    Setting(
        "failure_threshold",
        2,
        plan=lambda plan: plan.settings.failure_threshold,
        agent=lambda run: run.done.result.failure_threshold,
        env=(("OODA_LOOP_FAILURE_THRESHOLD", "2"),),
        pytest=(),
        ooda=(),
    ),
    Setting(
        "failure_threshold (scenario)",
        4,
        plan=lambda plan: plan.settings.failure_threshold,
        agent=lambda run: run.done.result.failure_threshold,
        scenario="failure_threshold: 4\n",
        pytest=(),
    ),
    Setting(
        "retries",
        1,
        plan=lambda plan: plan.settings.retry.attempts,
        agent=lambda run: run.counted - 1,
        pytest=("--ooda-ai-cmd={agent} --die --count={count}", "--ooda-retries=1"),
        agent_flag=False,
    ),
    Setting(
        "variant",
        "the door",
        plan=lambda plan: plan.variant.parameters["target"] if plan.variant else None,
        agent=lambda run: re.findall(r"starting with (.+?)\.", run.dumps[0]["prompt"])[0],
        pytest=("--ooda-variant=v:param.target=the door",),
    ),
    Setting(
        "sandbox",
        "bwrap",
        plan=lambda plan: plan.settings.sandbox.kind if plan.settings.sandbox else "none",
        agent=lambda run: run.dumps[0]["sandboxed"] or "none",
        # Inside, the homes and /tmp are the sandbox's own: the system's Python runs the
        # agent from the workspace (the scenario's copy, or ooda run's directory).
        pytest=("--ooda-sandbox=bwrap", "--ooda-ai-cmd=/usr/bin/python3 agent.py"),
        ooda=("--sandbox=bwrap", "--ai-cmd=/usr/bin/python3 agent.py"),
        scenario="workspace: room\n",
        agent_flag=False,
    ),
    # -- the rest of the settings table: where each acts, from each surface it has
    Setting(
        "config",
        ["from-other"],
        plan=lambda plan: list(plan.settings.ai_cmd or ())[2:],
        agent=lambda run: run.dumps[0]["argv"],
        config="  ai_cmd: '{agent} from-other'\n",
        config_file="other.yml",
        pytest=("--ooda-config=other.yml",),
        ooda=("--config=other.yml",),
        agent_flag=False,
    ),
    Setting(
        "builtin",
        2,
        plan=None,
        # The packaged built-ins were collected beside the project's file.
        agent=lambda run: int(re.findall(r"in (\d+) config files?", run.stdout)[0]),
        pytest=("--ooda-builtin", "--collect-only"),
        live=False,
    ),
    Setting(
        "drift",
        ("passed", True),
        plan=None,
        agent=lambda run: (next(iter(run.outcomes())), "DriftWarning" in run.stdout),
        scenario=RECORDED + DRIFTED,
        pytest=("-k", "scenario", "--ooda-drift=warn"),
        live=False,
    ),
    Setting(
        "fragment_coverage",
        True,
        plan=None,
        agent=lambda run: "ooda fragment coverage" in run.stdout,
        pytest=("-k", "prompt", "--ooda-fragment-coverage"),
        live=False,
    ),
    Setting(
        "lint_severity",
        {"failed": 1},
        plan=None,
        # Parameters given to a fragment that is no template: a warning made an error.
        agent=lambda run: {key: n for key, n in run.outcomes().items() if key == "failed"},
        files=(("prompts/decide.md", "Decide whom to greet first.\n"),),
        pytest=(
            "-k",
            "config and not prompt and not scenario and not live",
            "--ooda-lint-severity=OODA203=error",
        ),
        live=False,
    ),
    Setting(
        "procedure_files",
        "greet.yaml",
        plan=lambda plan: plan.procedure.location.file.name,
        agent=lambda run: (
            run.plan.config.procedures["greet"].location.file.name if run.dumps else "not run"
        ),
        ini="[pytest]\nooda_procedure_files = *.yaml\n",
        config_file="greet.yaml",
        pytest=(),
    ),
    Setting(
        "scenario_dir",
        "qa",
        plan=lambda plan: plan.scenario.path.parts[-3],
        agent=lambda run: "qa" if run.dumps else "not run",
        ini="[pytest]\nooda_scenario_dir = qa\n",
        scenario_dir="qa",
        pytest=(),
    ),
    Setting(
        "claude_dirs",
        True,
        plan=None,
        # Collected under the ini file: its command's prompt item asks for a snapshot.
        agent=lambda run: (
            "claude[plugins/greeter]: no snapshot of command /greeter:hello yet" in run.stdout
        ),
        ini="[pytest]\nooda_claude_dirs = plugins/greeter\n",
        files=(
            ("plugins/greeter/.claude-plugin/plugin.json", '{"name": "greeter"}\n'),
            ("plugins/greeter/commands/hello.md", "---\ndescription: Hi\n---\nSay hello.\n"),
        ),
        live=False,
        pytest=(),
    ),
    Setting(
        "replay",
        "passed",
        plan=None,
        # replay: agent without a cassette fails; --ooda-replay=loop replays the loop.
        agent=lambda run: next(iter(run.outcomes())),
        scenario=RECORDED + "replay: agent\n",
        pytest=("-k", "scenario", "--ooda-replay=loop"),
        live=False,
    ),
    Setting(
        "replay_commands",
        "passed",
        plan=None,
        # The recorded run's verification command would fail: skipped, it does not.
        agent=lambda run: next(iter(run.outcomes())),
        scenario=RECORDED.replace(
            "  status: success\n", "  status: success\n  commands: [{run: 'false'}]\n"
        ),
        pytest=("-k", "scenario", "--ooda-replay-commands=skip"),
        live=False,
    ),
    Setting(
        "regrade",
        True,
        plan=None,
        # A replay grades with the recorded verdicts; regraded, the judge is asked.
        agent=lambda run: (run.root / "judge-asked").exists(),
        scenario=RECORDED.replace("  status: success\n", "  status: success\n" + JUDGE),
        files=(("judge.py", JUDGE_AGENT),),
        pytest=("-k", "scenario", "--ooda-regrade"),
        live=False,
    ),
    Setting(
        "resume",
        ({"skipped": 1}, 0),
        plan=None,
        # The earlier session's run counts: this session makes none.
        agent=lambda run: (
            {key: n for key, n in run.outcomes().items() if key == "skipped"},
            len(run.runs),
        ),
        before=(),
        pytest=("--ooda-resume",),
    ),
    Setting(
        "stop_early",
        True,
        plan=lambda plan: plan.stop_early,
        agent=lambda run: (run.done.record.head.aggregate_expect or {})["success_rate"][
            "stop_early"
        ],
        scenario="expect: {success_rate: {min: 0.5}}\n",
        pytest=("--ooda-stop-early",),
    ),
    Setting(
        "executor",
        "environment variable OODA_EXECUTOR: unknown engine",
        plan=None,
        # Where it acts, the cluster's engine is looked up: this one is not installed.
        agent=lambda run: re.sub(
            r" 'nowhere'.*", "", run.result.stderr.lines[0].removeprefix("ERROR: ")
        ),
        env=(("OODA_EXECUTOR", "nowhere:host"),),
        pytest=(),
    ),
    Setting(
        "ship",
        "--ooda-ship: expected a file of the project, relative to the rootdir, got '/etc/hosts'",
        plan=None,
        # Where it acts (the project packed for a cluster) it must name a project file.
        agent=lambda run: run.result.stderr.lines[0].removeprefix("ERROR: "),
        pytest=("--ooda-ship=/etc/hosts",),
    ),
    Setting(
        "max_concurrent",
        1,
        plan=lambda plan: plan.max_concurrent,
        # The run held one of the cap's slots (and says how long it queued for it).
        agent=lambda run: 1 if run.done.record.queued_s is not None else None,
        pytest=("--ooda-max-concurrent=1",),
    ),
    Setting(
        "shard",
        (1, 1),
        plan=lambda plan: plan.shard,
        agent=lambda run: tuple(int(n) for n in (run.done.record.head.shard or "0/0").split("/")),
        pytest=("--ooda-shard=1/1",),
    ),
    Setting(
        "results",
        "out",
        plan=lambda plan: plan.judge_cache.name,
        agent=lambda run: _results_dir(run).name,
        pytest=("--ooda-results=out",),
    ),
    Setting(
        "record_mode",
        "all",
        plan=lambda plan: plan.record_mode,
        agent=lambda run: "all" if _recorded(run) else "none",
        pytest=("--ooda-record-mode=all",),
    ),
    Setting(
        "record_failures",
        True,
        plan=lambda plan: plan.record_failures,
        # The agent never says SUCCESS: a failed run, recorded all the same.
        agent=_recorded,
        pytest=("--ooda-record-mode=once", "--ooda-record-failures"),
    ),
    Setting(
        "record_api",
        "record",
        plan=lambda plan: plan.api.mode if plan.api else None,
        agent=lambda run: run.done.api.mode if run.done.api else None,
        pytest=("--ooda-record-api=all",),
    ),
    Setting(
        "repeat",
        2,
        plan=lambda plan: plan.runs,
        agent=lambda run: len(run.runs),
        pytest=("--ooda-repeat=2",),
    ),
)

#: The table's row for each case's setting name, and every row covered (below).
ROWS = {row.name: row for row in SETTINGS}

CASES = [
    pytest.param(setting, surface, id=f"{setting.name}-{surface}")
    for setting in CASES_TABLE
    for surface in ("pytest", "ooda run")
    if (setting.pytest if surface == "pytest" else setting.ooda) is not None
]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    created = greet_project(pytester, monkeypatch)
    created.write("agent.py", AGENT)
    created.write("scenarios/greet/room/agent.py", AGENT)
    created.write("prompts/decide.md", TEMPLATED_DECIDE_MD)
    return created


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[RunPlan, LiveRun]]:
    """Every plan :func:`pytest_ooda.live.run_live` is given, with what it returned."""
    runs: list[tuple[RunPlan, LiveRun]] = []
    real = live.run_live

    def watch(plan: RunPlan, **options: Any) -> LiveRun:
        done = real(plan, **options)
        runs.append((plan, done))
        return done

    monkeypatch.setattr(live, "run_live", watch)
    return runs


def _run(
    project: Project,
    setting: Setting,
    surface: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    watched: list[tuple[RunPlan, LiveRun]],
) -> Run:
    agent = f"{sys.executable} {project.path / 'agent.py'}"
    count = project.path / "started.txt"

    def filled(text: str) -> str:
        text = text.replace("{agent}", agent).replace("{count}", str(count))
        return text.replace("{root}", str(project.path))

    if setting.config_file != "ooda-config.yml":
        (project.path / "ooda-config.yml").unlink(missing_ok=True)
    project.write(setting.config_file, filled(CONFIG + setting.config))
    project.write(
        f"{setting.scenario_dir}/greet/s.yml", filled("procedure: greet\n" + setting.scenario)
    )
    for name, text in setting.files:
        project.write(name, text)
    for name, value in setting.env:
        monkeypatch.setenv(name, filled(value))
    if setting.ini:
        project.write("pytest.ini", filled(setting.ini))
    result = None
    if surface == "pytest":
        args = [filled(arg) for arg in setting.pytest or ()]
        live_args = ["-m", "live"] if setting.live else []
        if setting.agent_flag and setting.live:
            live_args.append(f"--ooda-ai-cmd={agent}")
        if setting.before is not None:
            project.run(*live_args, *(filled(arg) for arg in setting.before))
            watched.clear()
        result = project.run(*live_args, *args)
    else:
        from pytest_ooda.cli import main

        args = [filled(arg) for arg in setting.ooda or ()]
        if setting.agent_flag:
            args.append(f"--ai-cmd={agent}")
        monkeypatch.chdir(project.path)
        main(["run", "greet", "--no-lint", *args])
    stdout = capfd.readouterr().out + (result.stdout.str() if result is not None else "")
    outputs = [record.output for _, done in watched[:1] for record in done.result.records]
    dumps = [json.loads(output.splitlines()[0]) for output in outputs if output.startswith("{")]
    counted = len(count.read_text().splitlines()) if count.exists() else 0
    return Run(list(watched), dumps, stdout, counted, project.path, result)


#: Rows both front ends have that mean something else on each, so their runs differ by
#: design: a session's budget caps the session; ``ooda run`` makes one run, which its
#: budget caps as ``--max-cost`` (``--max-tokens``) does.
NOT_THE_SAME_RUN = {"budget", "budget_tokens"}


def test_every_row_of_the_settings_table_is_covered_on_each_of_its_front_ends() -> None:
    pytest_rows = {case.row for case in CASES_TABLE if case.pytest is not None}
    ooda_rows = {case.row for case in CASES_TABLE if case.ooda is not None}
    both = {case.name for case in CASES_TABLE if case.pytest is not None and case.ooda}
    for row in SETTINGS:
        if row.pytest is not None or row.ini is not None or row.env is not None:
            assert row.name in pytest_rows, f"no pytest case for {row.name}"
        if row.ooda:
            assert row.name in ooda_rows, f"no ooda run case for {row.name}"
        if row.pytest is not None and row.ooda and row.name not in NOT_THE_SAME_RUN:
            # test_both_front_ends_build_the_same_run takes it: one case, both surfaces.
            assert row.name in both, f"no case of {row.name} on both front ends"
    assert {case.name for case in BOTH_CASES} == {
        row.name for row in SETTINGS if row.pytest and row.ooda and row.name not in NOT_THE_SAME_RUN
    }


@pytest.mark.parametrize(("setting", "surface"), CASES)
def test_a_setting_has_at_the_agent_the_value_the_plan_decided(
    project: Project,
    setting: Setting,
    surface: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    watched: list[tuple[RunPlan, LiveRun]],
) -> None:
    if setting.name == "sandbox":
        assert shutil.which("bwrap"), "bubblewrap is needed: apt-get install bubblewrap"
    run = _run(project, setting, surface, monkeypatch, capfd, watched)
    if setting.plan is None:
        assert setting.agent(run) == setting.expected, run.stdout
        return
    assert setting.plan(run.plan) == setting.expected
    assert setting.agent(run) == setting.plan(run.plan)
    if run.dumps:
        # And the prompt the agent read is the one the plan composes, whatever the row.
        assert run.dumps[0]["prompt"] == _prompt(run.plan)


BOTH_CASES = [
    setting
    for setting in CASES_TABLE
    if setting.name in ROWS
    and ROWS[setting.name].pytest
    and ROWS[setting.name].ooda
    and setting.name not in NOT_THE_SAME_RUN
]
BOTH = [pytest.param(setting, id=setting.name) for setting in BOTH_CASES]


@pytest.mark.parametrize("setting", BOTH)
def test_both_front_ends_build_the_same_run(
    project: Project,
    setting: Setting,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    watched: list[tuple[RunPlan, LiveRun]],
) -> None:
    """``pytest --ooda-sandbox=bwrap`` and ``ooda run --sandbox bwrap`` (and every
    other setting both have) decide the same run: its settings, each from the same
    tier, and its procedure as composed."""
    from_pytest = _run(project, setting, "pytest", monkeypatch, capfd, watched).plan
    watched.clear()
    from_ooda = _run(project, setting, "ooda run", monkeypatch, capfd, watched).plan
    assert from_ooda.settings == from_pytest.settings
    assert from_ooda.procedure == from_pytest.procedure
    # Where each came from, as the plan records it: the command line, named as each
    # front end spells the flag.
    row = ROWS[setting.row]
    for name in (row.run, row.config):
        if name is not None and name in from_pytest.settings.provenance:
            assert from_pytest.settings.provenance[name].tier == "cli"
            assert from_ooda.settings.provenance[name].tier == "cli"


#: A setting this test adds (``--ooda-agent-timeout``, an alias of the config's
#: ``iteration_timeout``): one row, where it acts already there.
AGENT_TIMEOUT: Row[int | None] = Row(
    "agent_timeout",
    "seconds an agent may take for one iteration",
    checks.positive,
    metavar="S",
    pytest="--ooda-agent-timeout",
    ooda=("--agent-timeout",),
    ini="ooda_agent_timeout",
    env="OODA_AGENT_TIMEOUT",
    run="iteration_timeout",
)


@pytest.mark.parametrize(
    ("surface", "where", "provenance"),
    [
        ("pytest", "--ooda-agent-timeout=1", "cli (--ooda-agent-timeout)"),
        ("pytest", "ini:ooda_agent_timeout = 1", "ini (ini option ooda_agent_timeout)"),
        ("pytest", "env:OODA_AGENT_TIMEOUT=1", "env (environment variable OODA_AGENT_TIMEOUT)"),
        ("ooda run", "--agent-timeout=1", "cli (--agent-timeout)"),
    ],
)
def test_a_new_setting_is_one_row_of_the_table(
    project: Project,
    surface: str,
    where: str,
    provenance: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    watched: list[tuple[RunPlan, LiveRun]],
) -> None:
    """The row alone gives it a pytest flag, an ini key, an environment variable and an
    ``ooda run`` flag, each checked by the row and reaching the run where it acts."""
    monkeypatch.setattr(settings, "SETTINGS", (*SETTINGS, AGENT_TIMEOUT))
    flags: tuple[str, ...] = ()
    ini = ""
    env: tuple[tuple[str, str], ...] = ()
    if where.startswith("ini:"):
        ini = "[pytest]\n" + where.removeprefix("ini:") + "\n"
    elif where.startswith("env:"):
        name, _, value = where.removeprefix("env:").partition("=")
        env = ((name, value),)
    else:
        flags = (where,)
    setting = Setting(
        "agent_timeout",
        1,
        plan=lambda plan: plan.settings.iteration_timeout,
        # The agent hangs: the loop stopped it when the plan's timeout ran out.
        agent=lambda run: next(
            (round(r.duration) for r in run.done.result.records if r.timed_out), "not timed out"
        ),
        pytest=("--ooda-ai-cmd={agent} --hang", *flags),
        ooda=("--ai-cmd={agent} --hang", *flags),
        ini=ini,
        env=env,
        agent_flag=False,
    )
    run = _run(project, setting, surface, monkeypatch, capfd, watched)
    assert run.plan.settings.iteration_timeout == 1
    assert str(run.plan.settings.provenance["iteration_timeout"]) == provenance
    assert setting.agent(run) == 1


@pytest.mark.parametrize(
    ("front", "where", "message"),
    [
        ("pytest", "--ooda-agent-timeout=0", "--ooda-agent-timeout: expected"),
        ("pytest", "env:OODA_AGENT_TIMEOUT=soon", "environment variable OODA_AGENT_TIMEOUT:"),
        ("ooda", "--agent-timeout=0", "--agent-timeout: expected"),
    ],
)
def test_a_new_settings_wrong_value_is_refused_by_its_row(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    front: str,
    where: str,
    message: str,
) -> None:
    monkeypatch.setattr(settings, "SETTINGS", (*SETTINGS, AGENT_TIMEOUT))
    if front == "pytest":
        # The help lists it, with the row's metavar.
        assert "--ooda-agent-timeout=S" in project.run("--help").stdout.str()
    args: list[str] = []
    if where.startswith("env:"):
        monkeypatch.setenv(*where.removeprefix("env:").split("="))
    else:
        args.append(where)
    if front == "pytest":
        result = project.run("--collect-only", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert result.stderr.lines[0].startswith(f"ERROR: {message}")
        return
    from pytest_ooda.cli import main

    monkeypatch.chdir(project.path)
    assert main(["run", "greet", *args]) == 1
    assert capsys.readouterr().err.splitlines()[0].startswith(f"ooda: error: {message}")

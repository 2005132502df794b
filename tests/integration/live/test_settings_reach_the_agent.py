"""From option to agent: every setting a live run takes, set where a user sets it (a
pytest option or ini key, an ``ooda run`` flag, the environment, the config file, a
scenario, a variant), has the value at the agent that the run's plan decided.

One table, both surfaces: a ``pytest -m live`` session (in process, with pytester) and
``ooda run``. The agent is a real subprocess that prints what it received — its
arguments, its working directory, its prompt, whether it ran in a sandbox — and the
plan is the one the run was given (:func:`pytest_ooda.live.run_live`, watched). For
settings the loop applies rather than the agent (budgets, the output format, the
streamed output), the value is read where the loop applied it.
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

from pytest_ooda import live
from pytest_ooda._types import PROMPT_FORMATS
from pytest_ooda.compose import assemble_prompt

if TYPE_CHECKING:
    from collections.abc import Callable

    from ooda_project import Project

    from pytest_ooda.live import LiveRun, RunPlan

# Prints what it received, as JSON (inside a Claude Code json report with --claude-json);
# --count=FILE adds a line per start, --die stops like an overloaded API, --hang sleeps
# past any iteration timeout, --succeed-at=N says SUCCESS on the Nth start (with --count).
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
    sys.stderr.write("API Error: 529 overloaded\\n")
    sys.exit(1)
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


@dataclass(frozen=True)
class Run:
    """One run as the test saw it: the plan it was given and what it produced, the
    agent's reports, and what reached the terminal."""

    plan: RunPlan
    done: LiveRun
    dumps: list[dict[str, Any]]
    stdout: str
    counted: int


@dataclass(frozen=True)
class Setting:
    """A row of the table: how each surface sets it, the value expected, and where the
    plan and the agent (or the loop) hold it."""

    name: str
    expected: Any
    plan: Callable[[RunPlan], Any]
    agent: Callable[[Run], Any]
    #: Arguments (``{agent}`` and ``{count}`` filled in) per surface; a surface without
    #: the setting is not a row of it.
    pytest: tuple[str, ...] | None = None
    ooda: tuple[str, ...] | None = None
    #: Extra scenario lines, extra config, the environment, an ini file.
    scenario: str = ""
    config: str = ""
    env: tuple[tuple[str, str], ...] = ()
    ini: str = ""
    #: Whether the surface's own agent flag is given too (off for agent settings).
    agent_flag: bool = True


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


SETTINGS = (
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
        "show_ai_output",
        True,
        plan=lambda plan: plan.settings.show_ai_output,
        agent=lambda run: '"argv": [' in run.stdout,
        pytest=("-s",),
        ooda=("--verbose",),
    ),
    Setting(
        "max_iterations (--unlimited)",
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
)

CASES = [
    pytest.param(setting, surface, id=f"{setting.name}-{surface}")
    for setting in SETTINGS
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
        return text.replace("{agent}", agent).replace("{count}", str(count))

    project.write("ooda-config.yml", filled(CONFIG + setting.config))
    project.scenario("s", "procedure: greet\n" + setting.scenario)
    for name, value in setting.env:
        monkeypatch.setenv(name, filled(value))
    if setting.ini:
        project.write("pytest.ini", filled(setting.ini))
    if surface == "pytest":
        args = [filled(arg) for arg in setting.pytest or ()]
        if setting.agent_flag:
            args.append(f"--ooda-ai-cmd={agent}")
        project.run("-m", "live", *args)
    else:
        from pytest_ooda.cli import main

        args = [filled(arg) for arg in setting.ooda or ()]
        if setting.agent_flag:
            args.append(f"--ai-cmd={agent}")
        monkeypatch.chdir(project.path)
        main(["run", "greet", "--no-lint", *args])
    stdout = capfd.readouterr().out
    [(plan, done)] = watched
    outputs = [record.output for record in done.result.records]
    dumps = [json.loads(output.splitlines()[0]) for output in outputs if output.startswith("{")]
    counted = len(count.read_text().splitlines()) if count.exists() else 0
    return Run(plan, done, dumps, stdout, counted)


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
    assert setting.plan(run.plan) == setting.expected
    assert setting.agent(run) == setting.plan(run.plan)
    if run.dumps:
        # And the prompt the agent read is the one the plan composes, whatever the row.
        assert run.dumps[0]["prompt"] == _prompt(run.plan)

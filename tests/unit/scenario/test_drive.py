"""Scenarios that drive an agent's own material: ``prompt:`` passed through as a one-turn
``raw`` procedure, the material named by the agent's key, ``setup:``, ``triggers:``,
what fired recorded and replayed (docs/claude-code.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.agents import MATERIAL_SECTIONS, Activation
from pytest_ooda.backends import ReplayStep, ToolCall, script
from pytest_ooda.compose import assemble_prompt, prompt_sha256
from pytest_ooda.config import load_config
from pytest_ooda.errors import ScenarioError
from pytest_ooda.lint import lint_procedure
from pytest_ooda.loop import run_procedure
from pytest_ooda.scenario import (
    load_scenario_text,
    material_files,
    replay_scenario,
    run_material,
    save_scenario,
    scenario_config,
    scenario_from_result,
)

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.config import Config

(SECTION,) = MATERIAL_SECTIONS  # the one agent with material: its key


def _config(tmp_path: Path, extra: str = "") -> Config:
    (tmp_path / "ooda-config.yml").write_text(
        f"{extra}procedures:\n"
        "  hello:\n    prompt_format: raw\n    act:\n      - content: /hello world\n"
        "  build:\n    act:\n      - content: Build it.\n"
    )
    return load_config(tmp_path / "ooda-config.yml", cwd=tmp_path, env={}, global_config=False)


def _material(root: Path) -> Path:
    skill = root / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Greets. Use when asked.\n---\nGreet.\n")
    return root / ".claude"


def test_the_raw_layout_is_the_fragments_alone(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert assemble_prompt(config.procedure("hello"), iteration=2, max_iterations=5) == (
        "/hello world"
    )
    text = assemble_prompt(config.procedure("hello"), context=["more words"])
    assert text == "/hello world\n\nmore words"


def test_a_raw_prompt_without_a_promise_is_one_turn(tmp_path: Path) -> None:
    config = _config(tmp_path)
    result = run_procedure(config, "hello", backend=script(["done", "again"]), max_iterations=5)
    assert result.status == "success"
    assert result.iterations == 1
    assert result.records[0].outcome == "success"
    assert "raw prompt that asks for no promise" in result.records[0].reason
    # A failed turn is not success: the loop goes on as usual.
    failed = run_procedure(config, "hello", backend=script([("boom", 3), "ok"]), max_iterations=5)
    assert failed.status == "success"
    assert failed.iterations == 2
    # An ooda procedure still waits for its promise.
    ooda = run_procedure(config, "build", backend=script(["a", "b"]), max_iterations=2)
    assert ooda.status == "max-iters"


def test_lint_asks_no_promise_of_a_one_turn_procedure(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert not {f.id for f in lint_procedure(config, "hello")} & {"OODA301", "OODA302"}
    assert "OODA301" in {f.id for f in lint_procedure(config, "build")}


SCENARIO = f"""\
procedure: build
prompt: "/hello Alice"
{SECTION}: ../.claude
setup:
  - echo change > CHANGED.txt
  - {{run: "true", timeout: 5}}
triggers:
  skill: greet
  should: [please greet Bob]
  should_not: [what time is it]
expect:
  activation: {{command: hello, skill: {{greet: not_fired}}}}
  trajectory: {{calls: [Write]}}
iterations: []
"""


def test_the_new_keys_load_and_write_back(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    path = tmp_path / "scenarios" / "s.yml"
    path.write_text(SCENARIO)
    scenario = load_scenario_text(SCENARIO, path=path)
    assert scenario.prompt == "/hello Alice"
    assert scenario.material == {SECTION: ("../.claude",)}
    assert [command.run for command in scenario.setup] == ["echo change > CHANGED.txt", "true"]
    assert scenario.triggers is not None
    assert [(c.id, c.should_fire) for c in scenario.triggers.cases()] == [
        ("should-1", True),
        ("should-not-1", False),
    ]
    assert scenario.expect is not None
    assert [a.label for a in scenario.expect.activation] == [
        "command hello fired",
        "skill greet not_fired",
    ]
    again = load_scenario_text(save_scenario(scenario, path).read_text(), path=path)
    assert again.to_yaml() == scenario.to_yaml()
    assert load_scenario_text(f"procedure: x\n{SECTION}: none\n").material == {SECTION: ()}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prompt: ''\n", "prompt: the text is empty"),
        ("prompt: [a]\n", "prompt: expected a string"),
        ("setup: echo\n", "setup: expected a list"),
        ("setup: [{run: ''}]\n", r"setup\[0\].run: the command is empty"),
        ("triggers: {should: [x]}\n", "triggers: name the one skill or subagent"),
        ("triggers: {skill: a, subagent: b, should: [x]}\n", "name the one skill"),
        ("triggers: {skill: a}\n", "give prompts that should fire it"),
        ("triggers: {command: a, should: [x]}\n", "triggers: unknown key 'command'"),
    ],
)
def test_mistakes_in_the_new_keys_are_located(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as caught:
        load_scenario_text("procedure: x\n" + text, path="s.yml")
    assert caught.value.line == 2


def test_the_material_a_run_installs_and_its_identity(tmp_path: Path) -> None:
    claude = _material(tmp_path / "plug")
    config = _config(tmp_path, f"{SECTION}: [plug/.claude]\n")
    assert config.material == {SECTION: (claude.resolve(),)}
    plain = load_scenario_text("procedure: hello\n", path=tmp_path / "scenarios/s.yml")
    dirs = run_material(config, plain)
    assert [(d.section, d.path, d.label) for d in dirs] == [(SECTION, claude.resolve(), ".claude")]
    files = material_files(dirs)
    assert [f.source for f in files] == [".claude/skills/greet/SKILL.md"]
    none = load_scenario_text(f"procedure: hello\n{SECTION}: none\n", path=plain.path)
    assert run_material(config, none) == ()
    composed = scenario_config(config, plain, files).procedure("hello")
    before = prompt_sha256(composed, "/hello world")
    (claude / "skills/greet/SKILL.md").write_text("---\ndescription: Edited.\n---\nGreet.\n")
    edited = scenario_config(config, plain, material_files(dirs)).procedure("hello")
    assert prompt_sha256(edited, "/hello world") != before
    assert prompt_sha256(config.procedure("hello"), "x") == prompt_sha256(
        scenario_config(config, plain).procedure("hello"), "x"
    )


def test_a_material_directory_that_is_no_material_is_a_scenario_error(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "empty").mkdir()
    scenario = load_scenario_text(
        f"procedure: hello\n{SECTION}: ../empty\n", path=tmp_path / "s/x.yml"
    )
    with pytest.raises(ScenarioError, match="neither a Claude Code plugin"):
        material_files(run_material(config, scenario))


def test_a_prompt_scenario_runs_its_text_once_and_checks_what_fired(tmp_path: Path) -> None:
    config = _config(tmp_path)
    text = (
        "procedure: build\nprompt: /greet Bob\n"
        "expect:\n  activation: {command: greet, skill: greet}\n"
        "  trajectory: {calls: [{Write: {file_path: GREETING}}]}\n"
        "iterations:\n  - output: done\n    fired: [command:greet]\n"
        "    tool_calls:\n      - {name: Write, summary: GREETING.md,\n"
        "         input: {file_path: GREETING.md}}\n"
    )
    scenario = load_scenario_text(text, path=tmp_path / "scenarios/build/s.yml")
    (tmp_path / "w").mkdir()
    replayed = replay_scenario(config, scenario, workdir=tmp_path / "w", sleep=False)
    assert replayed.result.prompts == ["/greet Bob"]
    assert replayed.result.status == "success"
    assert replayed.problems == ("skill greet did not fire (what fired: command:greet)",)


def test_what_fired_and_call_arguments_are_recorded(tmp_path: Path) -> None:
    config = _config(tmp_path)
    step = ReplayStep(
        output="ok",
        tool_calls=(ToolCall("Skill", "greet", True, arguments={"skill": "greet", "n": 3}),),
        tools_reported=True,
        activations=(Activation("skill", "greet"), Activation("hook", "Stop")),
    )
    result = run_procedure(config, "hello", backend=script([step]))
    scenario = load_scenario_text("procedure: hello\n", path=tmp_path / "s.yml")
    recorded = scenario_from_result(scenario, result)
    written = save_scenario(recorded, tmp_path / "s.yml").read_text()
    assert "  fired:\n  - skill:greet\n  - hook:Stop\n" in written
    assert "    input:\n      skill: greet\n      n: 3\n" in written
    again = load_scenario_text(written, path=tmp_path / "s.yml")
    (iteration,) = again.iterations
    assert iteration.activations == (Activation("skill", "greet"), Activation("hook", "Stop"))
    assert iteration.tool_calls is not None
    assert iteration.tool_calls[0].arguments == {"skill": "greet", "n": 3}


def test_a_recorded_activation_that_is_not_one_is_located() -> None:
    with pytest.raises(ScenarioError, match=r"fired\[0\]: expected kind:name") as caught:
        load_scenario_text("procedure: x\niterations:\n  - output: o\n    fired: [nothing]\n")
    assert caught.value.line == 4


def _git(cwd: Path, *argv: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_a_variant_installs_without_the_material_or_an_earlier_revision_of_it(
    tmp_path: Path,
) -> None:
    from pytest_ooda.scenario import materialize
    from pytest_ooda.variants import parse_option

    claude = _material(tmp_path / "plug")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "v1")
    skill = claude / "skills" / "greet" / "SKILL.md"
    skill.write_text("---\ndescription: Greets, v2. Use when asked.\n---\nGreet.\n")
    config = _config(tmp_path, f"{SECTION}: [plug/.claude]\n")
    scenario = load_scenario_text("procedure: hello\n", path=tmp_path / "scenarios/hello/s.yml")
    assert run_material(config, scenario, parse_option(f"bare:{SECTION}=without")) == ()
    (old,) = run_material(config, scenario, parse_option(f"v1:{SECTION}=git:HEAD"))
    assert (old.path, old.rev) == (claude.resolve(), "HEAD")
    now = material_files(run_material(config, scenario))
    then = material_files((old,))
    # The same file, two versions: a comparison names it as the difference.
    assert [f.source for f in now] == [f.source for f in then]
    assert now[0].sha256 != then[0].sha256
    copy = materialize(old, tmp_path / "scratch")
    assert "Greets. Use when asked." in (copy / "skills/greet/SKILL.md").read_text()
    (other,) = run_material(config, scenario, parse_option(f"alt:{SECTION}=plug/.claude"))
    assert other.rev is None
    missing = run_material(config, scenario, parse_option(f"v0:{SECTION}=git:no-such-rev"))
    with pytest.raises(ScenarioError, match="git:no-such-rev"):
        material_files(missing)


def test_a_scenario_s_variant_names_material_by_its_key(tmp_path: Path) -> None:
    scenario = load_scenario_text(
        f"procedure: hello\nvariants:\n  without: {{{SECTION}: without}}\n  with: {{}}\n",
        path=tmp_path / "s.yml",
    )
    assert [dict(v.material) for v in scenario.variants] == [{SECTION: "without"}, {}]
    assert scenario.variants[0].to_yaml() == {SECTION: "without"}


def test_a_workspace_s_own_claude_directory_is_part_of_the_prompt_s_identity(
    tmp_path: Path,
) -> None:
    from pytest_ooda.scenario import check_replay, workspace_material
    from pytest_ooda.variants import parse_option

    config = _config(tmp_path)
    skill = _material(tmp_path / "scenarios/hello/ws") / "skills/greet/SKILL.md"
    path = tmp_path / "scenarios/hello/s.yml"
    text = "procedure: hello\nworkspace: ws\niterations:\n  - output: done\n"
    scenario = load_scenario_text(text, path=path)
    # Copied with the workspace and loaded by the agent as the project's, never installed.
    assert run_material(config, scenario) == ()
    (own,) = workspace_material(scenario)
    assert (own.label, own.in_workspace) == ("workspace/.claude", True)
    procedure = scenario_config(config, scenario).procedure("hello")
    assert [f.source for f in procedure.material] == ["workspace/.claude/skills/greet/SKILL.md"]
    # A variant without the installed material still runs in this workspace.
    bare = parse_option(f"bare:{SECTION}=without")
    installed = material_files(run_material(config, scenario, bare))
    without = scenario_config(config, scenario, installed)
    assert without.procedure("hello").material == procedure.material
    recorded = prompt_sha256(procedure, "/hello world")
    path.write_text(text.replace("done\n", f"done\n    prompt_sha256: {recorded}\n"))
    assert check_replay(config, "hello", path, drift="fail", root=tmp_path).failure is None
    skill.write_text("---\ndescription: Greets loudly. Use when asked.\n---\nGREET.\n")
    drifted = check_replay(config, "hello", path, drift="fail", root=tmp_path).failure
    assert drifted is not None
    assert f"prompt of iteration 1 drifted from the recording (sha256 {recorded[:12]}" in drifted
    assert workspace_material(load_scenario_text("procedure: hello\n", path=path)) == ()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("workspace: repo\n", {"workspace": "repo"}),
        ("workspace: 'my repo'  # quoted\n", {"workspace": "my repo"}),
        ('workspace: "a#b"\n', {"workspace": "a#b"}),
        ("workspace: ../w/x # trailing\n", {"workspace": "../w/x"}),
        ("prompt: /greeter:hello Ada happy\r\n", {"prompt": "/greeter:hello Ada happy"}),
        ("prompt: |\n  /not one line\n", {}),
        ("workspace: null\n", {}),
        ("workspace: 12\n", {}),
        ("workspace: [a, b]\n", {}),
        ("  workspace: nested\n", {}),
        ("workspace: 'unclosed\n", {}),
    ],
)
def test_collection_reads_one_line_keys_without_loading_the_file(
    tmp_path: Path, line: str, expected: dict[str, str]
) -> None:
    from pytest_ooda.scenario import declared_values

    path = tmp_path / "s.yml"
    path.write_text(f"procedure: p\n{line}iterations:\n  - output: 'workspace: no'\n")
    assert declared_values(path, ("workspace", "prompt")) == expected
    assert declared_values(tmp_path / "missing.yml", ("workspace",)) == {}

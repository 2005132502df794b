"""Live items: never run unless ``-m live`` selects them; skipped without an AI command;
``--ooda-ai-cmd`` / ``--ooda-ai-cmd-alias`` / environment / config choose the command."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from ooda_project import Project

SCENARIO = "procedure: greet\nexpect: {status: success}\niterations: []\n"
PLAN = '[{"print": "<promise>SUCCESS</promise>"}]'


def test_live_items_never_run_without_m_live(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    project.scenario("s", SCENARIO)
    result = project.run("--ooda-ai-cmd", ai_cmd, "-k", "live")
    result.assert_outcomes(deselected=8)
    assert not (project.path / "fake-ai/prompts.log").exists()
    # Not even when -k names them or -m selects something else.
    project.run("--ooda-ai-cmd", ai_cmd, "-m", "not slow", "-k", "live").assert_outcomes(
        deselected=8
    )
    assert not (project.path / "fake-ai/prompts.log").exists()


def test_live_is_skipped_with_every_way_to_configure_a_command(project: Project) -> None:
    project.scenario("s", SCENARIO)
    result = project.run("-m", "live", "-rs")
    result.assert_outcomes(skipped=1, deselected=7)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1] scenarios/greet/s.yml:1: no AI command configured for live runs;"
            " set one of:",
            "  - pytest --ooda-ai-cmd='my-cli -p' or --ooda-ai-cmd-alias=NAME*",
            "  - OODA_LOOP_AI_CMD or OODA_LOOP_AI_CMD_ALIAS in the environment",
            "  - loop.ai_cmd, loop.ai_cmd_alias or loop.ai_api in ooda-config.yml*",
            "  - ai_cmd, ai_cmd_alias or ai_api on the procedure itself",
        ]
    )


def test_ai_cmd_option_runs_the_command(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    project.scenario("s", SCENARIO)
    result = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd)
    result.assert_outcomes(passed=1, deselected=7)
    prompts = (project.path / "fake-ai/prompts.log").read_text()
    assert "Procedure: Greet" in prompts
    result.stdout.fnmatch_lines(
        [
            "ooda: greet/s: success status=success iterations=1 time=*s",
            "*- ooda live runs -*",
            "greet/s  *1   1       0  100%  21%–100%  *success 1",
        ]
    )


def test_ai_cmd_alias_option_uses_the_configured_alias(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    config = (project.path / "ooda-config.yml").read_text()
    project.write("ooda-config.yml", config + f'ai_cmd_aliases:\n  fake: "{ai_cmd}"\n')
    project.scenario("s", SCENARIO)
    project.run("-m", "live", "--ooda-ai-cmd-alias", "fake").assert_outcomes(passed=1, deselected=7)
    assert (project.path / "fake-ai/prompts.log").is_file()


def test_environment_variable_configures_live_runs(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OODA_LOOP_AI_CMD", project.fake_ai(PLAN))
    project.scenario("s", SCENARIO)
    project.run("-m", "live").assert_outcomes(passed=1, deselected=7)


def test_workspace_config_supplies_the_command_for_other_procedure_files(
    project: Project,
) -> None:
    ai_cmd = project.fake_ai(PLAN)
    project.write("ooda-config.yml", f'loop:\n  ai_cmd: "{ai_cmd}"\n')
    project.write(
        "procedures/more.yml",
        """\
        procedures:
          wave:
            act:
              - content: "Wave. <promise>SUCCESS</promise> or <promise>FAILURE</promise>"
        """,
    )
    project.write("procedures/scenarios/wave/s.yml", SCENARIO.replace("greet", "wave"))
    # Deselected: wave's six other items, and ooda-config.yml::config (loop settings only).
    project.run("-m", "live").assert_outcomes(passed=1, deselected=8)


def test_live_summary_and_counts_under_xdist(project: Project) -> None:
    ai_cmd = project.fake_ai(PLAN)
    project.scenario("s", SCENARIO)
    result = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd, "-n", "2")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "ooda: 1 procedure, 1 scenario in 1 config file",
            "ooda: greet/s: success status=success iterations=1 time=*s",
            "*- ooda live runs -*",
            "greet/s  *1   1       0  100%  21%–100%  *success 1",
        ],
        consecutive=False,
    )


def test_live_output_streams_with_s(project: Project) -> None:
    ai_cmd = project.fake_ai('[{"print": "streamed-marker <promise>SUCCESS</promise>"}]')
    project.scenario("s", SCENARIO)
    quiet = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd)
    assert "streamed-marker" not in quiet.stdout.str()
    loud = project.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-s", "-m", "live", "--ooda-ai-cmd", ai_cmd
    )
    loud.assert_outcomes(passed=1, deselected=7)
    assert "streamed-marker" in loud.stdout.str()
    # Each iteration's output between boundary lines naming the item and the iteration.
    loud.stdout.fnmatch_lines(
        [
            "*──── ooda: ooda-config.yml::greet::live[[]s[]]: iteration 1 of * ────",
            "*streamed-marker*",
            "──── ooda: ooda-config.yml::greet::live[[]s[]]: iteration 1 ended: success, "
            "SUCCESS, exit 0 ────",
        ]
    )


def test_unusable_command_is_a_usage_error(project: Project) -> None:
    for value, message in (("'unclosed", "cannot split*No closing quotation"), ("", "*empty")):
        result = project.run("--ooda-ai-cmd", value, "--collect-only")
        assert result.ret == 4
        result.stderr.fnmatch_lines([f"ERROR: --ooda-ai-cmd: {message}"])


def test_unknown_alias_fails_naming_the_pytest_option(project: Project) -> None:
    project.scenario("s", SCENARIO)
    result = project.run("-m", "live", "--ooda-ai-cmd-alias", "nosuch")
    result.assert_outcomes(failed=1, deselected=7)
    result.stdout.fnmatch_lines(["--ooda-ai-cmd-alias: unknown AI command alias 'nosuch'"])
    assert "pytest_ooda/" not in result.stdout.str()


def test_m_live_with_no_agent_at_all_fails_the_session(project: Project) -> None:
    # Selected explicitly, none could run: a CI job missing its agent must not go green.
    project.scenario("s", SCENARIO)
    project.scenario("t", SCENARIO)
    result = project.run("-m", "live")
    result.assert_outcomes(skipped=2, deselected=8)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "error: -m live selected 2 live items and none could run: no AI command "
            "configured for live runs; set one of:",
            "  - pytest --ooda-ai-cmd='my-cli -p' or --ooda-ai-cmd-alias=NAME*",
        ]
    )
    # With an agent the same selection runs, and passes.
    ai_cmd = project.fake_ai(PLAN)
    ran = project.run("-m", "live", f"--ooda-ai-cmd={ai_cmd}")
    ran.assert_outcomes(passed=2, deselected=8)
    assert "none could run" not in ran.stdout.str()


def test_an_alias_defined_in_a_config_pytest_does_not_read_stops_no_prompt_item(
    project: Project,
) -> None:
    """The workspace config names an alias the global config defines (which the
    plugin, for the same prompts on every machine, does not read): the prompts and
    their snapshots go on; the config item says the alias is unknown here."""
    config = project.path / "ooda-config.yml"
    config.write_text("loop:\n  ai_cmd_alias: kiro\n" + config.read_text())
    result = project.run("--snapshot-update", "-k", "greet and (prompt or config)")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        ["*ooda-config.yml:2:3: loop.ai_cmd_alias: unknown AI command alias 'kiro'*"]
    )

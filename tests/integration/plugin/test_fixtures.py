"""The public fixtures, used the way a hand-written test would, and overridden."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ooda_project import Project


def test_runner_with_a_scripted_backend(project: Project) -> None:
    project.pytester.makepyfile(
        test_hand="""
        def test_greet(ooda_runner, ooda_script):
            ai = ooda_script(["Greeted Ann.", ("oops", 1), "<promise>SUCCESS</promise>"])
            result = ooda_runner.run("greet", ai=ai, max_iterations=5)
            result.assert_status("success", iterations=3)
            result.assert_signals(["none", "none", "SUCCESS"])
            assert "Procedure: Greet" in ai.prompts[0]
            assert "Iteration: 2 of 5" in ai.prompts[1]

        def test_callable_steps_see_the_prompt(ooda_runner, ooda_script):
            seen = []
            step = lambda prompt: seen.append(prompt) or "<promise>FAILURE</promise>"
            ai = ooda_script([step, step])
            result = ooda_runner.run("greet", ai=ai, failure_threshold=2)
            assert result.status == "aborted"
            assert len(seen) == 2
        """
    )
    project.run("test_hand.py").assert_outcomes(passed=2)


def test_failed_assertion_helper_reads_well(project: Project) -> None:
    project.pytester.makepyfile(
        test_hand="""
        def test_greet(ooda_runner, ooda_script):
            result = ooda_runner.run("greet", ai=ooda_script(["no luck"]), max_iterations=1)
            result.assert_status("success")
        """
    )
    result = project.run("test_hand.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected status 'success', got 'max-iters'*"])
    # The failure is shown at the user's line, not inside the library.
    result.stdout.fnmatch_lines(['>*result.assert_status("success")'])
    assert "pytest_ooda/loop.py" not in result.stdout.str()


def test_workspace_is_a_git_initialised_copy(project: Project) -> None:
    project.write("fixtures/repo/AGENTS.md", "# agents\n")
    project.pytester.makepyfile(
        test_ws="""
        import subprocess

        def test_ws(ooda_workspace):
            path = ooda_workspace("fixtures/repo")
            assert (path / "AGENTS.md").read_text() == "# agents\\n"
            assert (path / ".git").is_dir()
            log = subprocess.run(["git", "log", "--oneline"], cwd=path, capture_output=True,
                                 text=True, check=True).stdout
            assert "ooda workspace" in log
            (path / "AGENTS.md").write_text("changed")

        def test_empty(ooda_workspace):
            path = ooda_workspace()
            assert [p.name for p in path.iterdir()] == [".git"]
        """
    )
    project.run("test_ws.py").assert_outcomes(passed=2)
    assert (project.path / "fixtures/repo/AGENTS.md").read_text() == "# agents\n"


def test_http_ai_stub_serves_replies_and_records_requests(project: Project) -> None:
    project.write(
        "ooda-config.yml",
        (project.path / "ooda-config.yml").read_text()
        + "loop:\n  ai_api:\n    provider: anthropic\n    model: test-model\n"
        "    price_input_per_mtok: 3\n    price_output_per_mtok: 15\n",
    )
    project.pytester.makepyfile(
        test_http="""
        def test_http(ooda_runner, ooda_http_ai, monkeypatch):
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            ooda_http_ai.reply("Working on it.", input_tokens=100, output_tokens=10)
            ooda_http_ai.reply(
                "Done. <promise>SUCCESS</promise>", input_tokens=120, output_tokens=20
            )
            result = ooda_runner.run("greet", max_iterations=3)
            result.assert_status("success", iterations=2)
            assert len(ooda_http_ai.requests) == 2
            assert ooda_http_ai.requests[0].body["model"] == "test-model"
            assert ooda_http_ai.requests[0].headers["x-api-key"] == "test-key"
            assert "Procedure: Greet" in ooda_http_ai.prompts[1]
            assert result.usage.input_tokens == 220
            assert round(result.usage.cost, 6) == round((220 * 3 + 30 * 15) / 1e6, 6)

        def test_http_error_is_a_failed_iteration(ooda_runner, ooda_http_ai, monkeypatch):
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            ooda_http_ai.fail(400, "bad request").fail(404, "not found")  # 403: auth, an error
            result = ooda_runner.run("greet", max_iterations=2)
            assert result.status == "max-iters"
            assert [r.outcome for r in result.records] == ["failure", "failure"]
        """
    )
    project.run("test_http.py").assert_outcomes(passed=2)


def test_fixtures_can_be_overridden_in_conftest(project: Project) -> None:
    project.pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def ooda_script():
            def scripted(items, *, name="script"):
                from pytest_ooda.backends.replay import script
                return script(["<promise>SUCCESS</promise>"], name="always-done")
            return scripted
        """
    )
    project.pytester.makepyfile(
        test_override="""
        def test_override(ooda_runner, ooda_script):
            ai = ooda_script(["never used"])
            assert ai.name == "always-done"
            ooda_runner.run("greet", ai=ai).assert_status("success", iterations=1)
        """
    )
    project.run("test_override.py").assert_outcomes(passed=1)


def test_runner_uses_the_ai_cmd_option(project: Project) -> None:
    ai_cmd = project.fake_ai('[{"print": "<promise>SUCCESS</promise>"}]')
    project.pytester.makepyfile(
        test_cmd="""
        def test_cmd(ooda_runner):
            ooda_runner.run("greet", max_iterations=1).assert_status("success")
        """
    )
    project.run("test_cmd.py", "--ooda-ai-cmd", ai_cmd).assert_outcomes(passed=1)
    assert "Procedure: Greet" in (project.path / "fake-ai/prompts.log").read_text()


def test_misuse_is_reported_at_the_test_line_without_plugin_frames(project: Project) -> None:
    project.pytester.makepyfile(
        test_misuse="""
        def test_unknown_procedure(ooda_runner, ooda_script):
            ooda_runner.run("gret", ai=ooda_script(["x"]))

        def test_bad_step(ooda_script):
            ooda_script([42])

        def test_too_few_steps(ooda_runner, ooda_script):
            ooda_runner.run("greet", ai=ooda_script(["x"]), max_iterations=3)

        def test_missing_workspace(ooda_workspace):
            ooda_workspace("nope")

        def test_unknown_provider(ooda_http_ai):
            ooda_http_ai.reply("x", provider="gemini")
        """
    )
    result = project.run("test_misuse.py")
    result.assert_outcomes(failed=5)
    result.stdout.fnmatch_lines(
        [
            '>       ooda_runner.run("gret", ai=ooda_script(["x"]))',
            "E       pytest_ooda.errors.ConfigError: unknown procedure 'gret'",
            "E         did you mean 'greet'?",
            "*",
            "E       TypeError: script step 1: expected an output string*got int",
            "*",
            "E       pytest_ooda.errors.ScenarioError: scenario 'script' has 1 iteration, loop "
            "asked for a 2nd",
            "*",
            "E       pytest_ooda.errors.BackendError: workspace directory not found: */nope",
            "*",
            "E       pytest_ooda.errors.BackendError: unknown provider 'gemini'",
        ]
    )
    assert "pytest_ooda/" not in result.stdout.str()


def test_fixture_types_are_exported_for_annotations(project: Project) -> None:
    project.write(
        "test_typed.py",
        "from pytest_ooda.loop import LoopResult\n"
        "from pytest_ooda.plugin import HttpAIStub, Runner, ScriptFactory, WorkspaceFactory\n\n"
        "def test_typed(ooda_runner: Runner, ooda_script: ScriptFactory,\n"
        "               ooda_workspace: WorkspaceFactory, ooda_http_ai: HttpAIStub) -> None:\n"
        "    assert isinstance(ooda_runner, Runner)\n"
        "    assert isinstance(ooda_script, ScriptFactory)\n"
        "    assert isinstance(ooda_workspace, WorkspaceFactory)\n"
        "    assert isinstance(ooda_http_ai, HttpAIStub)\n"
        "    result: LoopResult = ooda_runner.run(\n"
        "        'greet', ai=ooda_script(['<promise>SUCCESS</promise>']))\n"
        "    result.assert_status('success', iterations=1)\n",
    )
    result = project.run("test_typed.py")
    result.assert_outcomes(passed=1)


def test_every_warning_is_an_ooda_warning(project: Project) -> None:
    config = (project.path / "ooda-config.yml").read_text()
    project.write("ooda-config.yml", config + "extra_key: 1\n")
    result = project.run("-k", "config and not prompt", "-W", "error::pytest_ooda.OodaWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LintWarning (an error under -W / filterwarnings)*extra_key*"])

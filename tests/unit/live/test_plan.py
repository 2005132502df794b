"""A run decided as one value: the plan pickles whole and runs in another process with
the same result, its run id is a content hash of what runs, every setting says where
it came from, and secrets are those of the environment a run starts in."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda.config import load_config_file
from pytest_ooda.errors import NoAICommandError
from pytest_ooda.live import LiveRun, RunPlan, plan_run, run_live, write_recording
from pytest_ooda.live.plan import fragment_hashes
from pytest_ooda.results import SessionStamp
from pytest_ooda.scenario import load_scenario
from pytest_ooda.settings import Given, decide, session_settings
from pytest_ooda.variants import parse_option

AGENT = Path(__file__).resolve().parents[2] / "fake_ai" / "agent.py"

CONFIG = """\
procedures:
  greet:
    default_max_iterations: 2
    observe:
      - content: "Look at {{.where}}."
        parameters: {where: the room}
    act:
      - content: "Write hello.txt, then print <promise>SUCCESS</promise>."
"""
SCENARIO = """\
procedure: greet
workspace: ../../repo
max_cost: 2.5
expect:
  status: success
  files: {hello.txt: exists}
iterations: []
"""
#: A value the built-in redaction rules catch when it is an environment variable's
#: value whose name says it is a secret.
SECRET = "tok-0123456789abcdefghijklmnop"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    (tmp_path / "scenarios" / "greet").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "README.md").write_text("hello\n")
    path = tmp_path / "scenarios" / "greet" / "happy.yml"
    path.write_text(SCENARIO)
    return tmp_path / "ooda-config.yml", path


def _agent(step: dict[str, object]) -> str:
    return shlex.join([sys.executable, str(AGENT), json.dumps(step)])


def _script(code: str) -> str:
    """An agent that reads its prompt and runs ``code``."""
    return shlex.join([sys.executable, "-c", "import os, sys; sys.stdin.read(); " + code])


def _plan(config: Path, path: Path, **session: Any) -> RunPlan:
    run = session.pop("run", 1)
    variant = session.pop("variant", None)
    settings = session.pop("settings", None) or session_settings(config.parent, **session)
    return plan_run(
        settings, "greet", load_scenario(path), collected=config, variant=variant, run=run
    )


def _comparable(done: LiveRun) -> dict[str, Any]:
    """What a run produced, without what differs between any two runs (ids, times and
    the run's temporary directory)."""
    data = done.record.to_json()
    for key in ("id", "started_at", "finished_at", "elapsed_s", "transcript"):
        del data[key]
    for iteration in data["iterations"]:
        del iteration["duration_s"]
    return {
        "record": data,
        "outcome": done.outcome,
        "outputs": [record.output for record in done.result.records],
        "report": done.report,
    }


def test_a_plan_pickles_whole_and_runs_in_a_spawned_process_with_the_same_result(
    project: tuple[Path, Path],
) -> None:
    config, path = project
    agent = _script(
        "open('hello.txt', 'w').write('hi'); print('Wrote it.\\n<promise>SUCCESS</promise>')"
    )
    plan = _plan(config, path, ai_cmd=agent, variant=parse_option("v:param.where=the hall"))
    copy = pickle.loads(pickle.dumps(plan))
    assert copy == plan
    assert copy.run_id == plan.run_id
    # Read-only mappings travel as read-only mappings.
    assert type(copy.config.procedures) is type(plan.config.procedures)

    here = run_live(plan)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        there = pool.apply(run_live, (plan,))
    assert isinstance(there, LiveRun)
    assert there.outcome == here.outcome == "success"
    assert _comparable(there) == _comparable(here)
    # The child composed the prompt the plan holds, variant included.
    assert "Look at the hall." in there.result.records[0].prompt


def test_the_run_id_is_a_content_hash_of_what_runs_and_the_repeat_index(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    config, path = project
    agent = _agent({"print": "x"})
    first = _plan(config, path, ai_cmd=agent)
    assert _plan(config, path, ai_cmd=agent).run_id == first.run_id
    # Where the session keeps its files and its stamp are not what runs.
    assert replace(first, slots_dir=tmp_path, stamp=SessionStamp("s", "s")).run_id == first.run_id
    assert _plan(config, path, ai_cmd=agent, run=2).run_id != first.run_id
    assert _plan(config, path, ai_cmd=agent + " --more").run_id != first.run_id
    assert _plan(config, path, ai_cmd=agent, max_tokens=10).run_id != first.run_id
    # A fragment edited between two runs is another plan.
    config.write_text(CONFIG.replace("the room", "the garden"))
    assert _plan(config, path, ai_cmd=agent).run_id != first.run_id


def test_every_setting_of_a_plan_says_where_it_came_from(project: tuple[Path, Path]) -> None:
    config, path = project
    given = {
        "ai_cmd": Given(_agent({"print": "x"}), "cli", "--ooda-ai-cmd"),
        "max_tokens": Given("900", "ini", "ini option ooda_max_tokens"),
        "retries": Given("0", "cli", "--ooda-retries"),
    }
    settings = decide(given, root=config.parent, front="pytest")
    plan = _plan(config, path, settings=settings, variant=parse_option("v:ai_output=claude-json"))
    shown = {key: str(source) for key, source in plan.settings.provenance.items()}
    assert shown["ai_cmd"] == "cli (--ooda-ai-cmd)"
    assert shown["max_tokens"] == "ini (ini option ooda_max_tokens)"
    assert shown["retry"] == "cli (--ooda-retries)"
    assert shown["ai_output"] == "variant (variant v (--ooda-variant))"
    found = plan.settings.provenance
    assert (found["max_cost"].tier, found["max_cost"].file) == ("scenario", path)
    assert (found["max_iterations"].tier, found["max_iterations"].line) == ("workspace", 3)
    assert (plan.settings.max_cost, plan.settings.max_iterations) == (2.5, 2)
    assert (plan.provenance["workspace"].tier, plan.provenance["workspace"].file) == (
        "scenario",
        path,
    )


def test_no_agent_anywhere_is_said_before_anything_runs(project: tuple[Path, Path]) -> None:
    config, path = project
    with pytest.raises(NoAICommandError, match="--ooda-ai-cmd="):
        _plan(config, path)


def test_a_secret_set_between_two_runs_in_one_process_is_redacted_in_the_second(
    project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, path = project
    monkeypatch.delenv("OODA_TEST_SERVICE_TOKEN", raising=False)
    # The agent prints the variable's value, and writes it into the workspace.
    agent = _script(
        "value = os.environ.get('OODA_TEST_SERVICE_TOKEN', 'none'); "
        "open('hello.txt', 'w').write(value); print('token ' + value); "
        "print('<promise>SUCCESS</promise>')"
    )
    plan = _plan(config, path, ai_cmd=agent, record_mode="all")
    first = run_live(plan)
    assert "token none" in first.result.records[0].output
    # Set now, after the plan was made and a run used it: the next run knows it.
    monkeypatch.setenv("OODA_TEST_SERVICE_TOKEN", SECRET)
    second = run_live(plan)
    assert f"token {SECRET}" in second.result.records[0].output
    assert SECRET not in second.record.to_line()
    assert SECRET not in second.report
    assert second.recording is not None
    written = write_recording(second.recording)
    assert SECRET not in written.read_text()
    assert "<redacted>" in second.record.iterations[0].output_tail


FRAGMENTS = """\
loop:
  ai_api:
    provider: anthropic
    model: test-model
    price_input_per_mtok: 3
    price_output_per_mtok: 15
procedures:
  greet:
    observe:
      - path: look.md
    orient:
      - content: "Think about {{.who}}."
        parameters: {who: everyone}
    decide:
      - content: "Decide."
    act:
      - content: "Greet. <promise>SUCCESS</promise> when done."
"""


def test_fragment_hashes_follow_the_rendered_text(tmp_path: Path) -> None:
    (tmp_path / "look.md").write_text("Look around.\n")
    (tmp_path / "ooda-config.yml").write_text(FRAGMENTS)
    before = fragment_hashes(load_config_file(tmp_path / "ooda-config.yml").procedure("greet"))
    assert [(f.phase, f.index, f.source) for f in before] == [
        ("observe", 0, "look.md"),
        ("orient", 0, "inline"),
        ("decide", 0, "inline"),
        ("act", 0, "inline"),
    ]
    (tmp_path / "look.md").write_text("Look around twice.\n")
    (tmp_path / "ooda-config.yml").write_text(FRAGMENTS.replace("who: everyone", "who: nobody"))
    after = fragment_hashes(load_config_file(tmp_path / "ooda-config.yml").procedure("greet"))
    changed = [a.key for a, b in zip(before, after, strict=True) if a.sha256 != b.sha256]
    assert changed == ["observe[0] look.md", "orient[0] inline"]

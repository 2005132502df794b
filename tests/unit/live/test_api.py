"""``live.api``: a plan's model calls through the API proxy — decided from
``record_api``, recorded by a run that met its expectations into the cassette it names,
replayed from it (a plan and its run pickling whole, cassette included), and refused for
an agent that is not a command."""

from __future__ import annotations

import multiprocessing
import pickle
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.apireplay import read_cassette
from pytest_ooda.errors import ConfigError
from pytest_ooda.live import ApiPlan, RunPlan, plan_run, run_live, write_cassette_of
from pytest_ooda.scenario import load_scenario
from pytest_ooda.settings import session_settings
from tests.unit.apireplay.helpers import Gone, Upstream

if TYPE_CHECKING:
    from collections.abc import Iterator

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'fake_ai' / 'api_agent.py'}"
CONFIG = """\
procedures:
  greet:
    default_max_iterations: 1
    act:
      - content: "Ask the model, then print <promise>SUCCESS</promise>."
"""
SCENARIO = """\
procedure: greet
expect:
  status: success
  files: {answers.txt: {contains: to and now?}}
iterations: []
"""


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "ooda-config.yml").write_text(CONFIG)
    path = tmp_path / "scenarios" / "greet" / "happy.yml"
    path.parent.mkdir(parents=True)
    path.write_text(SCENARIO)
    return tmp_path / "ooda-config.yml", path


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    server = Upstream()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key-0000000000")
    yield server
    server.close()


def _plan(config: Path, path: Path, api: ApiPlan | None = None, **session: object) -> RunPlan:
    settings = session_settings(config.parent, ai_cmd=AGENT, **session)
    return plan_run(settings, "greet", load_scenario(path), collected=config, api=api)


def test_record_api_decides_the_plans_proxy_and_its_cassette(project: tuple[Path, Path]) -> None:
    config, path = project
    assert _plan(config, path).api is None
    cassette = path.with_name("happy.cassette.jsonl")
    assert _plan(config, path, record_api="all").api == ApiPlan("record", cassette)
    assert _plan(config, path, record_api="new").api == ApiPlan("new", cassette)
    replay = ApiPlan("replay", cassette)
    assert _plan(config, path, replay, record_api="all").api == replay


def test_a_recorded_run_keeps_its_cassette_and_a_replay_in_another_process_matches(
    project: tuple[Path, Path], upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, path = project
    done = run_live(_plan(config, path, record_api="all"))
    assert done.outcome == "success"
    assert done.api is not None
    assert done.api.recorded == 2
    written = write_cassette_of(done.api)
    assert written == path.with_name("happy.cassette.jsonl")
    assert len(read_cassette(written).exchanges) == 2

    gone = Gone()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    try:
        plan = _plan(config, path, ApiPlan("replay", written))
        assert pickle.loads(pickle.dumps(plan)) == plan
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            replayed = pool.apply(run_live, (plan,))
    finally:
        gone.close()
    assert replayed.outcome == "success"
    assert replayed.api is not None
    assert replayed.api.divergence is None
    assert replayed.api.cassette is None  # a replay writes nothing
    assert gone.connections == 0
    assert len(upstream.requests) == 2


def test_a_run_that_missed_its_expectations_or_repeats_keeps_no_cassette(
    project: tuple[Path, Path], upstream: Upstream
) -> None:
    config, path = project
    path.write_text(SCENARIO.replace("answers.txt: {contains: to and now?}", "nope.txt: exists"))
    failed = run_live(_plan(config, path, record_api="all"))
    assert failed.outcome == "failure"
    assert failed.api is not None
    assert failed.api.cassette is None
    path.write_text(SCENARIO)
    settings = session_settings(config.parent, ai_cmd=AGENT, record_api="all")
    second = plan_run(settings, "greet", load_scenario(path), collected=config, run=2, runs=2)
    repeat = run_live(second)
    assert repeat.outcome == "success"
    assert repeat.api is not None
    assert repeat.api.cassette is None
    assert write_cassette_of(repeat.api) is None


def test_an_agent_that_is_an_http_api_cannot_go_through_the_proxy(
    project: tuple[Path, Path],
) -> None:
    config, path = project
    config.write_text(
        CONFIG.replace(
            "    default_max_iterations: 1\n",
            "    default_max_iterations: 1\n    ai_api: {provider: anthropic, model: m}\n",
        )
    )
    settings = session_settings(config.parent, record_api="all")
    plan = plan_run(settings, "greet", load_scenario(path), collected=config)
    with pytest.raises(ConfigError, match="need an agent command"):
        run_live(plan)

"""Fuzzing with a fixed budget: generated configs and scenarios (deep, wide, malformed)
never crash or hang the library, the ``ooda`` command or pytest collection. The long
job is ``python tools/fuzz/run.py --cases 10000``."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fuzzing import GOOD_CONFIG, GOOD_SCENARIO, load_in_process, texts, through_cli, through_pytest
from hypothesis import HealthCheck, given, settings


def fixed(examples: int) -> settings:
    """A fixed, reproducible budget: the same cases on every run, no example database."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@fixed(80)
@given(config=texts(GOOD_CONFIG), scenario=texts(GOOD_SCENARIO))
def test_library_loading_never_crashes(config: str, scenario: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outcome = load_in_process(config, scenario, Path(tmp))
    assert outcome.kind in {"ok", "clean"}, outcome.detail


@fixed(12)
@given(config=texts(GOOD_CONFIG), scenario=texts(GOOD_SCENARIO))
def test_the_ooda_command_never_crashes_or_hangs(config: str, scenario: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outcome = through_cli(config, scenario, Path(tmp))
    assert outcome.kind in {"ok", "clean"}, outcome.detail


@fixed(8)
@given(config=texts(GOOD_CONFIG))
def test_pytest_collection_never_crashes_or_hangs(config: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outcome = through_pytest(config, Path(tmp))
    assert outcome.kind in {"ok", "clean"}, outcome.detail


def test_the_good_inputs_load(tmp_path: Path) -> None:
    # The mutations start from inputs that work, so a refusal means the mutation.
    assert load_in_process(GOOD_CONFIG, GOOD_SCENARIO, tmp_path).kind == "ok"
    assert through_cli(GOOD_CONFIG, GOOD_SCENARIO, tmp_path).kind == "ok"

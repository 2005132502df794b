"""Fixtures for the plugin's end-to-end tests (helpers live in ``ooda_project``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ooda_project import DECIDE_MD, GREET_CONFIG, OBSERVE_MD, Project

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    # Keep the developer's own configuration out of these runs.
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    # Nor xdist's worker markers when this suite itself runs under -n: syrupy reads them
    # and would treat the inner run as a worker.
    for name in (
        "OODA_LOOP_AI_CMD",
        "OODA_LOOP_AI_CMD_ALIAS",
        "ROODA_LOOP_AI_CMD",
        "ROODA_LOOP_AI_CMD_ALIAS",
        "ROODA_CONFIG_HOME",
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
    ):
        monkeypatch.delenv(name, raising=False)
    created = Project(pytester)
    created.write("ooda-config.yml", GREET_CONFIG)
    created.write("prompts/observe.md", OBSERVE_MD)
    created.write("prompts/decide.md", DECIDE_MD)
    return created


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built as a wheel, once per session."""
    from wheel_env import build_wheel

    return build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed (dependencies from the
    system site-packages)."""
    from wheel_env import make_venv

    return make_venv(wheel, tmp_path_factory.mktemp("venv"))

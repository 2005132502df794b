"""Fixtures for the sandbox end-to-end tests: a pytester project (as the plugin's
integration tests write it), with the environment kept out of the inner sessions."""

from __future__ import annotations

import pytest
from integration.ooda_project import DECIDE_MD, GREET_CONFIG, OBSERVE_MD, Project


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    for name in (
        "OODA_LOOP_AI_CMD",
        "OODA_LOOP_AI_CMD_ALIAS",
        "OODA_SANDBOX",
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

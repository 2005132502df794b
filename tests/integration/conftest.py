"""Fixtures for the plugin's end-to-end tests (helpers live in ``ooda_project``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ooda_project import Project, greet_project

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    return greet_project(pytester, monkeypatch)


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

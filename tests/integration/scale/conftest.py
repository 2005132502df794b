"""Fixtures of the scale-out tests: a real cluster per test module (a Dask scheduler
with two workers; a two-node Ray cluster in a loopback-only network namespace), started
once per module and stopped by process id."""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

import pytest
from external_tools import require
from ooda_project import Project, greet_project

from .clusters import DaskCluster, RayCluster

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    require(find_spec("distributed") is not None, "Dask", "pip install 'pytest-ooda[dask]'")
    cluster = DaskCluster(tmp_path_factory.mktemp("dask"), workers=2, threads=2)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    require(find_spec("ray") is not None, "Ray", "pip install 'pytest-ooda[ray]'")
    cluster = RayCluster(tmp_path_factory.mktemp("ray"), cpus=2)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("OODA_EXECUTOR", raising=False)
    return greet_project(pytester, monkeypatch)

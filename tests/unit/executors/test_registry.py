"""``--ooda-executor`` values: ``local`` or ``ENGINE:ADDRESS``, an unknown engine or a
missing address refused with what to write, a missing extra named, and an engine from
the ``pytest_ooda.executors`` entry-point group opened like a built-in one."""

from __future__ import annotations

import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import ExecutorError
from pytest_ooda.executors import ExecutorSpec, engines, open_engine, parse_executor

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("local", ExecutorSpec("local")),
        (" local ", ExecutorSpec("local")),
        ("dask:tcp://127.0.0.1:8786", ExecutorSpec("dask", "tcp://127.0.0.1:8786")),
        ("ray:auto", ExecutorSpec("ray", "auto")),
        ("ray:ray://head.example:10001", ExecutorSpec("ray", "ray://head.example:10001")),
    ],
)
def test_values_that_read(text: str, expected: ExecutorSpec) -> None:
    assert parse_executor(text) == expected


def test_an_unknown_engine_names_the_known_ones() -> None:
    with pytest.raises(ExecutorError) as caught:
        parse_executor("dsak:tcp://127.0.0.1:8786")
    text = str(caught.value)
    assert "unknown engine 'dsak'" in text
    assert "did you mean 'dask'" in text
    assert "known engines: dask, local, ray" in text


def test_a_scheme_is_not_an_engine() -> None:
    with pytest.raises(ExecutorError, match="unknown engine 'tcp'"):
        parse_executor("tcp://127.0.0.1:8786")


@pytest.mark.parametrize("text", ["dask", "dask:", "ray:  "])
def test_an_engine_needs_an_address(text: str) -> None:
    with pytest.raises(ExecutorError, match="needs the address of its cluster"):
        parse_executor(text)


def test_local_takes_no_address() -> None:
    with pytest.raises(ExecutorError, match="local takes no address"):
        parse_executor("local:somewhere")


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # Importing a module mapped to None raises ImportError, as when it is not installed.
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ExecutorError) as caught:
        open_engine(parse_executor("dask:tcp://127.0.0.1:8786"), "s")
    assert "the dask engine is not installed" in str(caught.value)
    assert "pip install 'pytest-ooda[dask]'" in str(caught.value)


ENGINE = """
from pytest_ooda.executors import Engine

class Recorded(Engine):
    name = "recorded"
    opened = []

    def connect(self, session):
        Recorded.opened.append((self.address, session))

    def slots(self): return 1
    def share(self, data): return data
    def submit(self, key, function, *args): return function(*args)
    def collect(self, tasks, timeout): return [(task, task) for task in tasks]
    def cancel(self, task): pass
    def withdraw(self, ticket): return True
    def ledger(self): return None
    def close(self): pass

def not_an_engine(address):
    return object()
"""


def _plugin(site: Path, entries: str) -> None:
    (site / "recorded_engine.py").write_text(ENGINE)
    info = site / "recorded_engine-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recorded-engine\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_ooda.executors]\n" + textwrap.dedent(entries))


def test_an_entry_point_adds_an_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin(
        tmp_path,
        """\
        recorded = recorded_engine:Recorded
        broken = recorded_engine:not_an_engine
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "recorded" in engines()
    engine = open_engine(parse_executor("recorded:somewhere:1"), "session-1")
    assert engine.label == "recorded:somewhere:1"
    assert type(engine).opened == [("somewhere:1", "session-1")]  # type: ignore[attr-defined]
    with pytest.raises(ExecutorError, match=r"not a pytest_ooda\.executors\.Engine"):
        open_engine(parse_executor("broken:x"), "s")

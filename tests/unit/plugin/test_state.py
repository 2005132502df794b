"""The plugin's session state: the replays' scratch directories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.plugin.state import PluginState

if TYPE_CHECKING:
    from pathlib import Path


def test_scratch_directories_are_made_once_and_removed_at_close(tmp_path: Path) -> None:
    state = PluginState()
    empty, work = state.empty_dir(), state.work_dir()
    assert empty.is_dir()
    assert work.is_dir()
    assert empty != work
    assert empty.parent == work.parent
    # Every replay item asks; the answer is the same directory, not a new one.
    assert state.empty_dir() == empty
    assert state.work_dir() == work
    state.close()
    assert not empty.parent.exists()
    # A state asked again after closing (a second session in one process) starts afresh.
    again = state.empty_dir()
    assert again.is_dir()
    assert again != empty
    state.close()
    assert not again.exists()

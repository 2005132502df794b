"""The replay backend and the ``script`` helper."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.backends import Backend, BackendResult
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep, script
from pytest_ooda.errors import ScenarioError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def call(
    backend: ReplayBackend,
    tmp_path: Path,
    prompt: str = "p",
    *,
    timeout: float | None = None,
    max_output: int = 1 << 20,
    stream: Callable[[bytes], None] | None = None,
) -> BackendResult:
    return backend.run(
        prompt,
        iteration=backend.served + 1,
        workdir=tmp_path,
        timeout=timeout,
        max_output=max_output,
        stream=stream,
    )


def test_serves_steps_in_order_and_collects_prompts(tmp_path: Path) -> None:
    backend = script(["first", ("second", 3), ReplayStep(output="third", exit_code=-9)])
    assert isinstance(backend, Backend)
    results = [call(backend, tmp_path, f"prompt {i}") for i in range(3)]
    served = [(r.output, r.exit_code) for r in results]
    assert served == [("first", 0), ("second", 3), ("third", -9)]
    assert results[2].term_signal == 9
    assert backend.prompts == ["prompt 0", "prompt 1", "prompt 2"]


def test_callables_receive_the_prompt(tmp_path: Path) -> None:
    backend = script([lambda prompt: f"saw {prompt}", lambda prompt: (prompt.upper(), 2)])
    assert call(backend, tmp_path, "abc").output == "saw abc"
    second = call(backend, tmp_path, "xyz")
    assert (second.output, second.exit_code) == ("XYZ", 2)


def test_running_out_names_the_scenario(tmp_path: Path) -> None:
    backend = ReplayBackend([ReplayStep("a"), ReplayStep("b")], name="build/happy", file="s.yml")
    call(backend, tmp_path)
    call(backend, tmp_path)
    with pytest.raises(ScenarioError) as info:
        call(backend, tmp_path)
    assert str(info.value).startswith(
        "s.yml: scenario 'build/happy' has 2 iterations, loop asked for a 3rd"
    )


@pytest.mark.parametrize(("count", "text"), [(0, "1st"), (1, "2nd"), (10, "11th"), (21, "22nd")])
def test_ordinals(tmp_path: Path, count: int, text: str) -> None:
    backend = script(["x"] * count)
    for _ in range(count):
        call(backend, tmp_path)
    with pytest.raises(ScenarioError, match=rf"asked for a {text}\n"):
        call(backend, tmp_path)


def test_delay_and_file_changes(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    step = ReplayStep("ok", delay=0.2, files={"sub/new.md": "hello", "old.txt": None})
    started = time.monotonic()
    call(script([step]), tmp_path)
    assert time.monotonic() - started >= 0.2
    assert (tmp_path / "sub" / "new.md").read_text() == "hello"
    assert not (tmp_path / "old.txt").exists()


def test_delay_beyond_timeout_is_a_timeout(tmp_path: Path) -> None:
    result = call(script([ReplayStep("slow", delay=0.5)]), tmp_path, timeout=0.1)
    assert result.timed_out


def test_file_change_outside_workdir_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="outside the workspace"):
        call(script([ReplayStep("x", files={"../escape": "no"})]), tmp_path)


def test_deleting_a_symlink_removes_the_link_not_its_target(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("keep me")
    (tmp_path / "link.md").symlink_to("real.md")
    call(script([ReplayStep("x", files={"link.md": None})]), tmp_path)
    assert not (tmp_path / "link.md").is_symlink()
    assert (tmp_path / "real.md").read_text() == "keep me"


def test_output_truncated_and_streamed(tmp_path: Path) -> None:
    seen: list[bytes] = []
    result = call(script(["0123456789"]), tmp_path, max_output=4, stream=seen.append)
    assert result.output == "6789"
    assert result.truncated
    assert seen == [b"0123456789"]


def test_bad_script_item_rejected() -> None:
    with pytest.raises(TypeError, match="script step 2"):
        script(["ok", 42])  # type: ignore[list-item]

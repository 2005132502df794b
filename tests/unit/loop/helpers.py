"""Shared helpers of the loop tests that run a scripted replay backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.backends import Usage
from pytest_ooda.backends.replay import ReplayBackend, ReplayStep
from pytest_ooda.config import Config, load_config
from pytest_ooda.loop import LoopEvent, LoopResult, LoopWarning, run_procedure

if TYPE_CHECKING:
    from pathlib import Path


def _config(tmp_path: Path, extra: str = "") -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        "procedures:\n  build:\n    act:\n      - content: go\n" + extra, encoding="utf-8"
    )
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


def _steps(*usages: Usage | None, last: str = "working") -> ReplayBackend:
    return ReplayBackend(
        [ReplayStep(output=last if i == len(usages) - 1 else "working", usage=u)
         for i, u in enumerate(usages)]
    )  # fmt: skip


def _run(tmp_path: Path, backend: ReplayBackend, **options: Any) -> tuple[LoopResult, list[str]]:
    warnings: list[str] = []

    def on_event(event: LoopEvent) -> None:
        if isinstance(event, LoopWarning):
            warnings.append(event.message())

    result = run_procedure(
        options.pop("config", None) or _config(tmp_path),
        "build",
        backend=backend,
        workdir=tmp_path,
        on_event=on_event,
        handle_signals=False,
        **options,
    )
    return result, warnings


CENTS5 = Usage(1000, 100, 0.05)

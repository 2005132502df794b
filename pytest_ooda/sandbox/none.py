"""The ``none`` sandbox: today's behaviour, processes start as the user, unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.sandbox.base import Launch, Sandbox, SandboxRun

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["NoSandbox"]


class _Unwrapped(SandboxRun):
    def __init__(self) -> None:
        self.identity = {"kind": "none", "image": None, "image_id": None}

    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path) -> Launch:
        return Launch(tuple(argv), env, cwd)


class NoSandbox(Sandbox):
    """No isolation at all (see docs/sandbox.md's threat table for what that allows)."""

    kind = "none"
    isolates = False

    def start(self, workspace: Path, scratch: Path) -> SandboxRun:
        return _Unwrapped()

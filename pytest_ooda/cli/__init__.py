"""The ``ooda`` command (entry point ``pytest_ooda.cli:main``); see :mod:`.main`."""

from __future__ import annotations

from pytest_ooda.cli.main import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]

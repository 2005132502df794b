"""Helpers shared by test_app.py, test_list.py and test_show.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda import cli

if TYPE_CHECKING:
    import pytest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err

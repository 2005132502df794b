"""Judging a run live: an unknown judge alias located at the judge block."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.scenario import load_scenario

from .helpers import JUDGE, write

if TYPE_CHECKING:
    from pathlib import Path


def test_an_unknown_judge_alias_is_located_at_the_judge_block(tmp_path: Path) -> None:
    from pytest_ooda.config import load_config_file
    from pytest_ooda.errors import ConfigError
    from pytest_ooda.judge import JudgeInputs
    from pytest_ooda.judge.run import JudgeContext, judge_live

    (tmp_path / "ooda-config.yml").write_text("procedures:\n  b:\n    act: [{content: x}]\n")
    config = load_config_file(tmp_path / "ooda-config.yml")
    path = write(
        tmp_path,
        JUDGE.replace('{ai_cmd: "claude -p --output-format json"}', "{ai_cmd_alias: cluade}"),
    )
    with pytest.raises(ConfigError) as info:
        judge_live(load_scenario(path), JudgeInputs(), JudgeContext(config=config))
    assert str(info.value).startswith(f"{path}:5:12: expect.judge.judge.ai_cmd_alias: unknown")
    assert info.value.hint is not None
    assert "claude" in info.value.hint

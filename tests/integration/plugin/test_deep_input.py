"""Deeply nested input is a located error naming the limit, in every YAML we read and
through every entry point — never a crash (SIGSEGV), a hang or a traceback."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from pytest_ooda import yamlload
from pytest_ooda.errors import ConfigError, ScenarioError
from pytest_ooda.yamlload import MAX_DEPTH, load_yaml_text

if TYPE_CHECKING:
    from pathlib import Path

DEEP_SHAPES = {
    "flow-lists": "[" * 100_000 + "]" * 100_000,
    "flow-maps": "{a: " * 50_000 + "1" + "}" * 50_000,
    "block-lists": "- " * 5_000 + "x\n",
    "block-maps": "".join(" " * i + f"k{i}:\n" for i in range(2_000)) + " " * 2_000 + "v\n",
}


@pytest.mark.parametrize("text", DEEP_SHAPES.values(), ids=DEEP_SHAPES.keys())
def test_every_shape_of_deep_nesting_is_located(text: str) -> None:
    with pytest.raises(ConfigError, match=f"nesting deeper than {MAX_DEPTH} levels") as info:
        load_yaml_text(text, file="deep.yml")
    assert info.value.file == "deep.yml"
    assert info.value.line is not None
    assert info.value.column is not None


@pytest.mark.parametrize("text", DEEP_SHAPES.values(), ids=DEEP_SHAPES.keys())
def test_the_level_too_deep_is_located_where_it_opens(text: str) -> None:
    document = "loop:\n  default_max_iterations: 3\nnested: " + text
    with pytest.raises(ConfigError) as info:
        load_yaml_text(document, file="deep.yml")
    assert info.value.line is not None
    assert info.value.line >= 3


def test_a_fast_parser_that_gives_up_early_still_gets_a_located_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Newer libyaml builds scan ahead in flow collections and stop at their own nesting
    # limit before any event deep enough has been read; the check must not give up then.
    class GivesUp(yaml.SafeLoader):
        def check_event(self, *choices: Any) -> bool:
            raise yaml.scanner.ScannerError(problem="exceeded maximum nesting depth")

    monkeypatch.setattr(yamlload, "_FastLoader", GivesUp)
    with pytest.raises(ConfigError, match="nesting deeper than") as info:
        load_yaml_text("a: 1\nb: " + DEEP_SHAPES["flow-lists"], file="deep.yml")
    assert (info.value.line, info.value.column) == (2, 3 + MAX_DEPTH)


def test_aliases_cannot_nest_past_the_limit() -> None:
    chain = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 150)]
    with pytest.raises(ConfigError, match="nesting deeper than"):
        load_yaml_text("\n".join(chain) + "\n", file="aliases.yml")


def test_nesting_at_the_limit_still_loads() -> None:
    assert load_yaml_text("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


def _ooda(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ooda_show_and_lint_report_deep_parameters(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  deep:\n    act:\n      - content: '{{.x}}'\n"
        f"        parameters: {{x: {deep}}}\n",
        encoding="utf-8",
    )
    shown = _ooda("show", "deep", cwd=tmp_path)
    assert shown.returncode == 2, shown
    assert "ooda-config.yml:5:" in shown.stderr
    assert "nesting deeper than 100 levels" in shown.stderr
    linted = _ooda("lint", cwd=tmp_path)  # a finding (exit 1), located the same
    assert linted.returncode == 1, linted
    assert "ooda-config.yml:5:" in linted.stdout
    assert "nesting deeper than 100 levels" in linted.stdout
    assert "Traceback" not in shown.stderr + linted.stderr


def test_ooda_run_replay_reports_a_deep_scenario(tmp_path: Path) -> None:
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act:\n      - content: 'go'\n", encoding="utf-8"
    )
    deep = "{a: " * 50_000 + "1" + "}" * 50_000
    scenario = tmp_path / "s.yml"
    scenario.write_text(f"procedure: p\niterations:\n  - output: {deep}\n", encoding="utf-8")
    done = _ooda("run", "p", "--replay", str(scenario), cwd=tmp_path)
    assert done.returncode == 2, done
    assert "s.yml:3:" in done.stderr
    assert "nesting deeper than 100 levels" in done.stderr
    assert "Traceback" not in done.stderr


def test_scenario_loading_raises_a_scenario_error(tmp_path: Path) -> None:
    from pytest_ooda.scenario import load_scenario

    path = tmp_path / "s.yml"
    path.write_text("procedure: p\niterations:\n  - output: " + "[" * 500 + "]" * 500 + "\n")
    with pytest.raises(ScenarioError, match="nesting deeper"):
        load_scenario(path)


def test_pytest_collection_reports_a_deep_config_as_one_located_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".yml", **{"ooda-config": "procedures:\n  p:\n    act: " + "[" * 60_000 + "]" * 60_000}
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ooda-config.yml:3:*: nesting deeper than 100 levels*"])
    assert "INTERNALERROR" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()

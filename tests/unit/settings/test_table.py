"""The settings table: each row decided from a value as a front end finds it, with the
row's check and the message naming where the value was given."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.errors import UsageError
from pytest_ooda.settings import (
    SETTINGS,
    Given,
    SessionSettings,
    decide,
    session_settings,
)

if TYPE_CHECKING:
    from pathlib import Path


def decided(
    values: dict[str, Any], root: Path, *, tier: str = "cli", base: Path | None = None
) -> SessionSettings:
    """The pytest front end's settings from ``values`` (text, as given), all given on
    the command line (labelled by their flags) or in the ini file."""
    rows = {row.name: row for row in SETTINGS}
    given = {
        name: Given(
            value,
            tier,
            f"ini option {rows[name].ini}" if tier == "ini" else str(rows[name].pytest),
            base or root,
        )
        for name, value in values.items()
    }
    return decide(given, root=root, front="pytest")


def test_the_table_follows_the_house_names() -> None:
    names = [row.name for row in SETTINGS]
    assert len(names) == len(set(names))
    for row in SETTINGS:
        flag = "--ooda-" + row.name.replace("_", "-")
        assert row.pytest in (None, flag), row.name
        assert row.ini in (None, f"ooda_{row.name}"), row.name
        assert row.help.strip(), row.name
        assert row.pytest or row.ini or row.ooda, f"{row.name} has no front end"
        if row.pytest is not None:
            assert row.dest == f"ooda_{row.name}"


def test_defaults_and_where_each_was_given(tmp_path: Path) -> None:
    defaults = decided({}, tmp_path)
    assert defaults.values["record_mode"] == "none"
    assert defaults.values["drift"] == "fail"
    assert defaults.values["executor"] == "local"
    assert defaults.results_dir == tmp_path / ".ooda/results"
    # The default directory: its .ooda/ gets a .gitignore from whatever writes first.
    assert defaults.ignore_dir == tmp_path / ".ooda"
    assert defaults.run_overrides() == {}
    assert defaults.config_overrides() is None
    assert str(defaults.provenance("record_mode")) == "default (--ooda-record-mode)"

    given = decided(
        {"max_cost": "0.5", "max_tokens": " 900 ", "ai_output": "codex-json", "shard": "2/5"},
        tmp_path,
    )
    assert given.run_overrides() == {"max_cost": 0.5, "max_tokens": 900, "ai_output": "codex-json"}
    assert str(given.provenance("max_cost")) == "cli (--ooda-max-cost)"
    given = decided({"prompt_format": "rooda", "shard": " 2 / 5 "}, tmp_path)
    assert given.config_overrides() == {"prompt_format": "rooda"}
    assert given.values["shard"] == (2, 5)


def test_paths_are_read_from_where_they_were_given(tmp_path: Path) -> None:
    (tmp_path / "sub/conf").mkdir(parents=True)
    (tmp_path / "sub/conf/x.yml").write_text("{}")
    (tmp_path / "sub/qa").mkdir()
    settings = decided(
        {"config": "conf/x.yml", "scenario_dir": "qa", "results": "out"},
        tmp_path,
        tier="ini",
        base=tmp_path / "sub",
    )
    assert settings.values["config"] == tmp_path / "sub/conf/x.yml"
    assert settings.values["scenario_dir"] == tmp_path / "sub/qa"
    assert settings.results_dir == tmp_path / "sub/out"
    assert settings.ignore_dir is None
    assert settings.label("results") == "ini option ooda_results"
    assert str(settings.provenance("results")) == "ini (ini option ooda_results)"


def test_a_repeat_on_the_command_line_beats_a_scenarios(tmp_path: Path) -> None:
    from_ini = decided({"repeat": "4"}, tmp_path, tier="ini")
    assert (from_ini.runs_for(None), from_ini.runs_for(2)) == (4, 2)
    from_cli = decided({"repeat": "3"}, tmp_path)
    assert (from_cli.runs_for(None), from_cli.runs_for(9)) == (3, 3)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"config": "missing.yml"}, "ini option ooda_config: config file not found: *missing.yml"),
        ({"config": "."}, "ini option ooda_config: not a file: *"),
        ({"scenario_dir": "qa"}, "ini option ooda_scenario_dir: scenario directory not found: *qa"),
        ({"procedure_files": ("../x/*.yml",)}, "ini option ooda_procedure_files: '../x/*.yml'*"),
        ({"claude_dirs": ("plugins/x",)}, "ini option ooda_claude_dirs: directory not found: *x"),
        (
            {"claude_dirs": ("ok", " ")},
            "ini option ooda_claude_dirs: expected a path, got an empty*",
        ),
        ({"procedure_files": ("/x/*.yml",)}, "ini option ooda_procedure_files: '/x/*.yml'*"),
        ({"ai_cmd": "a 'b"}, "ini option ooda_ai_cmd: cannot split*"),
        ({"ai_cmd": "  "}, "ini option ooda_ai_cmd: the AI command is empty"),
        ({"lint_severity": ("X",)}, "ini option ooda_lint_severity: expected RULE=SEVERITY*"),
        ({"resume": "maybe"}, "ini option ooda_resume: invalid truth value 'maybe'*"),
        (
            {"record_mode": "sometimes"},
            "ini option ooda_record_mode: invalid choice: 'sometimes' *",
        ),
    ],
)
def test_unusable_values_are_usage_errors_naming_their_source(
    tmp_path: Path, values: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError) as raised:
        decided(values, tmp_path, tier="ini")
    assert fnmatch.fnmatchcase(str(raised.value).splitlines()[0], message), str(raised.value)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"repeat": "0"}, "--ooda-repeat: expected a number of runs from 1 to 10000, got '0'"),
        ({"repeat": "1e3"}, "--ooda-repeat: expected a number of runs from 1 to 10000, got '1e3'"),
        ({"results": " "}, "--ooda-results: expected a path, got an empty value"),
        ({"shard": "2"}, "--ooda-shard: expected K/N (share K of N, e.g. 2/4), got '2'"),
        ({"shard": "5/4"}, "--ooda-shard: '5/4': K must be from 1 to N and N at least 1*"),
        ({"max_cost": "abc"}, "--ooda-max-cost: expected an amount in US dollars > 0, got 'abc'"),
        ({"max_cost": "-2"}, "--ooda-max-cost: expected an amount in US dollars > 0, got '-2'"),
        ({"max_cost": "nan"}, "--ooda-max-cost: expected an amount in US dollars > 0, got 'nan'"),
        ({"max_tokens": "1e3"}, "--ooda-max-tokens: expected an integer >= 1, got '1e3'"),
        ({"retries": "-1"}, "--ooda-retries: expected an integer >= 0, got '-1'"),
        ({"sandbox": "bwarp"}, "--ooda-sandbox: unknown sandbox kind 'bwarp'; did you mean*"),
    ],
)
def test_bad_values_name_the_flag(tmp_path: Path, values: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        decided(values, tmp_path)
    assert fnmatch.fnmatchcase(str(raised.value), message), str(raised.value)


@pytest.mark.parametrize(
    ("value", "near"),
    [("onse", "once"), ("al", "all"), ("NEW", None), ("sometimes", None)],
)
def test_a_wrong_choice_offers_the_closest(tmp_path: Path, value: str, near: str | None) -> None:
    with pytest.raises(UsageError) as raised:
        decided({"record_mode": value}, tmp_path)
    message = str(raised.value)
    assert message.startswith(
        f"--ooda-record-mode: invalid choice: {value!r} (choose from 'none', 'once', 'new', 'all')"
    )
    assert message.endswith(f"; did you mean {near!r}?" if near else ")")


def test_a_value_given_empty_counts_as_not_given(tmp_path: Path) -> None:
    settings = decided({"sandbox": " ", "ai_cmd_alias": ""}, tmp_path, tier="ini")
    assert settings.values["sandbox"] is None
    assert not settings.given("sandbox")
    assert settings.run_overrides() == {}


def test_settings_made_in_python_and_changed(tmp_path: Path) -> None:
    settings = session_settings(tmp_path, ai_cmd="agent -p", record_mode="new", record_api="all")
    assert settings.run_overrides() == {"ai_cmd": "agent -p"}
    assert settings.values["record_mode"] == "new"
    quiet = settings.but(record_mode="none", record_api=None)
    assert (quiet.values["record_mode"], quiet.values["record_api"]) == ("none", None)
    assert quiet.run_overrides() == settings.run_overrides()
    with pytest.raises(TypeError, match="no such setting: colour"):
        settings.but(colour="red")
    with pytest.raises(TypeError, match="no such setting: colour"):
        session_settings(tmp_path, colour="red")

"""``sandbox:`` as written (config loop/procedure, scenario, OODA_SANDBOX, the command
line): checked and located, resolved with its provenance, shown by ``ooda show
--provenance`` and ``ooda run --dry-run``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ooda.config import load_config, resolve_run_settings, resolve_sandbox
from pytest_ooda.errors import ConfigError, ScenarioError
from pytest_ooda.sandbox import OptionError, SandboxSpec, parse_spec
from pytest_ooda.sandbox.registry import unattended_warning
from pytest_ooda.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[3]

#: An act fragment that says when to signal (`ooda run` refuses lint errors).
GO = "'go, then <promise>SUCCESS</promise>'"


def _config(tmp_path: Path, text: str, **env: str) -> Path:
    path = tmp_path / "ooda-config.yml"
    path.write_text(text)
    return path


def _load(path: Path, env: dict[str, str] | None = None, **overrides: object):  # type: ignore[no-untyped-def]
    return load_config(path, env=env or {}, overrides=overrides or None, global_config=False)


PROC = "procedures:\n  p:\n    act: [{content: " + GO + "}]\n"


def test_a_kind_name_and_a_mapping_are_read() -> None:
    assert parse_spec("bwrap") == SandboxSpec("bwrap", bare=True)
    spec = parse_spec({"kind": "docker", "image": "x:1", "network": "none", "cpus": 1.5})
    assert spec.kind == "docker"
    assert not spec.bare
    assert dict(spec.options) == {"image": "x:1", "network": "none", "cpus": 1.5}
    assert spec.describe() == "docker (image=x:1, network=none, cpus=1.5)"


@pytest.mark.parametrize(
    ("value", "key", "message"),
    [
        ("bwarp", None, "unknown sandbox kind 'bwarp'"),
        ({"image": "x"}, None, "needs kind:"),
        ({"kind": "bwrap", "netwrk": "none"}, "netwrk", "has no option 'netwrk'"),
        ({"kind": "bwrap", "network": "bridge"}, "network", "expected one of host, none"),
        ({"kind": "docker", "image": "x", "memory": "lots"}, "memory", "a size such as 512m"),
        ({"kind": "docker", "image": "x", "env": ["NOT A NAME"]}, "env", "variable name"),
        ({"kind": "docker", "image": "x", "pids_limit": 0}, "pids_limit", "integer >= 1"),
    ],
)
def test_bad_values_name_the_option(value: object, key: str | None, message: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse_spec(value)
    assert caught.value.key == key
    assert message in caught.value.message


def test_a_mistake_in_the_config_is_located_at_the_option(tmp_path: Path) -> None:
    path = _config(tmp_path, "loop:\n  sandbox:\n    kind: bwrap\n    network: bridge\n" + PROC)
    with pytest.raises(ConfigError) as caught:
        _load(path)
    error = caught.value
    assert (error.line, error.column) == (4, 14)
    assert error.message.startswith("loop.sandbox.network: expected one of host, none")


def test_a_broken_procedure_sandbox_breaks_that_procedure_only(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        "procedures:\n  p:\n    sandbox: dockr\n    act: [{content: " + GO + "}]\n"
        "  q:\n    act: [{content: " + GO + "}]\n",
    )
    config = _load(path)
    assert "q" in config.procedures
    with pytest.raises(ConfigError, match=r"procedure p: sandbox: unknown sandbox kind 'dockr'"):
        config.procedure("p")


def test_precedence_cli_then_scenario_then_procedure_then_loop(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        "loop:\n  sandbox: {kind: bwrap, network: none}\n"
        "procedures:\n  p:\n    sandbox: {kind: docker, image: img:1}\n    act: [{content: "
        + GO
        + "}]\n"
        "  q:\n    act: [{content: " + GO + "}]\n",
    )
    config = _load(path)
    spec, source = resolve_sandbox(config, "q")
    assert (spec.kind, dict(spec.options), source.tier) == (
        "bwrap",
        {"network": "none"},
        "workspace",
    )
    spec, source = resolve_sandbox(config, "p")
    assert (spec.kind, source.line) == ("docker", 5)
    scenario = parse_spec("none")
    spec, source = resolve_sandbox(config, "p", scenario)
    assert (spec.kind, source.tier) == ("none", "scenario")
    # A kind named on the command line wins, and keeps the options configured for it.
    spec, source = resolve_sandbox(config, "p", scenario, cli="bwrap")
    assert (spec.kind, dict(spec.options), source.tier) == ("bwrap", {"network": "none"}, "cli")
    # The same through a command-line override of loop.sandbox (`ooda run --sandbox`).
    forced = _load(path, sandbox="docker")
    spec, source = resolve_sandbox(forced, "q", scenario)
    assert (spec.kind, source.tier) == ("docker", "cli")


def test_oodas_sandbox_variable_is_the_environment_tier(tmp_path: Path) -> None:
    path = _config(tmp_path, "loop:\n  sandbox: {kind: bwrap, network: none}\n" + PROC)
    config = _load(path, env={"OODA_SANDBOX": "bwrap"})
    spec, source = resolve_sandbox(config, "p")
    # Named alone it keeps the file's options for the same kind.
    assert (spec.kind, dict(spec.options)) == ("bwrap", {"network": "none"})
    assert str(source) == "env (OODA_SANDBOX)"
    with pytest.raises(ConfigError, match="environment variable OODA_SANDBOX: unknown sandbox"):
        _load(path, env={"OODA_SANDBOX": "vm"})


def test_no_sandbox_is_the_default(tmp_path: Path) -> None:
    settings = resolve_run_settings(_load(_config(tmp_path, PROC)), "p", require_ai=False)
    assert settings.sandbox is None
    assert settings.provenance["sandbox"].tier == "default"


def test_a_scenario_sandbox_is_read_and_located(tmp_path: Path) -> None:
    good = tmp_path / "good.yml"
    good.write_text("procedure: p\nsandbox: {kind: docker, build: Dockerfile}\niterations: []\n")
    scenario = load_scenario(good)
    assert scenario.sandbox is not None
    assert scenario.sandbox.base_dir == tmp_path
    assert scenario.to_yaml()["sandbox"] == {"kind": "docker", "build": "Dockerfile"}
    bad = tmp_path / "bad.yml"
    bad.write_text("procedure: p\nsandbox:\n  kind: docker\n  cpus: many\niterations: []\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(bad)
    assert (caught.value.line, caught.value.message.split(":")[0]) == (4, "sandbox.cpus")


def _ooda(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OODA_", "ROODA_"))}
    full.update(OODA_CONFIG_HOME=str(cwd / "none"), PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest_ooda", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_show_provenance_and_the_dry_run_show_the_sandbox(tmp_path: Path) -> None:
    _config(tmp_path, "loop:\n  ai_cmd: my-agent\n  sandbox: {kind: bwrap, network: none}\n" + PROC)
    shown = _ooda("show", "p", "--provenance", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    [line] = [row for row in shown.stdout.splitlines() if row.strip().startswith("sandbox")]
    assert line.split() == [
        "sandbox",
        "bwrap",
        "(network=none)",
        "workspace",
        "(ooda-config.yml:3)",
    ]
    dry = _ooda("run", "p", "--dry-run", "--sandbox", "none", "--ai-cmd", "true", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    [line] = [row for row in dry.stderr.splitlines() if row.strip().startswith("sandbox")]
    assert line.split() == ["sandbox", "none", "cli", "(--sandbox)"]
    wrong = _ooda("run", "p", "--dry-run", "--sandbox", "vm", cwd=tmp_path)
    assert wrong.returncode != 0
    assert "unknown sandbox kind 'vm'" in wrong.stderr


@pytest.mark.parametrize(
    ("argv", "kind", "said"),
    [
        (("claude", "-p", "--dangerously-skip-permissions"), None, True),
        (("claude", "-p", "--permission-mode", "bypassPermissions"), "none", True),
        (("copilot", "--yolo"), None, True),
        (("claude", "-p", "--dangerously-skip-permissions"), "bwrap", False),
        (("claude", "-p"), None, False),
        (("my-agent",), None, False),
    ],
)
def test_the_unattended_note(argv: tuple[str, ...], kind: str | None, said: bool) -> None:
    spec = parse_spec(kind) if kind is not None else None
    note = unattended_warning(spec, argv)
    assert (note is not None) is said
    if note is not None:
        assert "`ooda help sandbox`" in note.message
        assert "\n" not in note.message

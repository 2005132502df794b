"""A real set of Claude Code material nobody here wrote: cc-sdd 3.0.2 (MIT), fetched from
npm at test time (``npm pack`` into a temporary directory, once per session; none of its
text is in this repository) and installed by its own installer into a test repository's
``.claude/``: its 12 commands, 9 subagents and 17 skills are collected, snapshot and
linted, and one of its commands is driven through the real Claude Code (2.1.197) by the
agent mock. Its findings are named in docs/claude-code.md."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from claude_mock import CLAUDE, require_claude
from external_tools import NODE_INSTALL, require

from pytest_ooda.agents import MATERIAL_SECTIONS, invocation_text, load_material
from pytest_ooda.lint import lint_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from claude_mock import AgentMock

VERSION = "3.0.2"
(SECTION,) = MATERIAL_SECTIONS


@pytest.fixture(scope="session")
def cc_sdd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cc-sdd's package, unpacked from ``npm pack`` (once per session)."""
    found = shutil.which("npm") is not None and shutil.which("node") is not None
    require(found, "npm", NODE_INSTALL)
    folder = tmp_path_factory.mktemp("cc-sdd")
    done = subprocess.run(
        ["npm", "pack", f"cc-sdd@{VERSION}", "--pack-destination", str(folder), "--silent"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"npm pack cc-sdd@{VERSION} failed: {done.stderr.strip()}")
    (tarball,) = folder.glob("cc-sdd-*.tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(folder, filter="data")
    return folder / "package"


def install_cc_sdd(package: Path, repository: Path) -> Path:
    """cc-sdd installed into ``repository`` as its README says: the Claude Code agent
    set (commands and subagents) and the skills set, in English."""
    repository.mkdir(parents=True, exist_ok=True)
    for flag in ("--claude-agent", "--claude-skills"):
        subprocess.run(
            ["node", str(package / "dist" / "cli.js"), flag, "--yes", "--lang", "en"],
            cwd=repository,
            capture_output=True,
            check=True,
            timeout=120,
        )
    return repository / ".claude"


def test_its_commands_subagents_and_skills_are_read_as_claude_code_names_them(
    cc_sdd: Path, tmp_path: Path
) -> None:
    material = load_material(install_cc_sdd(cc_sdd, tmp_path / "repo"))
    kinds = Counter(item.kind for item in material.items)
    assert kinds == {"command": 12, "subagent": 9, "skill": 17}
    names = {item.name for item in material.items}
    assert {"kiro:spec-init", "spec-design-agent", "kiro-spec-init", "kiro-impl"} <= names
    hidden = sorted(item.name for item in material.items if not item.model_invocable)
    assert hidden == ["kiro-discovery", "kiro-impl"]


def test_its_findings(cc_sdd: Path, tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    install_cc_sdd(cc_sdd, repository)
    (repository / "ooda-config.yml").write_text(f"{SECTION}: [.claude]\n")
    report = lint_path(None, cwd=repository)
    counts = Counter(finding.id for finding in report.findings)
    # The errors: a tool Claude Code does not have, and a front matter that is not YAML.
    errors = sorted(
        (finding.location(relative_to=repository), finding.message)
        for finding in report.findings
        if finding.severity == "error"
    )
    assert errors == [
        (
            ".claude/commands/kiro/spec-status.md:3:16",
            "command /kiro:spec-status: allowed-tools: Update is not a Claude Code tool",
        ),
        (
            ".claude/commands/kiro/validate-impl.md:4:31",
            "front matter is not YAML: while parsing a block mapping (at line 2, column 1): "
            "expected <block end>, but found '['",
        ),
    ]
    # Tools older releases had, descriptions that never say when to use them, and six
    # skills whose descriptions repeat a command's.
    assert counts == {"OODA005": 2, "OODA006": 5, "OODA304": 14, "OODA305": 6}
    collisions = sorted(
        finding.message.split(":")[0] for finding in report.findings if finding.id == "OODA305"
    )
    assert collisions == [
        "skill kiro-spec-init",
        "skill kiro-spec-quick",
        "skill kiro-spec-status",
        "skill kiro-steering-custom",
        "skill kiro-validate-design",
        "skill kiro-validate-gap",
    ]


def test_it_collects_and_snapshots_under_pytest(cc_sdd: Path, pytester: pytest.Pytester) -> None:
    install_cc_sdd(cc_sdd, pytester.path)
    pytester.makefile(".yml", **{"ooda-config": f"{SECTION}: [.claude]\n"})
    result = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update", "-W", "ignore")
    # 38 items: each a config item and a prompt item, and the directory's own config.
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1 + 2 * 38
    result.assert_outcomes(passed=75, failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED ooda-config.yml::*::config?command/kiro:spec-status?*",
            "FAILED ooda-config.yml::*::config?command/kiro:validate-impl?*",
        ]
    )
    stored = pytester.path / "__snapshots__" / "ooda-config" / f"{SECTION}[.claude]"
    assert len(list(stored.glob("*.md"))) == 38
    assert "Generate a unique feature name" in (stored / "command.kiro~spec-init.md").read_text()


SPEC_INIT = [
    {"tool": "Read", "input": {"file_path": ".kiro/settings/templates/specs/init.json"}},
    {
        "tool": "Write",
        "input": {
            "file_path": ".kiro/specs/todo-app/spec.json",
            "content": '{"feature": "todo-app"}\n',
        },
    },
    {
        "tool": "Write",
        "input": {"file_path": ".kiro/specs/todo-app/requirements.md", "content": "# Todo app\n"},
    },
    {"text": "Initialized the todo-app specification."},
]


def test_one_of_its_commands_driven_through_the_real_cli(
    cc_sdd: Path,
    pytester: pytest.Pytester,
    agent_mock: Callable[..., AgentMock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_claude()
    mock = agent_mock([SPEC_INIT], dump=True)
    mock.use(monkeypatch)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(pytester.path / ".no-global-config"))
    repository = pytester.path / "repo"
    claude = install_cc_sdd(cc_sdd, repository)
    pytester.makefile(
        ".yml",
        **{
            "ooda-config": (
                f"{SECTION}: [repo/.claude]\n"
                "procedures:\n  spec-init:\n    prompt_format: raw\n"
                "    act: [{content: /kiro:spec-init a todo app}]\n"
            )
        },
    )
    (pytester.path / "scenarios" / "spec-init").mkdir(parents=True)
    (pytester.path / "scenarios" / "spec-init" / "todo.yml").write_text(
        "procedure: spec-init\nworkspace: ../../repo\n"
        "expect:\n"
        "  files:\n    .kiro/specs/todo-app/spec.json: exists\n"
        "    .kiro/specs/todo-app/requirements.md: exists\n"
        "  activation: {command: 'kiro:spec-init'}\n"
        "  trajectory:\n"
        "    calls: [{Read: {file_path: init.json}}, {Write: {file_path: spec.json}}]\n"
        "iterations: []\n"
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-m", "live", "--ooda-ai-cmd", CLAUDE, "-W", "ignore"
    )
    result.assert_outcomes(passed=1, deselected=result.parseoutcomes().get("deselected", 0))
    # What Claude Code sent is cc-sdd's command as pytest-ooda renders it.
    command = load_material(claude).find("command", "kiro:spec-init")
    assert command is not None
    first = next(body for body in mock.bodies() if len(body.get("messages", ())) == 2)
    head, body = (block["text"] for block in first["messages"][0]["content"][1:])
    assert head + "\n" + body == invocation_text(command, "a todo app")
    [log] = (pytester.path / ".ooda" / "results").glob("*.jsonl")
    record = json.loads(log.read_text().splitlines()[0])
    assert record["outcome"] == "success"

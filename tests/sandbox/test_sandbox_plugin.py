"""An out-of-tree sandbox, registered under the ``pytest_ooda.sandboxes`` entry-point
group by a package that is only a ``.dist-info`` and a module in a temporary site
directory: named in the config, it wraps the live agent and the verification commands
(live and replayed), is stopped after each run, and its identity reaches the results
log."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from integration.ooda_project import Project

PLUGIN = '''
"""A tiny remote-style sandbox: every process goes through a launcher that logs it."""
from __future__ import annotations

import os
from pathlib import Path

from pytest_ooda.sandbox import Launch, Sandbox, SandboxRun, allowed_env


def _tag(value):
    if not isinstance(value, str) or not value:
        from pytest_ooda.sandbox import OptionError
        raise OptionError("expected a tag")
    return value


class _Run(SandboxRun):
    def __init__(self, log, tag, workspace):
        self.log, self.tag, self.workspace = log, tag, workspace
        self.identity = {"kind": "demo", "image": f"demo/{tag}", "image_id": "demo-id-1"}
        with open(log, "a") as out:
            out.write(f"start {workspace.name}\\n")

    def launch(self, argv, env, cwd):
        inner = allowed_env(env, ["PYTHONPATH"], DEMO_TAG=self.tag, DEMO_LOG=self.log)
        script = 'echo "exec $DEMO_TAG $1" >> "$DEMO_LOG"; exec "$@"'
        return Launch(("/bin/sh", "-c", script, "demo", *argv), inner, cwd)

    def stop(self):
        with open(self.log, "a") as out:
            out.write("stop\\n")


class DemoSandbox(Sandbox):
    kind = "demo"
    options = {"tag": _tag}

    def start(self, workspace, scratch):
        return _Run(os.environ["DEMO_SANDBOX_LOG"], self.spec.options["tag"], workspace)
'''

ENTRY_POINTS = "[pytest_ooda.sandboxes]\ndemo = demo_ooda_sandbox:DemoSandbox\n"
METADATA = "Metadata-Version: 2.1\nName: demo-ooda-sandbox\nVersion: 0.1\n"
AGENT = """\
import sys
sys.stdin.read()
open("made.txt", "w").write("made by the agent\\n")
print("done\\n<promise>SUCCESS</promise>")
"""


def _install_plugin(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site.mkdir()
    (site / "demo_ooda_sandbox.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "demo_ooda_sandbox-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))


def test_an_installed_plugin_sandbox_wraps_agent_and_commands(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install_plugin(tmp_path / "site", monkeypatch)
    log = tmp_path / "sandbox.log"
    monkeypatch.setenv("DEMO_SANDBOX_LOG", str(log))
    config = project.path / "ooda-config.yml"
    config.write_text(
        config.read_text().replace(
            "procedures:", "loop:\n  sandbox: {kind: demo, tag: t1}\nprocedures:", 1
        )
    )
    project.write("agent.py", AGENT)
    project.scenario(
        "made",
        "procedure: greet\nexpect:\n  status: success\n  commands:\n    - run: cat made.txt\n"
        "      output_contains: made by the agent\niterations: []\n",
    )
    result = project.run(
        "-m", "live", "--ooda-ai-cmd", f"{sys.executable} {project.path / 'agent.py'}"
    )
    result.assert_outcomes(passed=1, deselected=7)
    lines = log.read_text().splitlines()
    # The run started, the agent and then the verification shell went through the
    # launcher, and the run was stopped.
    assert lines[0] == "start workspace"
    assert lines[1] == f"exec t1 {sys.executable}"
    assert lines[2] == "exec t1 /bin/sh"
    assert lines[3] == "stop"
    [results] = (project.path / ".ooda/results").glob("*.jsonl")
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["sandbox"] == {"kind": "demo", "image": "demo/t1", "image_id": "demo-id-1"}
    # A replay runs the verification command through the same sandbox.
    log.unlink()
    project.scenario(
        "made",
        "procedure: greet\nexpect:\n  commands:\n    - run: echo replayed\n"
        "iterations:\n  - output: '<promise>SUCCESS</promise>'\n",
    )
    replay = project.run("-k", "made")
    replay.assert_outcomes(passed=1)
    assert log.read_text().splitlines()[1:] == ["exec t1 /bin/sh", "stop"]
    # Told to skip them, a replay runs no verification command at all.
    log.unlink()
    skipped = project.run("-k", "made", "--ooda-replay-commands=skip")
    skipped.assert_outcomes(passed=1)
    assert not log.exists()


def test_an_unknown_kind_names_the_installed_ones(project: Project) -> None:
    result = project.run("--ooda-sandbox", "kubernetes")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--ooda-sandbox: unknown sandbox kind 'kubernetes'*"])


def test_an_unusable_sandbox_fails_every_live_item_before_any_agent_starts(
    project: Project, tmp_path: Path
) -> None:
    marker = tmp_path / "agent-started"
    project.write("agent.py", f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n")
    config = project.path / "ooda-config.yml"
    config.write_text(
        "loop:\n  sandbox: {kind: docker, image: 'pytest-ooda-absent:0', network: none}\n"
        + config.read_text()
    )
    project.scenario("made", "procedure: greet\nrepeat: 2\niterations: []\n")
    result = project.run(
        "-m", "live", "--ooda-ai-cmd", f"{sys.executable} {project.path / 'agent.py'}"
    )  # fmt: skip
    result.assert_outcomes(failed=2, deselected=7)
    output = result.stdout.str()
    # Either the daemon or the image is missing here: each says what to do.
    assert "nothing was run" in output
    assert "Traceback" not in output
    assert not marker.exists()


def test_fresh_sandbox_runs_the_verification_commands_in_a_new_sandbox(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _install_plugin(tmp_path / "site", monkeypatch)
    log = tmp_path / "sandbox.log"
    monkeypatch.setenv("DEMO_SANDBOX_LOG", str(log))
    config = project.path / "ooda-config.yml"
    config.write_text(
        config.read_text().replace(
            "procedures:", "loop:\n  sandbox: {kind: demo, tag: t1}\nprocedures:", 1
        )
    )
    project.write("agent.py", AGENT)
    project.scenario(
        "made",
        "procedure: greet\nexpect:\n  status: success\n  fresh_sandbox: true\n  commands:\n"
        "    - run: cat made.txt\n      output_contains: made by the agent\niterations: []\n",
    )
    result = project.run(
        "-m", "live", "--ooda-ai-cmd", f"{sys.executable} {project.path / 'agent.py'}"
    )
    result.assert_outcomes(passed=1, deselected=7)
    # The agent's sandbox is stopped before the verification command starts, in a new
    # one over the same workspace; the record names the agent's.
    assert log.read_text().splitlines() == [
        "start workspace",
        f"exec t1 {sys.executable}",
        "stop",
        "start workspace",
        "exec t1 /bin/sh",
        "stop",
    ]
    [results] = (project.path / ".ooda/results").glob("*.jsonl")
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["sandbox"]["kind"] == "demo"

"""Ordinary credential files (``.env``, YAML, ``.netrc``, Docker's ``config.json``, a
Kubernetes Secret, a connection string) written and printed by an agent, and ``cat`` by
a verification command, reach none of what we write: the recording, the results log,
the HTML report and the failure report; the ordinary lines around them do."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.unit.test_redact import PLANTED

if TYPE_CHECKING:
    from pathlib import Path

    from integration.ooda_project import Project

#: The kinds the detectors missed before (issue 18, item 3).
UNQUOTED = [entry for entry in PLANTED if entry[0].startswith(
    ("dotenv", "yaml", "netrc", "docker config", "k8s", "connection", "odbc", "pgpass")
)]  # fmt: skip
ORDINARY = "ordinary: 12 passed in 3.2s"
AGENT = """\
import json, pathlib, sys
sys.stdin.read()
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
for name, text in plan.items():
    pathlib.Path(name).write_text(text + "\\n")
    print(text)
print("ordinary: 12 passed in 3.2s")
print("<promise>SUCCESS</promise>")
"""


def test_credential_files_are_redacted_everywhere_we_write(
    project: Project, tmp_path: Path
) -> None:
    assert len(UNQUOTED) == 12
    plan = {f"cred-{index}.txt": carrier for index, (_, carrier, _) in enumerate(UNQUOTED)}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    project.write("agent.py", AGENT)
    names = " ".join(sorted(plan))
    scenario = project.scenario(
        "creds",
        "procedure: greet\nexpect:\n  status: success\n  commands:\n"
        f"    - run: \"cat {names}; echo '{ORDINARY}'\"\n"
        "      output_contains: never-printed\niterations: []\n",
    )
    ai_cmd = f"{sys.executable} {project.path / 'agent.py'} {tmp_path / 'plan.json'}"
    result = project.run("-m", "live", "--ooda-ai-cmd", ai_cmd, "--ooda-record-mode", "all")
    result.assert_outcomes(failed=1, deselected=7)
    [log] = (project.path / ".ooda/results").glob("*.jsonl")
    html = tmp_path / "report.html"
    report = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "report", str(log), "--html", str(html)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    written = {
        "recording": scenario.read_text(),
        "results log": log.read_text(),
        "HTML report": html.read_text(),
        "failure report": result.stdout.str(),
        "text report": report.stdout,
    }
    for where, text in written.items():
        leaked = [kind for kind, _, secret in UNQUOTED if secret in text]
        assert leaked == [], f"{where}: {leaked}"
    # The command's output tail (the end of the `cat`) and the agent's output still
    # carry the ordinary lines.
    record = json.loads(log.read_text().splitlines()[0])
    assert ORDINARY in record["commands"][0]["output_tail"]
    assert ORDINARY in record["iterations"][0]["output_tail"]
    assert "<redacted>" in record["commands"][0]["output_tail"]

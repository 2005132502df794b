"""``.ci/run``: it runs the README's set-up commands and stops at the first failing step."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CI_SCRIPT = ROOT / ".ci" / "run"


def readme_setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Set-up \(this repository\)\n\n```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README has no set-up block"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_the_readme_test_command() -> None:
    install, tests = readme_setup_commands()
    script = CI_SCRIPT.read_text(encoding="utf-8")
    assert "ooda list" in install
    assert f"{tests} || exit $?" in script.splitlines()


def test_a_failing_test_run_stops_the_ci_script(tmp_path: Path) -> None:
    """The test line as `.ci/run` has it, under its own shell options, with a `coverage`
    that fails the way a red suite makes it fail: nothing after it runs."""
    _, tests = readme_setup_commands()
    probe = tmp_path / "probe.sh"
    probe.write_text(
        "set -euo pipefail\n"
        'coverage() { if [ "$1" = run ]; then return 1; fi; echo "coverage $1 ran"; }\n'
        f"{tests} || exit $?\n"
        "echo 'ruff ran'\n",
        encoding="utf-8",
    )
    proc = subprocess.run(["bash", str(probe)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stdout == ""


def test_a_passing_test_run_goes_on_to_the_next_step(tmp_path: Path) -> None:
    _, tests = readme_setup_commands()
    probe = tmp_path / "probe.sh"
    probe.write_text(
        "set -euo pipefail\n"
        'coverage() { echo "coverage $1 ran"; }\n'
        f"{tests} || exit $?\n"
        "echo 'ruff ran'\n",
        encoding="utf-8",
    )
    proc = subprocess.run(["bash", str(probe)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        "coverage run ran",
        "coverage combine ran",
        "coverage report ran",
        "ruff ran",
    ]

"""Every script in ``benchmarks/`` runs at a tiny size (``--quick``: tiny sizes, one
round, no goal judged; ``benchmarks/quick.py``), so a change of the library — a record's
schema, a renamed function — cannot break a benchmark unnoticed (two had: they built
records of a schema gone by). Only that each runs to its end and prints its figures is
checked here; what the figures are is the benchmarks' own business, never a test's.

A new script is run here as soon as it is in the folder, and fails until it takes
``--quick``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
#: The scripts: every module of the folder but the ``--quick`` helper itself.
SCRIPTS = sorted(path.name for path in BENCHMARKS.glob("*.py") if path.name != "quick.py")
#: What a script needs besides ``--quick`` (``{tmp}``: the test's own directory).
ARGUMENTS = {"gen_results.py": ["{tmp}/generated"]}


def test_the_folder_holds_the_benchmarks() -> None:
    assert len(SCRIPTS) >= 20
    assert set(ARGUMENTS) <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_runs_at_a_tiny_size(script: str, tmp_path: Path) -> None:
    arguments = [argument.format(tmp=tmp_path) for argument in ARGUMENTS.get(script, [])]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments, "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{script} --quick:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert done.stdout.strip(), f"{script} printed no figures"

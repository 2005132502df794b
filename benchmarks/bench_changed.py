"""Benchmark: ``ooda changed`` (change impact) on generated git projects.

A project of N scenarios (N/5 procedures of five fragments each, two of them shared by
every procedure, five scenarios per procedure, a template with a branch per
procedure) is committed; one shared fragment is edited; then, as medians:

- ``changed``: :func:`pytest_ooda.impact.changed_since` against ``HEAD`` — the project
  read at the revision from git's objects into a scratch directory, every scenario's
  surface planned and composed on both sides, compared;
- ``compose``: the same surfaces of the working tree alone (what a plain session would
  plan anyway), the baseline;
- the ratio, and the time per scenario (linear means flat).

Goal: the selection costs at most about twice composing every scenario once (both sides
are composed; the git read is small next to them), and stays linear in the scenarios.

Run: ``python benchmarks/bench_changed.py [--sizes 20 100 400] [--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.impact import changed_since, project_surfaces
from pytest_ooda.settings import session_settings

if TYPE_CHECKING:
    from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def generated_project(root: Path, scenarios: int) -> None:
    """``scenarios`` scenarios, five per procedure, committed on ``main``."""
    procedures = max(1, scenarios // 5)
    (root / "prompts").mkdir(parents=True)
    (root / "prompts/shared-a.md").write_text("Read the repository's README first.\n")
    (root / "prompts/shared-b.md").write_text("Decide what matters most, then act.\n")
    (root / "prompts/tone.md").write_text(
        '{{if eq .mode "calm"}}Work calmly.\n{{else}}Work fast.\n{{end}}'
    )
    lines = ["procedures:"]
    for number in range(procedures):
        name = f"p{number:04d}"
        (root / f"prompts/{name}.md").write_text(f"The task of procedure {number}.\n")
        lines += [
            f"  {name}:",
            "    observe:",
            "      - path: prompts/shared-a.md",
            f"      - path: prompts/{name}.md",
            "    orient:",
            "      - path: prompts/tone.md",
            f"        parameters: {{mode: {'calm' if number % 2 else 'fast'}}}",
            "    decide:",
            "      - path: prompts/shared-b.md",
            "    act:",
            '      - content: "Do it, then output <promise>SUCCESS</promise>."',
        ]
        folder = root / "scenarios" / name
        folder.mkdir(parents=True)
        for case in range(5):
            (folder / f"case{case}.yml").write_text(f"procedure: {name}\niterations: []\n")
    (root / "ooda-config.yml").write_text("\n".join(lines) + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 400])
    parser.add_argument("--repeat", type=int, default=5, help="samples per measurement")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    options = parser.parse_args()
    sizes, repeat = ([10], 1) if options.quick else (options.sizes, options.repeat)
    print(f"{'scenarios':>9}  {'changed':>9}  {'compose':>9}  {'ratio':>6}  {'per scenario':>12}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch).resolve()
            generated_project(root, size)
            (root / "prompts/shared-a.md").write_text("Read the README and the changelog.\n")
            session = session_settings(root)
            impact = changed_since(session, "HEAD")
            assert len(impact.touched) == len(impact.scenarios) == size, impact.summary()
            changed = median_seconds(lambda s=session: changed_since(s, "HEAD"), repeat)
            compose = median_seconds(lambda s=session: project_surfaces(s), repeat)
        print(
            f"{size:>9}  {changed:>8.2f}s  {compose:>8.2f}s  {changed / compose:>5.2f}x  "
            f"{changed / size * 1000:>9.1f} ms"
        )


if __name__ == "__main__":
    main()

"""Benchmark: reading a Claude Code plugin of 50 skills (plus commands and subagents).

Reports, as medians measured in the same run:
- baseline: reading every file of the plugin as text (what any reader must pay);
- load: ``load_material`` (walk, front matter parsed with marks);
- check + lint: ``check_material`` and ``lint_material`` (every config check, every
  description pair compared);
- snapshots: ``render_snapshot`` of every item;
and the ratio of the whole (load + check + lint + snapshots) to the baseline; then, as
pytest sees it, ``pytest --collect-only`` of a project whose config names the plugin
against the same project without it (pytest and the plugin starting, the config read):
the difference is what collecting the plugin's items costs.

Goal (issue 37): a plugin with 50 skills collects in well under a second.

Run: ``python benchmarks/bench_claude_material.py [--skills N] [--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from quick import parse

from pytest_ooda.agents import check_material, lint_material, load_material, render_snapshot

if TYPE_CHECKING:
    from collections.abc import Callable

_WORDS = "plan review test deploy migrate document refactor profile secure release"
WORDS = _WORDS.split()
_NOUNS = (
    "billing invoices ledger accounts payments refunds taxes exports imports reports "
    "search indexing queries caching sessions tokens logins profiles avatars uploads "
    "images videos thumbnails emails newsletters alerts webhooks schedules timers jobs "
    "queues workers clusters nodes volumes backups snapshots replicas shards metrics "
    "traces logs dashboards charts widgets themes layouts forms surveys translations"
)
NOUNS = _NOUNS.split()


def build(root: Path, skills: int) -> Path:
    """A plugin of ``skills`` skills (each with a reference file), 10 commands, 5
    subagents and a hooks file."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin/plugin.json").write_text('{"name": "bench", "version": "1.0.0"}')
    for index in range(skills):
        word = WORDS[index % len(WORDS)]
        folder = root / "skills" / f"{word}-{index}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {word}-{index}\ndescription: {word.title()}s the "
            f"{NOUNS[index]} subsystem and its {NOUNS[(index * 7 + 3) % len(NOUNS)]}. Use "
            f"when the {NOUNS[index]} need it.\n"
            "allowed-tools: Read, Grep, Bash(git:*)\n---\n"
            f"# {word} {index}\n\nRead [the reference](reference.md), run the tests, then "
            f"{word} the component.\n" + "More guidance.\n" * 60
        )
        (folder / "reference.md").write_text("Reference.\n" * 40)
    (root / "commands").mkdir()
    for index in range(10):
        (root / "commands" / f"cmd-{index}.md").write_text(
            f"---\ndescription: Command {index}\nargument-hint: <x>\n---\nDo $ARGUMENTS "
            "with !`git status`.\n"
        )
    (root / "agents").mkdir()
    for index in range(5):
        (root / "agents" / f"agent-{index}.md").write_text(
            f"---\nname: agent-{index}\ndescription: Reviews area {index}. Use after edits "
            f"to area {index}.\ntools: Read, Grep\n---\nYou review area {index}.\n"
        )
    (root / "hooks").mkdir()
    (root / "hooks/hooks.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done?"}]}]}}'
    )
    return root


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pytest_seconds(projects: list[Path], extra: list[str], repeat: int) -> list[float]:
    """The median wall time of ``pytest EXTRA`` in each project, the projects taking
    turns round by round (a drifting machine load falls on each alike)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    times: list[list[float]] = [[] for _ in projects]
    for _ in range(repeat):
        for index, folder in enumerate(projects):
            env = {**os.environ, "OODA_CONFIG_HOME": str(folder / ".no-global-config")}
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, check=False)
            times[index].append(time.perf_counter() - start)
            if done.returncode not in (0, 5):
                raise SystemExit(done.stdout.decode()[-2000:])
    return [statistics.median(each) for each in times]


def project(root: Path, plugin: Path | None) -> Path:
    """A project with one procedure, its config naming ``plugin`` (or none)."""
    root.mkdir(parents=True)
    material = f"claude: [{plugin}]\n" if plugin is not None else ""
    (root / "ooda-config.yml").write_text(
        material + "procedures:\n  p:\n    prompt_format: raw\n    act: [{content: /x}]\n"
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    args = parse(parser, skills=5, repeat=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "plugin", args.skills)
        files = [path for path in root.rglob("*") if path.is_file()]
        material = load_material(root)

        def whole() -> None:
            loaded = load_material(root)
            check_material(loaded)
            lint_material(loaded)
            for item in loaded.items:
                render_snapshot(item, loaded)

        baseline = median_seconds(lambda: [path.read_text() for path in files], args.repeat)
        load = median_seconds(lambda: load_material(root), args.repeat)
        checks = median_seconds(
            lambda: (check_material(material), lint_material(material)), args.repeat
        )
        snapshots = median_seconds(
            lambda: [render_snapshot(item, material) for item in material.items], args.repeat
        )
        total = median_seconds(whole, args.repeat)
        rounds = max(1, args.repeat // 4)
        folders = [project(Path(tmp) / "without", None), project(Path(tmp) / "with", root)]
        collect = pytest_seconds(folders, ["--collect-only"], rounds)
        pytest_seconds(folders, ["--snapshot-update"], 1)
        run = pytest_seconds(folders, [], rounds)
    print(f"plugin: {args.skills} skills, {len(material.items)} items, {len(files)} files")
    print(f"baseline: read every file     {baseline * 1e3:8.2f} ms")
    print(f"load_material                 {load * 1e3:8.2f} ms")
    print(f"check + lint                  {checks * 1e3:8.2f} ms")
    print(f"snapshots of every item       {snapshots * 1e3:8.2f} ms")
    ratio = total / baseline
    print(f"whole                         {total * 1e3:8.2f} ms  ({ratio:.1f}x baseline)")
    for what, (alone, both) in (("pytest --collect-only", collect), ("pytest", run)):
        print(
            f"{what:<21} without {alone * 1e3:8.2f} ms, with {both * 1e3:8.2f} ms: "
            f"the plugin's items {(both - alone) * 1e3:+8.2f} ms"
        )
    cost = collect[1] - collect[0]
    print(f"goal: collects in well under 1 s: {'holds' if cost < 0.5 else 'MISSED'}")


if __name__ == "__main__":
    main()

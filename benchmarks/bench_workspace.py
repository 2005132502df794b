"""Workspace change capture benchmarks (plain timing, medians; baselines in the same run).

A tree of N small files (default 20 000 in 200 directories, plus a 50 MB file) is
watched the way a recording watches a live run:

1. Unchanged iteration: ``WorkspaceChanges.capture`` when nothing changed, against a
   bare ``os.walk`` + ``os.lstat`` of the same tree (the floor for any stat-based
   diff). Goal: ratio <= 2x; no file is read.
2. Typical iteration: the same with 10 files modified and 2 created. Goal: within 2x of
   the bare walk as well (only the 12 changed files are read).
3. Naive alternative, for scale: reading and hashing every file each iteration.

Usage: ``python benchmarks/bench_workspace.py [--files 20000] [--repeats 7]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from quick import parse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_tree(root: Path, files: int) -> list[Path]:
    paths = []
    for i in range(files):
        path = root / f"d{i % 200:03d}" / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {i}\n" * 20)
        paths.append(path)
    (root / "big.bin").write_bytes(os.urandom(50 * 1024 * 1024))
    return paths


def bare_walk(root: Path) -> int:
    count = 0
    for directory, _dirs, names in os.walk(root):
        for name in names:
            os.lstat(os.path.join(directory, name))
            count += 1
    return count


def hash_all(root: Path) -> int:
    count = 0
    for directory, _dirs, names in os.walk(root):
        for name in names:
            with open(os.path.join(directory, name), "rb") as handle:
                hashlib.sha256(handle.read()).hexdigest()
            count += 1
    return count


def median_time(fn: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    from pytest_ooda.workspace import WorkspaceChanges

    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parse(parser, files=50, repeats=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_tree(root, args.files)
        changes = WorkspaceChanges(root)
        changes.start()
        # Let the files' timestamps age past the coarse-clock window first.
        old = time.time_ns() - 10_000_000_000
        for path in paths:
            os.utime(path, ns=(old, old))
        changes.start()

        walk = median_time(lambda: bare_walk(root), args.repeats)
        unchanged = median_time(lambda: changes.capture(), args.repeats)
        counter = [0]

        def typical() -> None:
            counter[0] += 1
            n = counter[0]
            for path in paths[:10]:
                path.write_text(f"edit {n}\n")
            for j in range(2):
                (root / f"new-{n}-{j}.md").write_text(f"created {n}\n")
            changes.capture()

        typical_time = median_time(typical, args.repeats)
        naive = median_time(lambda: hash_all(root), max(3, args.repeats // 2))
    print(f"tree: {args.files} files in 200 dirs + one 50 MB file")
    print(f"bare os.walk + lstat        {walk * 1000:8.1f} ms")
    print(f"capture, nothing changed    {unchanged * 1000:8.1f} ms  ratio {unchanged / walk:.2f}x")
    print(
        f"capture, 12 files changed   {typical_time * 1000:8.1f} ms  "
        f"ratio {typical_time / walk:.2f}x (includes writing them)"
    )
    print(f"read + sha256 every file    {naive * 1000:8.1f} ms  ratio {naive / walk:.2f}x")


if __name__ == "__main__":
    main()

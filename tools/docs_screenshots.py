"""The screenshots of ``docs/evaluating.md``'s "Viewing results": a generated session of
two variants (``benchmarks/gen_results.py``) served by ``ooda view`` and photographed by
headless Chromium — the sessions page, a failed run with its judge, the outputs side by
side and a comparison of the two variants.

Usage: ``python tools/docs_screenshots.py`` (writes ``docs/images/view-*.png``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
)  # fmt: skip


def shoot(url: str, target: Path, profile: Path, height: int) -> None:
    binary = shutil.which("chromium") or "/usr/bin/chromium"
    subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={target}",
         f"--window-size=1200,{height}", url],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    images = ROOT / "docs" / "images"
    images.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / ".ooda" / "results"
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "gen_results.py"), str(results),
             "--runs", "48", "--scenarios", "3", "--variants", "2", "--seed", "7"],
            check=True, stdout=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        [log] = results.glob("*.jsonl")
        records = [json.loads(line) for line in log.read_text().splitlines()]
        judged = next(r for r in records if r["judge"] and r["outcome"] == "failure")
        server = subprocess.Popen(
            [sys.executable, "-m", "pytest_ooda", "view", ".ooda/results", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=scratch,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            session = log.stem
            profile = Path(scratch) / "profile"
            shoot(url, images / "view-sessions.png", profile, 640)
            shoot(f"{url}run/{judged['id']}", images / "view-run.png", profile, 900)
            shoot(
                f"{url}outputs/{session}?scenario=build%2F{judged['scenario']}",
                images / "view-outputs.png", profile, 700,
            )  # fmt: skip
            shoot(
                f"{url}compare?session={session}&a=v1&b=v2",
                images / "view-compare.png", profile, 700,
            )  # fmt: skip
        finally:
            server.terminate()
            server.wait()
    for image in sorted(images.glob("view-*.png")):
        print(f"{image.relative_to(ROOT)}: {image.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()

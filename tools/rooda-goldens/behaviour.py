"""Regenerate tests/rooda/behaviour_goldens.json with a rooda binary you have built: how
the real rooda ENDS each run of tests/rooda/behaviour.json — its exit code, how many
times it started the AI command, the status its log gives, its last words — in the
corpus case tests/rooda/corpus/behaviour/.

Usage: python tools/rooda-goldens/behaviour.py --rooda PATH   (or ROODA_BIN=PATH)

Each run is ``rooda ARGS`` in that directory, with an empty HOME and no ROODA_*
variables; a run naming an ``agent`` gets ``--ai-cmd "python stand_in.py MODE COUNT"``
(stand_in.py, beside this file, counts its starts). A dry run naming a ``fragment``
records whether rooda's output holds that file's bytes as they are. Nothing of rooda is
kept: only what it did.

Build rooda offline (tests/rooda/README.md): ``apt-get install golang-go
golang-gopkg-yaml.v3-dev golang-github-spf13-cobra-dev golang-github-kballard-go-shellquote-dev``,
put its source at ``GOPATH/src/github.com/jomadu/rooda``, and ``GO111MODULE=off
GOPATH=$GOPATH:/usr/share/gocode go build -o rooda ./cmd/rooda``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CASE = ROOT / "tests" / "rooda" / "corpus" / "behaviour"
RUNS = ROOT / "tests" / "rooda" / "behaviour.json"
GOLDENS = ROOT / "tests" / "rooda" / "behaviour_goldens.json"
_STATUS = re.compile(r"Loop completed .*?status=([a-z-]+)")


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROODA_", "XDG_CONFIG"))}
    env["HOME"] = str(home)
    return env


def _run(binary: Path, run: dict[str, Any], env: dict[str, str], scratch: Path) -> dict[str, Any]:
    count = scratch / (run["id"] + ".starts")
    argv = [str(binary), *run["args"]]
    if "agent" in run:
        stand_in = f"{sys.executable} {HERE / 'stand_in.py'} {run['agent']} {count}"
        argv += ["--ai-cmd", stand_in]
    done = subprocess.run(argv, cwd=CASE, env=env, capture_output=True, check=False, timeout=120)
    said = done.stderr.decode("utf-8", "surrogateescape") + done.stdout.decode(
        "utf-8", "surrogateescape"
    )
    found = _STATUS.search(said)
    golden: dict[str, Any] = {
        "exit_code": done.returncode,
        "starts": len(count.read_text().splitlines()) if count.exists() else 0,
        "status": found.group(1) if found else None,
        # rooda's own last lines, not its timestamped log (timings differ every run).
        "last_words": [
            line for line in said.strip().splitlines() if line.strip() and not line.startswith("[")
        ][-2:],
    }
    if "fragment" in run:
        raw = (CASE / run["fragment"]).read_bytes().strip()
        golden["passes_fragment_bytes"] = raw in done.stdout + done.stderr
    return golden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooda", metavar="PATH", default=os.environ.get("ROODA_BIN"))
    args = parser.parse_args(argv)
    if not args.rooda:
        parser.error("give the rooda binary with --rooda PATH or ROODA_BIN")
    binary = Path(args.rooda).absolute()
    runs = json.loads(RUNS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="rooda-behaviour-") as tmp:
        scratch = Path(tmp)
        (scratch / "home").mkdir()
        env = _environment(scratch / "home")
        goldens = {run["id"]: _run(binary, run, env, scratch) for run in runs}
    text = json.dumps(goldens, indent=1, ensure_ascii=True, sort_keys=True) + "\n"
    partial = GOLDENS.with_suffix(".json.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, GOLDENS)
    print(f"behaviour: wrote {len(runs)} runs to {GOLDENS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

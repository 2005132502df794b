"""Regenerate tests/rooda/goldens.json with a rooda binary you have already built.

Usage: python tools/rooda-goldens/regen.py --rooda PATH   (or ROODA_BIN=PATH)

Every run listed in tests/rooda/runs.json is made with the real rooda in that run's
corpus directory (tests/rooda/corpus/<case>/, whose rooda-config.yml rooda reads as its
workspace config), with an empty HOME and no ROODA_* variables so nothing else is read:

- a plain run is ``rooda run <procedure> --dry-run [--context X ...]``; the golden is
  the assembled prompt rooda prints between its "--- Assembled Prompt ---" and
  "--- End Prompt ---" lines (no Iteration line), or rooda's error when it fails;
- an ``"iteration": true`` run is a real ``rooda run`` whose AI command is
  ``capture_ai.py`` (next to this file): it saves the prompt rooda pipes to it, byte for
  byte, and signals SUCCESS so the loop stops after iteration 1.

rooda is public (github.com/jomadu/rooda); build it from its repository with Go as its
README says. Nothing of rooda is kept here: only the prompts it produced for our corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RUNS = ROOT / "tests" / "rooda" / "runs.json"
CORPUS = ROOT / "tests" / "rooda" / "corpus"
GOLDENS = ROOT / "tests" / "rooda" / "goldens.json"
START = "--- Assembled Prompt ---\n\n"
END = "--- End Prompt ---\n"


def _environment(home: Path) -> dict[str, str]:
    """The caller's environment without anything that would add a config tier."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ROODA_", "XDG_CONFIG_HOME"))
    }
    env["HOME"] = str(home)
    return env


def _run(binary: Path, run: dict[str, Any], env: dict[str, str], scratch: Path) -> dict[str, Any]:
    cwd = CORPUS / run["case"]
    context: list[str] = []
    for value in run.get("context", []):
        context += ["--context", value]
    if not run.get("iteration"):
        done = subprocess.run(
            [str(binary), "run", run["procedure"], "--dry-run", *context],
            cwd=cwd,
            env=env,
            capture_output=True,
            check=False,
        )
        # rooda prints the dry run (cobra's Println) on stderr.
        text = done.stderr.decode("utf-8", "surrogateescape")
        if done.returncode != 0 or START not in text:
            return {"error": text.strip().splitlines()[-1], "exit_code": done.returncode}
        prompt = text.split(START, 1)[1]
        if END not in prompt:
            raise SystemExit(f"regen: {run['id']}: no end-of-prompt line in rooda's output")
        return {"prompt": prompt[: prompt.rindex(END)]}
    captured = scratch / (run["id"].replace("/", "__") + ".prompt")
    ai_cmd = f"{sys.executable} {HERE / 'capture_ai.py'} {captured}"
    limit = run["max_iterations"]
    limit_args = ["--unlimited"] if limit is None else ["--max-iterations", str(limit)]
    done = subprocess.run(
        [str(binary), "run", run["procedure"], "--ai-cmd", ai_cmd, *limit_args, *context],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0 or not captured.exists():
        raise SystemExit(
            f"regen: {run['id']}: rooda exited {done.returncode}: "
            + done.stderr.decode("utf-8", "replace")
        )
    return {"prompt": captured.read_bytes().decode("utf-8", "surrogateescape")}


def _version(binary: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(binary), "version"], env=env, capture_output=True, check=False, text=True
    )
    return (done.stdout or done.stderr).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooda", metavar="PATH", default=os.environ.get("ROODA_BIN"))
    args = parser.parse_args(argv)
    if not args.rooda:
        parser.error("give the rooda binary with --rooda PATH or ROODA_BIN")
    binary = Path(args.rooda).absolute()
    if not os.access(binary, os.X_OK):
        parser.error(f"not an executable file: {binary}")
    runs = json.loads(RUNS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="rooda-goldens-") as tmp:
        scratch = Path(tmp)
        (scratch / "home").mkdir()
        env = _environment(scratch / "home")
        goldens = {
            "rooda": _version(binary, env),
            "runs": {run["id"]: _run(binary, run, env, scratch) for run in runs},
        }
    text = json.dumps(goldens, indent=1, ensure_ascii=True, sort_keys=True) + "\n"
    tmp_file = GOLDENS.with_suffix(".json.tmp")
    tmp_file.write_text(text, encoding="utf-8")
    os.replace(tmp_file, GOLDENS)
    errors = sum(1 for entry in goldens["runs"].values() if "error" in entry)
    print(f"regen: wrote {len(runs)} runs ({errors} rooda refused) to {GOLDENS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate tests/conformance/goldens.json from Go's text/template.

Usage: python tools/gotemplate-oracle/regen.py [--random N] [--seed S]

The corpus is the hand-written cases (tests/conformance/handwritten.py) plus N cases
from the seeded random generator (tests/conformance/generator.py). Every case is
rendered by the Go oracle and the expected output or error is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

import generator  # noqa: E402
import handwritten  # noqa: E402
import oracle  # noqa: E402

GOLDENS = ROOT / "tests" / "conformance" / "goldens.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--random", type=int, default=generator.DEFAULT_COUNT)
    ap.add_argument("--seed", type=int, default=generator.DEFAULT_SEED)
    opts = ap.parse_args(argv)
    if not oracle.go_available():
        print("regen: `go` is not on PATH (apt-get install golang-go golang-gopkg-yaml.v3-dev)")
        return 2
    cases = handwritten.cases() + generator.cases(opts.random, opts.seed)
    ids = [c["id"] for c in cases]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        print(f"regen: duplicate case ids: {sorted(dupes)}")
        return 2
    results = oracle.run(cases)
    goldens = []
    for case, res in zip(cases, results, strict=True):
        if res["kind"] == "yaml":
            print(f"regen: {case['id']}: Go cannot decode the params: {res['error']}")
            return 2
        entry = dict(case)
        entry["kind"] = res["kind"]
        if res["kind"] == "ok":
            if "output_b64" in res:
                entry["output_b64"] = res["output_b64"]
            else:
                entry["output"] = res.get("output", "")
        else:
            entry["error"] = res["error"]
        goldens.append(entry)
    tmp = GOLDENS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(goldens, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, GOLDENS)
    kinds = {k: sum(1 for g in goldens if g["kind"] == k) for k in ("ok", "parse", "exec")}
    print(f"regen: wrote {len(goldens)} cases to {GOLDENS.relative_to(ROOT)} {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

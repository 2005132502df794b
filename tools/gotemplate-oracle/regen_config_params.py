"""Regenerate tests/conformance/config_params/goldens.json from Go (yaml.v3 + text/template).

Usage: python tools/gotemplate-oracle/regen_config_params.py

Every ``*.yml`` config in tests/conformance/config_params/ is decoded by yaml.v3 as the Go
implementation decodes config files, and each procedure phase is composed as
``ooda show --phase`` composes it. The goldens map file name to
``{"kind": "ok", "phases": {"<procedure>/<phase>": text}}`` or ``{"kind", "error"}``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "conformance" / "config_params"
GOLDENS = CORPUS / "goldens.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle  # noqa: E402


def goldens() -> dict[str, dict[str, object]]:
    """What Go makes of every corpus file, keyed by file name."""
    files = sorted(CORPUS.glob("*.yml"))
    cases = [{"id": f.name, "config": f.read_text(encoding="utf-8")} for f in files]
    out: dict[str, dict[str, object]] = {}
    for res in oracle.run_config(cases):
        entry: dict[str, object] = {"kind": res["kind"]}
        if res["kind"] == "ok":
            entry["phases"] = dict(sorted(res.get("phases", {}).items()))
        else:
            entry["error"] = res["error"]
        out[res["id"]] = entry
    return out


def main() -> int:
    if not oracle.go_available():
        print("regen: `go` is not on PATH (apt-get install golang-go golang-gopkg-yaml.v3-dev)")
        return 2
    data = goldens()
    tmp = GOLDENS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, GOLDENS)
    kinds = {k: sum(1 for g in data.values() if g["kind"] == k) for k in ("ok", "yaml")}
    print(f"regen: wrote {len(data)} configs to {GOLDENS.relative_to(ROOT)} {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

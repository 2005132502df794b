"""Build and run the Go text/template oracle (``main.go`` in this directory).

Needs ``go`` (1.19, Debian's ``golang-go``) and ``golang-gopkg-yaml.v3-dev``; it builds in
GOPATH mode against ``/usr/share/gocode`` and caches the binary by the source's hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MAIN = HERE / "main.go"


GOPATH = Path(os.environ.get("GOPATH", "/usr/share/gocode"))


def go_available() -> bool:
    """``go`` on PATH and yaml.v3 in the GOPATH (Debian: golang-gopkg-yaml.v3-dev)."""
    return shutil.which("go") is not None and (GOPATH / "src/gopkg.in/yaml.v3").is_dir()


def build() -> Path:
    """Compile the oracle once per source version; return the binary's path."""
    digest = hashlib.sha256(MAIN.read_bytes()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"gotemplate-oracle-{digest}"
    if cache.exists():
        return cache
    env = dict(os.environ)
    env.setdefault("GOPATH", str(GOPATH))
    env["GO111MODULE"] = "off"
    env.setdefault("GOCACHE", str(Path(tempfile.gettempdir()) / "gotemplate-oracle-gocache"))
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    subprocess.run(["go", "build", "-o", str(tmp), str(MAIN)], check=True, env=env, cwd=HERE)
    os.replace(tmp, cache)
    return cache


def run(cases: list[dict[str, str]], *, bench: int = 0) -> list[dict[str, Any]]:
    """Render ``cases`` (dicts with id, template, params YAML) with Go; one process."""
    binary = build()
    args = [str(binary)]
    if bench:
        args += ["-bench", str(bench)]
    proc = subprocess.run(
        args, input=json.dumps(cases).encode(), capture_output=True, check=True, timeout=600
    )
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results


def run_config(cases: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Compose every procedure phase of ``cases`` (dicts with id, config YAML) with Go."""
    binary = build()
    proc = subprocess.run(
        [str(binary), "-config"],
        input=json.dumps(cases).encode(),
        capture_output=True,
        check=True,
        timeout=600,
    )
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results

"""What redaction costs on a 4 MiB recording.

Builds a 4 MiB text shaped like agent output (prose, code, test logs, paths, a few
secrets), then times, in the same run: a plain pass of the key and token shapes only
(the baseline), and the full ``Redactor`` (environment values, shapes, assignments,
quoted values). Reports both and the ratio.

Usage: ``python benchmarks/bench_redact.py [--rounds N] [--mib N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from quick import parse

from pytest_ooda import redact
from pytest_ooda.redact import Redactor

LINES = [
    "Running `python -m pytest -q tests/unit` in /work/project",
    "FAILED tests/unit/test_app.py::test_login - AssertionError: expected 200, got 401",
    "def handler(request):  # returns the user's profile",
    '    config = {"retries": 3, "timeout": 30, "mode": "strict"}',
    "Commit 3f9c2b1d7e5a4c6b8d0f2e4a6c8b0d2f4e6a8c0b updated README.md and src/app.py",
    "I will now update the API key rotation docs in docs/security.md.",
    '  File "src/app.py", line 42, in handler',
    "export DATABASE_URL=postgres://app:s3cr3tpassw0rd@db.internal:5432/app",
    'password = "correct horse battery staple"',
    "All 57 tests passed in 3.21s",
]


def sample(mib: int) -> str:
    rng = random.Random(7)
    parts: list[str] = []
    size = 0
    while size < mib * 1024 * 1024:
        line = rng.choice(LINES)
        parts.append(line)
        size += len(line) + 1
    return "\n".join(parts)


def own_patterns_only(text: str) -> str:
    for pattern in (redact._URL_PASSWORD, redact._AUTH_HEADER, redact._BEARER):
        text = pattern.sub(redact._redact_match, text)
    for pattern in redact._OWN_TOKENS:
        text = pattern.sub(redact._redact_match, text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mib", type=int, default=4)
    args = parse(parser, rounds=1, mib=1)
    text = sample(args.mib)
    redactor = Redactor({"API_TOKEN": "tok-" + "x" * 20})
    redactor("warm up the detectors")
    base: list[float] = []
    full: list[float] = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        own_patterns_only(text)
        base.append(time.perf_counter() - started)
        started = time.perf_counter()
        out = redactor(text)
        full.append(time.perf_counter() - started)
    b, f = statistics.median(base), statistics.median(full)
    print(f"{len(text) / 2**20:.1f} MiB of agent-like output, median of {args.rounds}")
    print(f"  token shapes only (baseline)   {b:6.2f} s")
    print(f"  full Redactor                  {f:6.2f} s   ({f / b:.1f}x)")
    print(f"  redactions made: {out.count(redact.REDACTED)}")


if __name__ == "__main__":
    main()

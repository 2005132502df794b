"""Benchmark of grading: what one judge vote costs the harness, asked and cached.

A local HTTP server (standard library, on 127.0.0.1) answers every request at once with
a fixed verdict, so the figures are the harness's own: building the prompt from a run's
inputs (an output and a diff of a few hundred lines), the HTTP round trip through the
``http`` backend, parsing the strict answer, and writing the vote to the grading cache
— against reading it back from the cache on a second grading. Reported per vote, and
the ratio asked / cached.

``python benchmarks/bench_judge.py [--votes 200] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from quick import parse

from pytest_ooda.config import ApiSettings
from pytest_ooda.judge import JudgeBackendSpec, JudgeInputs, JudgeSpec, cache_for, grade
from pytest_ooda.judge.ask import make_asker

ANSWER = json.dumps(
    {
        "content": [{"type": "text", "text": '{"verdict": "pass", "reason": "fine"}'}],
        "usage": {"input_tokens": 1000, "output_tokens": 20},
    }
).encode()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)


def _inputs() -> JudgeInputs:
    diff = "".join(f"+line {n} of the plan\n" for n in range(300))
    return JudgeInputs(output="Done.\n" * 40, diff="--- /dev/null\n+++ b/PLAN.md\n" + diff)


def _round(url: str, votes: int, cache_dir: Path) -> tuple[float, float]:
    spec = JudgeSpec(
        rubric="Every step of PLAN.md has a test.",
        backend=JudgeBackendSpec(
            ai_api=ApiSettings(provider="anthropic", model="bench", base_url=url)
        ),
        votes=votes,
    )
    asker = make_asker(spec.backend, env={"ANTHROPIC_API_KEY": "bench"})
    inputs = _inputs()
    started = time.perf_counter()
    asked = grade(spec, inputs, asker, cache=cache_for(cache_dir))
    middle = time.perf_counter()
    cached = grade(spec, inputs, asker, cache=cache_for(cache_dir))
    ended = time.perf_counter()
    assert asked.passed is cached.passed is True
    assert all(vote.cached for vote in cached.votes)
    return (middle - started) / votes, (ended - middle) / votes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse(parser, votes=2, rounds=1)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    asked, cached = [], []
    try:
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                one, two = _round(url, args.votes, Path(tmp))
            asked.append(one)
            cached.append(two)
    finally:
        server.shutdown()
    ask, hit = statistics.median(asked), statistics.median(cached)
    print(f"votes per round: {args.votes}, rounds: {args.rounds} (medians)")
    print(f"asked (local HTTP judge, cache write): {ask * 1000:.2f} ms per vote")
    print(f"cached (read back):                    {hit * 1000:.3f} ms per vote")
    print(f"ratio asked / cached:                  {ask / hit:.0f}x")


if __name__ == "__main__":
    main()

"""Agent replay: a 10-tool-call Claude Code run replayed through the API proxy, against
the same run live through the offline agent stand-in, and the proxy's own cost per
request (plain timing, medians; every figure measured in the same run).

The real ``claude`` (2.1.197) runs one ``-p`` invocation that makes ten tool calls
(writes, edits, reads, commands), answered by ``../shared/tools/agent-mock``:

1. live: ``claude`` talking to the stand-in directly (no proxy);
2. record: ``claude`` through the proxy in ``record`` mode, the stand-in upstream;
3. replay: ``claude`` through the proxy in ``replay`` mode, the stand-in stopped.

Then the proxy's overhead per request: the time :meth:`ApiProxy.handle` takes for each
request of the replays (read the body, canonical form and key, match, frame and send the
answer; Claude Code's requests are ~80 KB of JSON), median and 90th percentile. And the
same requests sent straight to the replaying proxy with ``http.client`` (no agent),
against the same requests sent to the least a loopback HTTP server in Python does (a
``http.server`` that reads the body and answers the recorded response's bytes): the
direct request. Goal: a request through the proxy at most 1.5x a direct one.

On a shared, loaded machine the figures are provisional.

Usage: ``python benchmarks/bench_agent_replay.py [--rounds 5]``
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from quick import parse

from pytest_ooda.apireplay import ApiProxy, Normaliser, read_cassette, write_cassette
from pytest_ooda.apireplay.canonical import expand_skeleton
from pytest_ooda.redact import Redactor
from pytest_ooda.workspace import fresh_repository

ROOT = Path(__file__).resolve().parents[1]
MOCK = ROOT.parent / "shared" / "tools" / "agent-mock" / "agent_mock.py"
CLAUDE = ["claude", "-p", "--no-session-persistence", "--permission-mode", "bypassPermissions"]
PROMPT = "Make the files, check them, and say SUCCESS.\n"
STEPS: list[dict[str, Any]] = [
    {"tool": "Write", "input": {"file_path": "a.py", "content": "print('a')\n"}},
    {"tool": "Bash", "input": {"command": "python3 a.py > a.out", "description": "run a"}},
    {"tool": "Write", "input": {"file_path": "b.txt", "content": "one\ntwo\n"}},
    {"tool": "Read", "input": {"file_path": "b.txt"}},
    {"tool": "Edit", "input": {"file_path": "b.txt", "old_string": "two", "new_string": "2"}},
    {"tool": "Bash", "input": {"command": "cat b.txt a.out", "description": "show"}},
    {"tool": "Write", "input": {"file_path": "c/d.md", "content": "# d\n"}},
    {"tool": "Read", "input": {"file_path": "a.py"}},
    {"tool": "Edit", "input": {"file_path": "a.py", "old_string": "'a'", "new_string": "'A'"}},
    {"tool": "Bash", "input": {"command": "python3 a.py && ls -R", "description": "check"}},
    {"text": "All ten done.\n<promise>SUCCESS</promise>"},
]


class TimedProxy(ApiProxy):
    """The proxy, timing each request it answers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timings: list[float] = []

    def handle(self, handler: Any) -> None:
        started = time.perf_counter()
        super().handle(handler)
        self.timings.append(time.perf_counter() - started)


def start_mock(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    scenario = directory / "scenario.json"
    scenario.write_text(json.dumps({"sessions": [STEPS], "after_last": "repeat_last"}))
    port = directory / "port"
    process = subprocess.Popen(
        [sys.executable, str(MOCK), "--scenario", str(scenario), "--port", "0",
         "--port-file", str(port), "--log", str(directory / "log.jsonl"),
         "--watch-pid", str(os.getpid()), "--max-seconds", "3600"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 15
    while not (port.exists() and port.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the agent mock did not start")
        time.sleep(0.02)
    return process, f"http://127.0.0.1:{port.read_text().strip()}"


def claude(workdir: Path, home: Path, base_url: str) -> float:
    """Seconds for one ``claude -p`` run against ``base_url``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_MAX_RETRIES="1",
    )  # fmt: skip
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    started = time.perf_counter()
    done = subprocess.run(
        CLAUDE, input=PROMPT, cwd=workdir, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "All ten done." not in done.stdout:
        raise SystemExit(f"claude failed ({base_url}):\n{done.stdout}\n{done.stderr}")
    return elapsed


def fresh(root: Path, name: str) -> tuple[Path, Path]:
    workspace = fresh_repository(None, root / name / "workspace")
    home = root / name / "home"
    (home / ".claude").mkdir(parents=True)
    return workspace, home


def through_proxy(
    root: Path, name: str, mode: str, upstream: str, cassette: Any = None
) -> tuple[float, TimedProxy]:
    workspace, home = fresh(root, name)
    proxy = TimedProxy(
        mode,  # type: ignore[arg-type]
        cassette=cassette,
        normaliser=Normaliser.for_run(workspace=workspace, home=home),
        redact=Redactor(),
        upstreams={"anthropic": upstream},
    )
    with proxy.start():
        elapsed = claude(workspace, home, proxy.url("anthropic"))
    if proxy.divergences:
        raise SystemExit(proxy.divergences[0].describe())
    return elapsed, proxy


def direct_requests(cassette: Any, workspace: Path, rounds: int) -> list[float]:
    """Round trips of the cassette's requests sent straight to a replaying proxy."""
    bodies = [
        (e.endpoint.split(" ")[2], json.dumps(expand_skeleton(e.request, cassette.parts.get)))
        for e in cassette.exchanges
        if e.replay
    ]
    times: list[float] = []
    for _ in range(rounds):
        proxy = ApiProxy(
            "replay", cassette=cassette, normaliser=Normaliser.for_run(workspace=workspace)
        )
        with proxy.start():
            connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
            for path, body in bodies:
                started = time.perf_counter()
                connection.request("POST", "/anthropic" + path, body=body)
                connection.getresponse().read()
                times.append(time.perf_counter() - started)
            connection.close()
    return times


class _Bare(http.server.BaseHTTPRequestHandler):
    """Reads a request's body and answers ``server.answer`` as it is."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        answer: bytes = self.server.answer  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


def _answer(exchange: Any) -> bytes:
    """The bytes the recorded response was sent as (server-sent events, or a body)."""
    if exchange.events is not None:
        return "".join(
            f"event: {name}\ndata: {data}\n\n" for name, data in exchange.events
        ).encode()
    if exchange.body is not None:
        return str(exchange.body).encode()
    return json.dumps(exchange.message).encode()


def bare_requests(cassette: Any, rounds: int) -> list[float]:
    """Round trips of the cassette's requests to a bare server answering each the
    recorded response's bytes: the direct request."""
    exchanges = [e for e in cassette.exchanges if e.replay]
    times: list[float] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Bare)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for _ in range(rounds):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
            for exchange in exchanges:
                body = json.dumps(expand_skeleton(exchange.request, cassette.parts.get))
                server.answer = _answer(exchange)  # type: ignore[attr-defined]
                started = time.perf_counter()
                connection.request("POST", exchange.endpoint.split(" ")[2], body=body)
                connection.getresponse().read()
                times.append(time.perf_counter() - started)
            connection.close()
    finally:
        server.shutdown()
        server.server_close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parse(parser, rounds=1)
    if shutil.which("claude") is None or not MOCK.is_file():
        raise SystemExit(f"needs the claude CLI and {MOCK}")
    with tempfile.TemporaryDirectory(prefix="bench-agent-replay-") as tmp:
        root = Path(tmp)
        mock, url = start_mock(root)
        try:
            _, recorder = through_proxy(root, "record-0", "record", url)
            path = root / "bench.cassette.jsonl"
            write_cassette(recorder.recording(), path)
            cassette = read_cassette(path)
            times: dict[str, list[float]] = {"live": [], "record": [], "replay": []}
            handled: list[float] = []
            for number in range(args.rounds):
                # Interleaved, so a busy moment of the machine hits each alike.
                workspace, home = fresh(root, f"live-{number}")
                times["live"].append(claude(workspace, home, url))
                times["record"].append(through_proxy(root, f"rec-{number}", "record", url)[0])
                elapsed, replayer = through_proxy(
                    root, f"replay-{number}", "replay", "http://127.0.0.1:9", read_cassette(path)
                )
                times["replay"].append(elapsed)
                handled.extend(replayer.timings)
        finally:
            mock.terminate()
            mock.wait()
        sizes = [
            len(json.dumps(expand_skeleton(e.request, cassette.parts.get)))
            for e in cassette.exchanges
        ]
        version = subprocess.run(["claude", "--version"], capture_output=True, text=True)
        print(f"cores: {os.cpu_count()}; claude {version.stdout.strip()}")
        print(f"run: {len(STEPS) - 1} tool calls, {len(cassette.exchanges)} requests "
              f"(median body {statistics.median(sizes) / 1024:.0f} KiB); cassette "
              f"{path.stat().st_size / 1024:.0f} KiB; {args.rounds} rounds, medians")  # fmt: skip
        for label, values in times.items():
            print(f"  {label:7s} {statistics.median(values):6.2f} s  (min {min(values):.2f})")
        live, replay = statistics.median(times["live"]), statistics.median(times["replay"])
        print(f"  replay / live: {replay / live:.2f}")
        handled.sort()
        p90 = handled[int(len(handled) * 0.9) - 1]
        print(f"proxy overhead per request in replay ({len(handled)} requests): median "
              f"{statistics.median(handled) * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms "
              f"(goal <= 2 ms)")  # fmt: skip
        proxied = direct_requests(cassette, root / "direct" / "workspace", args.rounds)
        bare = bare_requests(cassette, args.rounds)
        ratio = statistics.median(proxied) / statistics.median(bare)
        print(f"round trip of the same requests with http.client: through the replaying "
              f"proxy {statistics.median(proxied) * 1000:.2f} ms, direct (a bare server) "
              f"{statistics.median(bare) * 1000:.2f} ms: {ratio:.2f}x "
              f"(goal <= 1.5x)")  # fmt: skip


if __name__ == "__main__":
    main()

"""Reading an agent CLI's stream-json through the command backend (plain timing, medians;
the baseline is measured in the same run).

1. Throughput: ``cat`` of a Claude Code stream-json file (tool calls with 4 KiB results,
   a result event at the end) read through the command backend with ``ai_output:
   claude-stream-json``, against the least any reader of it must do in Python: a child
   that reads the same ``cat`` through a pipe and ``json.loads`` every line. Goals: ratio
   (backend time / bare parse time) <= 2x, and >= 50 MB/s. The same file captured as
   plain text is shown for scale.
2. Memory: the structured read of that file, and of one 512 MiB line without a newline
   (a tool result no buffer should hold), each in a fresh process. Goal: peak RSS <= the
   10 MB output buffer + 60 MB (no copy of the stream is kept; an overlong line is
   skipped, not buffered).

Usage: ``python benchmarks/bench_agent_output.py [--mib 128] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from quick import parse

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20
BUFFER = 10 * MB

_BARE = """
import json, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(["cat", sys.argv[1]], stdout=subprocess.PIPE)
for line in proc.stdout:
    json.loads(line)
proc.wait()
print(json.dumps({"elapsed": time.perf_counter() - start}))
"""

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from pytest_ooda.backends.command import CommandBackend
path, kind = sys.argv[1], sys.argv[2]
backend = CommandBackend(["cat", path], ai_output=kind)
start = time.perf_counter()
result = backend.run("", iteration=1, workdir=Path("."), timeout=None,
                     max_output=int(sys.argv[3]), stream=None)
elapsed = time.perf_counter() - start
print(json.dumps({"elapsed": elapsed, "error": result.error, "calls": len(result.tool_calls),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def write_stream(path: Path, mib: int) -> int:
    """A stream-json file of about ``mib`` MiB; returns the number of tool calls."""
    body = "x" * 4096
    calls = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "system", "subtype": "init", "model": "m"}) + "\n")
        while out.tell() < mib * MB:
            calls += 1
            call_id = f"t{calls}"
            use = {"type": "tool_use", "id": call_id, "name": "Read",
                   "input": {"file_path": f"/w/src/file{calls}.py"}}  # fmt: skip
            said = {"type": "text", "text": "Reading the next file."}
            result = {"type": "tool_result", "tool_use_id": call_id, "content": body}
            out.write(json.dumps({"type": "assistant", "message": {"content": [said, use]}}))
            out.write("\n" + json.dumps({"type": "user", "message": {"content": [result]}}))
            out.write("\n")
        usage = {"input_tokens": 1, "output_tokens": 1}
        final = {"type": "result", "is_error": False, "result": "done", "num_turns": calls,
                 "total_cost_usd": 1.0, "usage": usage}  # fmt: skip
        out.write(json.dumps(final) + "\n")
    return calls


def run_child(path: Path, kind: str) -> dict[str, float]:
    code = _BARE if kind == "bare" else _CHILD
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), kind, str(BUFFER)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    data: dict[str, float] = json.loads(done.stdout)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--long-mib", type=int, default=512, help="the line without a newline")
    args = parse(parser, mib=1, repeats=1, long_mib=BUFFER // MB + 2)
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "stream.jsonl"
        calls = write_stream(stream, args.mib)
        size = stream.stat().st_size
        text_times, bare_times, json_times, rss = [], [], [], []
        for _ in range(args.repeats):
            text_times.append(run_child(stream, "text")["elapsed"])
            bare_times.append(run_child(stream, "bare")["elapsed"])
            read = run_child(stream, "claude-stream-json")
            assert read["error"] is None, read
            assert read["calls"] == calls, read
            json_times.append(read["elapsed"])
            rss.append(read["maxrss_kb"] / 1024)
        long_line = Path(tmp) / "long.jsonl"
        with long_line.open("wb") as out:
            out.write(b'{"type": "user", "message": {"content": "')
            chunk = b"y" * MB
            for _ in range(args.long_mib):
                out.write(chunk)
        long = run_child(long_line, "claude-stream-json")
        assert "was skipped" in str(long["error"]), long
    text_s, json_s = statistics.median(text_times), statistics.median(json_times)
    bare_s = statistics.median(bare_times)
    ratio = json_s / bare_s
    throughput = size / MB / json_s
    limit = BUFFER / MB + 60
    results = {
        "stream_mib": round(size / MB, 1),
        "tool_calls": calls,
        "text_capture_s": round(text_s, 3),
        "bare_json_lines_s": round(bare_s, 3),
        "structured_s": round(json_s, 3),
        "ratio": round(ratio, 2),
        "structured_mb_s": round(throughput, 1),
        "peak_rss_mb": round(max(rss), 1),
        "long_line_peak_rss_mb": round(long["maxrss_kb"] / 1024, 1),
    }
    print(json.dumps(results, indent=2))
    ok = ratio <= 2 and throughput >= 50 and max(rss) <= limit and long["maxrss_kb"] / 1024 <= limit
    print(
        f"goals: ratio <= 2x: {ratio:.2f}x; >= 50 MB/s: {throughput:.0f} MB/s; "
        f"peak RSS <= {limit:.0f} MB: {max(rss):.0f} MB and {long['maxrss_kb'] / 1024:.0f} MB "
        f"-> {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())

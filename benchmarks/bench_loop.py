"""Loop runner benchmarks (plain timing, medians; baselines measured in the same run).

1. Per-iteration overhead: ``run_procedure`` driving a trivial AI command (``wc -c``: reads
   the whole prompt, prints one line) for N iterations, against a plain shell loop doing
   ``cat prompt | wc -c`` N times with the same prompt. Goal: ratio <= 1.5x.
2. Capture: the command backend reading 1 GiB of AI output (``head -c 1G /dev/zero``)
   through the default 10 MB buffer, in a fresh process so its peak RSS is its own.
   Goals: >= 300 MB/s, peak RSS <= buffer + 60 MB. The same producer piped into
   ``cat > /dev/null`` is the pipe-speed baseline.

Usage: ``python benchmarks/bench_loop.py [--iterations 200] [--repeats 5] [--gib 1]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quick import parse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 1 << 20
DEFAULT_BUFFER = 10 * MB

_CAPTURE_CHILD = """
import json, resource, sys, time
from pathlib import Path
from pytest_ooda.backends.command import CommandBackend
size, buffer = int(sys.argv[1]), int(sys.argv[2])
backend = CommandBackend(["head", "-c", str(size), "/dev/zero"])
start = time.perf_counter()
result = backend.run("", iteration=1, workdir=Path("."), timeout=None,
                     max_output=buffer, stream=None)
elapsed = time.perf_counter() - start
assert result.total_bytes == size and len(result.output) == buffer, result.total_bytes
print(json.dumps({"elapsed": elapsed,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

_IDLE_CHILD = """
import json, resource
from pytest_ooda.backends.command import CommandBackend
print(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def bench_overhead(iterations: int, repeats: int) -> dict[str, float]:
    from pytest_ooda.compose import assemble_prompt
    from pytest_ooda.config import load_config
    from pytest_ooda.loop import run_procedure

    if shutil.which("wc") is None or shutil.which("sh") is None:
        raise SystemExit("needs sh and wc on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        config = load_config(cwd=work, env={}, global_config=False)
        prompt = assemble_prompt(
            config.procedure("build"), iteration=1, max_iterations=iterations, cwd=work
        )
        prompt_file = work / "prompt.md"
        prompt_file.write_text(prompt)
        shell = (
            f"i=0; while [ $i -lt {iterations} ]; do "
            f"cat {prompt_file} | wc -c >/dev/null; i=$((i+1)); done"
        )
        runner_times, shell_times = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(["sh", "-c", shell], check=True)
            shell_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = run_procedure(
                config,
                "build",
                ai_cmd="wc -c",
                max_iterations=iterations,
                workdir=work,
                handle_signals=False,
            )
            runner_times.append(time.perf_counter() - start)
            if result.status != "max-iters" or result.iterations != iterations:
                raise SystemExit("unexpected run:\n" + result.report())
    runner = statistics.median(runner_times)
    shell_loop = statistics.median(shell_times)
    return {
        "iterations": iterations,
        "prompt_bytes": len(prompt.encode()),
        "runner_ms_per_iter": runner / iterations * 1000,
        "shell_ms_per_iter": shell_loop / iterations * 1000,
        "ratio": runner / shell_loop,
    }


def bench_capture(gib: float, repeats: int) -> dict[str, float]:
    size = int(gib * 1024 * MB)
    env_path = str(ROOT)
    rates, rss = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", _CAPTURE_CHILD, str(size), str(DEFAULT_BUFFER)],
            capture_output=True,
            text=True,
            check=True,
            cwd=env_path,
        )
        data = json.loads(out.stdout)
        rates.append(size / MB / data["elapsed"])
        rss.append(data["maxrss_kb"] / 1024)
    idle = json.loads(
        subprocess.run(
            [sys.executable, "-c", _IDLE_CHILD],
            capture_output=True,
            text=True,
            check=True,
            cwd=env_path,
        ).stdout
    )
    pipe_rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(["sh", "-c", f"head -c {size} /dev/zero | cat > /dev/null"], check=True)
        pipe_rates.append(size / MB / (time.perf_counter() - start))
    return {
        "bytes": size,
        "buffer_mb": DEFAULT_BUFFER / MB,
        "capture_mb_per_s": statistics.median(rates),
        "pipe_cat_mb_per_s": statistics.median(pipe_rates),
        "peak_rss_mb": max(rss),
        "idle_rss_mb": idle["maxrss_kb"] / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gib", type=float, default=1.0)
    args = parse(parser, iterations=5, repeats=1, gib=0.01)

    overhead = bench_overhead(args.iterations, args.repeats)
    print(
        f"overhead: {overhead['iterations']} iterations, prompt {overhead['prompt_bytes']} bytes: "
        f"runner {overhead['runner_ms_per_iter']:.2f} ms/iter, "
        f"shell `cat prompt | wc -c` {overhead['shell_ms_per_iter']:.2f} ms/iter, "
        f"ratio {overhead['ratio']:.2f}x (goal <= 1.5x)"
    )
    capture = bench_capture(args.gib, max(1, min(args.repeats, 3)))
    budget = capture["buffer_mb"] + 60
    print(
        f"capture: {capture['bytes'] / MB:.0f} MB through a {capture['buffer_mb']:.0f} MB buffer: "
        f"{capture['capture_mb_per_s']:.0f} MB/s (goal >= 300; `head | cat` baseline "
        f"{capture['pipe_cat_mb_per_s']:.0f} MB/s), peak RSS {capture['peak_rss_mb']:.1f} MB "
        f"(goal <= {budget:.0f} MB; interpreter + imports alone {capture['idle_rss_mb']:.1f} MB)"
    )


if __name__ == "__main__":
    main()

"""Benchmark: load the built-in config and assemble every procedure's prompt.

Reports, as medians:
- cold: a new Python process that imports pytest_ooda, loads the config and assembles
  all built-in prompts, next to a bare ``python -c pass`` measured in the same run;
- warm: in one process, ``load_config`` and the assembly of all built-in prompts repeated;
- scaling: configs of 16 to 1,000 generated procedures that share the built-in
  fragments, load + assemble time and the time per procedure (linear means flat);
- layouts: the same warm assembly in rooda's layout (``prompt_format="rooda"``) as a
  ratio of ours, with two context values (one a file).

Goal (issue 3): warm assembly of all 16 well under 10 ms; scaling linear. Goal (issue
11): rooda's layout costs about what ours does (ratio near 1).

Run: ``python benchmarks/bench_compose.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from quick import parse

from pytest_ooda.compose import assemble_prompt
from pytest_ooda.config import Procedure, load_builtin_config, load_config

if TYPE_CHECKING:
    from collections.abc import Callable

COLD_SCRIPT = """
from pytest_ooda.compose import assemble_prompt
from pytest_ooda.config import load_config
cfg = load_config(env={}, global_config=False)
for proc in cfg.procedures.values():
    assemble_prompt(proc, iteration=1, max_iterations=5)
"""


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_process(code: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True)


def generated_config(directory: Path, count: int) -> Path:
    """``count`` procedures cycling through the built-ins' phase lists (shared fragments)."""
    builtin = load_builtin_config()
    templates = list(builtin.procedures.values())
    lines = ["procedures:"]
    for index in range(count):
        source = templates[index % len(templates)]
        lines.append(f"  gen-{index:04d}:")
        lines.append(f'    display: "Generated {index}"')
        for phase, actions in source.phases().items():
            if not actions:
                continue
            lines.append(f"    {phase}:")
            lines.extend(f'      - path: "{action.path}"' for action in actions)
    path = directory / f"gen-{count}.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="samples per measurement")
    options = parse(parser, repeat=1)
    repeat = options.repeat

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"python {sys.version.split()[0]}, {repeat} samples per figure (medians)\n")

        cold_samples = 1 if options.quick else max(5, repeat // 2)
        bare = median_seconds(lambda: run_process("pass", work), cold_samples)
        cold = median_seconds(lambda: run_process(COLD_SCRIPT, work), cold_samples)
        print("cold (new process)")
        print(f"  python -c pass                         {bare * 1000:8.1f} ms")
        print(f"  import + load + assemble all built-ins {cold * 1000:8.1f} ms")
        print(f"  our share (difference)                 {(cold - bare) * 1000:8.1f} ms\n")

        cfg = load_config(cwd=work, env={}, global_config=False)
        procs = list(cfg.procedures.values())

        def assemble_all() -> None:
            for proc in procs:
                assemble_prompt(proc, iteration=1, max_iterations=5)

        assemble_all()
        warm_assemble = median_seconds(assemble_all, repeat * 10)
        warm_load = median_seconds(
            lambda: load_config(cwd=work, env={}, global_config=False), repeat * 4
        )
        print(f"warm (in-process, {len(procs)} built-in procedures)")
        print(f"  load_config (built-ins cached)         {warm_load * 1000:8.2f} ms")
        print(
            f"  assemble all {len(procs)} prompts               {warm_assemble * 1000:8.2f} ms"
            f"   (goal: well under 10 ms)\n"
        )

        (work / "task.md").write_text("Rename the loader.\n\nKeep the API.\n", encoding="utf-8")
        context = ("task.md", "Prefer small commits.")

        def assemble_layout(layout: str) -> Callable[[], None]:
            laid_out = [replace(proc, prompt_format=layout) for proc in procs]

            def run() -> None:
                for proc in laid_out:
                    assemble_prompt(proc, iteration=1, max_iterations=5, context=context, cwd=work)

            return run

        ours = median_seconds(assemble_layout("ooda"), repeat * 10)
        theirs = median_seconds(assemble_layout("rooda"), repeat * 10)
        print("layouts (warm, all built-ins, with two context values)")
        print(f"  prompt_format ooda                     {ours * 1000:8.2f} ms")
        print(
            f"  prompt_format rooda                    {theirs * 1000:8.2f} ms"
            f"   ({theirs / ours:.2f}x of ooda)\n"
        )

        print("scaling (generated procedures sharing the built-in fragments)")
        print("  procedures   load ms   assemble ms   total ms   us/procedure")
        baseline: float | None = None
        for count in (16, 100) if options.quick else (16, 100, 250, 500, 1000):
            path = generated_config(work, count)

            def load(path: Path = path) -> object:
                return load_config(path, cwd=work, env={}, builtin=False, global_config=False)

            loaded = load_config(path, cwd=work, env={}, builtin=False, global_config=False)
            generated = list(loaded.procedures.values())

            def assemble(generated: list[Procedure] = generated) -> None:
                for proc in generated:
                    assemble_prompt(proc, iteration=1, max_iterations=5)

            samples = max(3, repeat // 3)
            load_time = median_seconds(load, samples)
            assemble_time = median_seconds(assemble, samples)
            total = load_time + assemble_time
            per = total / count * 1e6
            baseline = baseline or per
            print(
                f"  {count:10d}  {load_time * 1000:8.1f}  {assemble_time * 1000:12.1f}"
                f"  {total * 1000:9.1f}  {per:13.0f}   ({per / baseline:.2f}x of 16)"
            )


if __name__ == "__main__":
    main()

"""Benchmark: cost of typing fragment parameters like yaml.v3 when a config is loaded.

A generated config with many fragment actions, each with a dozen parameters of mixed
shapes, is parsed by ``yamlload.load_yaml_file`` twice in the same run: with YAML 1.1
typing everywhere (the baseline) and with the parameters subtree typed like yaml.v3 (what
``config.py`` does). Also reports ``load_config_file`` end to end.

Run: ``python benchmarks/bench_params_typing.py [--repeat N] [--actions N]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from quick import parse

from pytest_ooda.config import GO_TYPED_PARAMETERS, load_config_file
from pytest_ooda.yamlload import load_yaml_file

if TYPE_CHECKING:
    from collections.abc import Callable

ACTION = """\
      - content: "{{.name}} {{.count}} {{.when}}"
        parameters:
          name: action-INDEX
          flag: yes
          mode: off
          count: INDEX
          ratio: 1e3
          octal: 0o17
          hex: 0xFF
          big: 18446744073709551615
          when: 2024-01-02
          none: ~
          quoted: "on"
          list: [1, two, 3.0, no]
          nested: {a: 1, b: [x, y], c: {d: true}}
"""


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def generated_config(directory: Path, actions: int) -> Path:
    lines = ["procedures:\n"]
    per_procedure = 10
    for proc in range(max(1, actions // per_procedure)):
        lines.append(f"  p{proc}:\n    observe:\n")
        lines.extend(
            ACTION.replace("INDEX", str(proc * per_procedure + i)) for i in range(per_procedure)
        )
    path = directory / "ooda-config.yml"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--actions", type=int, default=500)
    opts = parse(ap, repeat=1, actions=10)
    with tempfile.TemporaryDirectory() as tmp:
        path = generated_config(Path(tmp), opts.actions)
        go_typed = GO_TYPED_PARAMETERS
        load_yaml_file(path, go_typed=go_typed)  # warm the lazy import of the resolver
        yaml11 = median_seconds(lambda: load_yaml_file(path), opts.repeat)
        yamlv3 = median_seconds(lambda: load_yaml_file(path, go_typed=go_typed), opts.repeat)
        full = median_seconds(lambda: load_config_file(path), opts.repeat)
    print(f"{opts.actions} fragment actions x 13 parameters, {opts.repeat} samples (medians)")
    print(f"  parse, YAML 1.1 typing everywhere (baseline) {yaml11 * 1000:8.1f} ms")
    print(
        f"  parse, parameters typed like yaml.v3          {yamlv3 * 1000:8.1f} ms"
        f"   ({yamlv3 / yaml11:.2f}x)"
    )
    print(f"  load_config_file (parse + schema + checks)    {full * 1000:8.1f} ms")


if __name__ == "__main__":
    main()

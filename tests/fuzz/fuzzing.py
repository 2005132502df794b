"""Fuzzing pytest-ooda's inputs: generated configs and scenarios, deep and wide, driven
through the library, the ``ooda`` command and pytest collection.

Shared by the suite (``tests/fuzz/test_fuzz.py``, a small fixed budget) and the long job
(``python tools/fuzz/run.py --cases 10000``). Every case ends one of three ways: it loads
(or runs), it is refused with a clean located error, or it is a defect — a crash
(another exception, a traceback, a signal death, INTERNALERROR) or a hang (past the
time limit).
"""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]

GOOD_CONFIG = """\
loop:
  default_max_iterations: 3
procedures:
  fz:
    display: "Fuzz"
    observe:
      - content: "Look at {{.room}}."
        parameters: {room: kitchen, items: [a, b], nested: {k: v}}
    orient:
      - content: "Think."
    decide:
      - content: "Emit <promise>FAILURE</promise> when blocked."
    act:
      - content: "Act, then <promise>SUCCESS</promise>."
"""

GOOD_SCENARIO = """\
procedure: fz
expect: {status: success}
iterations:
  - output: "working"
  - output: "done\\n<promise>SUCCESS</promise>"
"""

_SCALARS = ["x", "", "~", "null", "yes", "1e3", "0x1F", "-", "'q'", '"\\ud800"', "&a", "*a",
            "!!binary aGk=", "!!timestamp 2024-01-02", "{{.x}}", "{{", "\t", "<<: *a",
            "2001-12-14t21:59:43.10-05:00", ".inf", "0o777", "ü", "\u202e", "\x00"]  # fmt: skip


def nested(kind: str, depth: int, leaf: str = "1") -> str:
    """A value nested ``depth`` levels deep, flow or block style."""
    if kind == "flow-list":
        return "[" * depth + leaf + "]" * depth
    if kind == "flow-map":
        return "{k: " * depth + leaf + "}" * depth
    if kind == "block-list":
        return "\n" + "".join("  " * i + "-\n" for i in range(depth)) + "  " * depth + leaf
    return "\n" + "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + leaf


def mutate(text: str, rng: random.Random) -> str:
    """One random change to a YAML text: deep or wide values, odd scalars, tabs, cuts,
    duplicated lines, aliases."""
    lines = text.split("\n")
    choice = rng.randrange(9)
    at = rng.randrange(len(lines))
    if choice == 0:  # a deep value where a value was
        kind = rng.choice(["flow-list", "flow-map", "block-list", "block-map"])
        # block styles indent every level, so their text grows with the square of depth
        depth = rng.choice(
            [50, 101, 500, 5_000, 60_000] if kind.startswith("flow") else [50, 101, 400, 1_200]
        )
        if lines[at].rstrip().endswith(":") or ": " in lines[at]:
            key = lines[at].split(":", 1)[0]
            lines[at] = f"{key}: {nested(kind, depth)}"
    elif choice == 1:  # a wide mapping or list
        width = rng.choice([100, 5_000, 50_000])
        lines.insert(at, "wide: {" + ", ".join(f"k{i}: {i}" for i in range(width)) + "}")
    elif choice == 2:  # an odd scalar
        if ": " in lines[at]:
            key = lines[at].split(": ", 1)[0]
            lines[at] = f"{key}: {rng.choice(_SCALARS)}"
    elif choice == 3:  # tabs and stray indentation
        lines[at] = "\t" + lines[at] if rng.random() < 0.5 else " " + lines[at]
    elif choice == 4:  # cut the file short
        return "\n".join(lines[: at + 1])[: rng.randrange(1, len(text) + 1)]
    elif choice == 5:  # a duplicated line (duplicate keys)
        lines.insert(at, lines[at])
    elif choice == 6:  # an alias bomb
        bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        bomb += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 8)]
        lines[at:at] = bomb
    elif choice == 7:  # a long string
        lines.insert(at, "long: " + "x" * rng.choice([10_000, 2_000_000]))
    else:  # random characters
        chars = list(lines[at])
        for _ in range(rng.randrange(1, 5)):
            if chars:
                chars[rng.randrange(len(chars))] = rng.choice("[]{}:-&*!|>'\"#%@`,?\t ")
        lines[at] = "".join(chars)
    return "\n".join(lines)


def mutated(base: str, seed: int, rounds: int = 2) -> str:
    rng = random.Random(seed)
    text = base
    for _ in range(rng.randrange(1, rounds + 1)):
        text = mutate(text, rng)
    return text


def texts(base: str) -> st.SearchStrategy[str]:
    """Hypothesis strategy: mutations of ``base``, plus bare deep structures."""
    deep = st.builds(
        nested,
        st.sampled_from(["flow-list", "flow-map", "block-list", "block-map"]),
        st.integers(min_value=1, max_value=1_200),
    )
    return st.one_of(
        st.integers(min_value=0, max_value=2**32).map(lambda s: mutated(base, s)), deep
    )


@dataclass
class Outcome:
    """How one case ended: ``ok``, ``clean`` (a located refusal), ``crash`` or ``hang``."""

    kind: str
    detail: str = ""


def load_in_process(config: str, scenario: str, workdir: Path) -> Outcome:
    """``load_config_file`` and ``load_scenario`` in this process."""
    from pytest_ooda.config import load_config_file
    from pytest_ooda.errors import OodaError
    from pytest_ooda.scenario import load_scenario

    (workdir / "ooda-config.yml").write_text(config, encoding="utf-8", errors="surrogateescape")
    (workdir / "s.yml").write_text(scenario, encoding="utf-8", errors="surrogateescape")
    clean = False
    for step in (
        lambda: load_config_file(workdir / "ooda-config.yml"),
        lambda: load_scenario(workdir / "s.yml"),
    ):
        try:
            step()
        except OodaError:
            clean = True
        except Exception as exc:  # the defect this exists to find
            return Outcome("crash", f"{type(exc).__name__}: {exc}"[:300])
    return Outcome("clean" if clean else "ok")


def _run(args: list[str], workdir: Path, timeout: float) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            args, cwd=workdir, capture_output=True, text=True, timeout=timeout, check=False,
            env={"PATH": "/usr/bin:/bin", "OODA_CONFIG_HOME": str(workdir / "none"),
                 "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def through_cli(config: str, scenario: str, workdir: Path, timeout: float = 60) -> Outcome:
    """``ooda show``, ``ooda lint`` and ``ooda run --replay`` as subprocesses."""
    (workdir / "ooda-config.yml").write_text(config, encoding="utf-8", errors="surrogateescape")
    (workdir / "s.yml").write_text(scenario, encoding="utf-8", errors="surrogateescape")
    clean = False
    ooda = [sys.executable, "-m", "pytest_ooda"]
    for args in (["show", "fz"], ["lint"], ["run", "fz", "--replay", "s.yml", "--quiet"]):
        done = _run([*ooda, *args], workdir, timeout)
        if done is None:
            return Outcome("hang", " ".join(args))
        if done.returncode < 0 or done.returncode not in (0, 1, 2) or "Traceback" in done.stderr:
            return Outcome("crash", f"ooda {' '.join(args)}: exit {done.returncode}: "
                           + done.stderr[-300:])  # fmt: skip
        clean = clean or done.returncode != 0
    return Outcome("clean" if clean else "ok")


def through_pytest(config: str, workdir: Path, timeout: float = 60) -> Outcome:
    """pytest collection and the ``config`` items of the generated file."""
    (workdir / "ooda-config.yml").write_text(config, encoding="utf-8", errors="surrogateescape")
    done = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "config",
         "ooda-config.yml"],
        workdir,
        timeout,
    )  # fmt: skip
    if done is None:
        return Outcome("hang", "pytest")
    out = done.stdout + done.stderr
    if done.returncode < 0 or "INTERNALERROR" in out or "pytest_ooda/" in out:
        return Outcome("crash", f"pytest exit {done.returncode}: " + out[-300:])
    return Outcome("clean" if done.returncode != 0 else "ok")

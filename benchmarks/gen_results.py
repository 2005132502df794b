"""A generator of realistic results logs: what a cluster's session of coding-agent runs
writes, for the scale benchmarks of ``ooda report``, ``ooda compare`` and ``ooda view``.

Each record is built with the library's own types (``RunRecord.to_line``), so it is a
record today's reader accepts whatever the schema gains. The shape follows real Claude
Code sessions: a prompt of eight fragments (about 9 KB composed), one to four
iterations, each with an output of a few kilobytes, eight to twenty tool calls whose
input and result the transcript keeps (file contents, command output), and the diffs
of the files the iteration changed; the judge's votes on some scenarios; a share of
failures and of infrastructure errors. Texts are drawn from a word list and code-like
lines (quotes, backslashes and newlines, which JSON escapes, included), seeded: the
same arguments write the same bytes.

Usage: ``python benchmarks/gen_results.py OUT_DIR [--runs 10000] [--sessions 1]
[--scenarios 8] [--variants 2] [--seed 1] [--no-transcripts]``; prints the files and
their sizes. With the defaults a run's line is about 40 KB (the 10,000-run log about
400 MB), as issue 30 measured for real logs.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quick import parse

from pytest_ooda.backends import ToolCall, Usage
from pytest_ooda.results import (
    AiIdentity,
    FragmentHash,
    IterationEntry,
    RecordHead,
    RunRecord,
    SessionStamp,
)

WORDS = (  # noqa: SIM905 (a sentence reads better than a list of 45 strings)
    "the agent reads AGENTS.md then plans the change runs tests edits module config "
    "function returns value error handler request response parser token cache file "
    "directory workspace commit branch review check failing passing assertion fixture "
    "import class method argument default option flag output input result status"
).split()
PHASES = ("observe", "orient", "decide", "act")
TOOLS = ("Read", "Edit", "Write", "Bash", "Grep", "Glob")


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def prose(rng: random.Random, size: int) -> str:
    """About ``size`` characters of sentences in lines."""
    lines, total = [], 0
    while total < size:
        line = words(rng, rng.randint(6, 16)).capitalize() + "."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def code(rng: random.Random, size: int) -> str:
    """About ``size`` characters of Python-looking source."""
    lines, total = [], 0
    while total < size:
        name = rng.choice(WORDS)
        line = rng.choice(
            (
                f"def {name}_{rng.randint(1, 99)}(value: str) -> str:",
                f'    return f"{{value}} {words(rng, 3)}"',
                f"    if {name} is None:\\n        raise ValueError('{words(rng, 4)}')",
                f'{name.upper()} = "{words(rng, 2)}\\\\{name}"',
                f"    # {words(rng, 8)}",
            )
        )
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def diff(rng: random.Random, path: str) -> str:
    body = [
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -1,{rng.randint(3, 9)} +1,{rng.randint(3, 12)} @@",
    ]
    for line in code(rng, rng.randint(400, 1500)).splitlines():
        body.append(rng.choice(("+", "-", " ", " ")) + line)
    return "\n".join(body) + "\n"


def tool_call(rng: random.Random) -> tuple[ToolCall, dict[str, Any]]:
    name = rng.choice(TOOLS)
    target = f"src/{rng.choice(WORDS)}.py"
    summary = f"pytest -q tests/test_{rng.choice(WORDS)}.py" if name == "Bash" else target
    ok = rng.random() > 0.08
    error = None if ok else f"{words(rng, 5)} (exit 1)"
    entry = {
        "name": name,
        "summary": summary,
        "ok": ok,
        "error": error,
        "input": f'{{"file_path": "{target}", "content": "{code(rng, rng.randint(100, 600))}"}}',
        "result": code(rng, rng.randint(200, 900)),
    }
    return ToolCall(name, summary, ok, error), entry


class Generator:
    """Records of one session; ``record(i)`` is its i-th run (seeded by i)."""

    def __init__(self, args: argparse.Namespace, session: str) -> None:
        self.args = args
        self.session = session
        self.variants = [f"v{index}" for index in range(1, args.variants + 1)] or [None]
        self.scenarios = [f"task-{index:02d}" for index in range(1, args.scenarios + 1)]
        setup = random.Random(f"{args.seed}:setup")
        shared = [f"{setup.getrandbits(256):064x}" for _ in range(8)]
        # The variants differ in one fragment (a fragment swap, as `variants:` does).
        self.fragments = {
            variant: tuple(
                FragmentHash(
                    PHASES[index % 4],
                    index // 4,
                    f"prompts/{PHASES[index % 4]}-{index}.md",
                    f"{setup.getrandbits(256):064x}" if index == 5 else shared[index],
                )
                for index in range(8)
            )
            for variant in self.variants
        }
        self.prompts = {
            variant: [
                {"source": fragment.source, "text": prose(setup, 1000)}
                for fragment in self.fragments[variant]
            ]
            for variant in self.variants
        }
        self.shas = {variant: f"{setup.getrandbits(256):064x}" for variant in self.variants}
        # Each (scenario, variant) cell gets its own success rate.
        self.rates = {
            (scenario, variant): setup.uniform(0.35, 0.95)
            for scenario in self.scenarios
            for variant in self.variants
        }

    def cell(self, index: int) -> tuple[str, str | None, int]:
        """The scenario, variant and run number of run ``index``."""
        cells = len(self.scenarios) * len(self.variants)
        scenario = self.scenarios[index % len(self.scenarios)]
        variant = self.variants[(index // len(self.scenarios)) % len(self.variants)]
        return scenario, variant, index // cells + 1

    def record(self, index: int) -> RunRecord:
        rng = random.Random(f"{self.args.seed}:{self.session}:{index}")
        scenario, variant, run = self.cell(index)
        cells = len(self.scenarios) * len(self.variants)
        runs = -(-self.args.runs // cells)
        error = rng.random() < 0.03
        success = not error and rng.random() < self.rates[(scenario, variant)]
        count = 1 if error else rng.choice((1, 1, 2, 2, 3, 4))
        iterations, transcript_iterations = [], []
        for number in range(1, count + 1):
            last = number == count
            calls = [tool_call(rng) for _ in range(0 if error else rng.randint(3, 10))]
            changed = {f"src/{rng.choice(WORDS)}.py": "modified" for _ in range(rng.randint(1, 3))}
            output = prose(rng, rng.randint(1000, 3500))
            if last and success:
                output += "\n<promise>SUCCESS</promise>"
            usage = Usage(
                input_tokens=rng.randint(20_000, 90_000),
                output_tokens=rng.randint(800, 6000),
                cache_read_tokens=rng.randint(0, 60_000),
                cost=round(rng.uniform(0.02, 0.4), 4),
            )
            iterations.append(
                IterationEntry(
                    number=number,
                    outcome="success" if last and success else "ok",
                    signal="SUCCESS" if last and success else None,
                    exit_code=0,
                    duration_s=round(rng.uniform(20, 240), 3),
                    usage=usage,
                    model="claude-sonnet-4-5",
                    turns=len(calls) + 1,
                    tool_calls=tuple(call for call, _ in calls),
                    files=changed,  # type: ignore[arg-type]
                    output_tail=output[-4000:],
                    infra_error="overloaded: HTTP 529" if error else None,
                )
            )
            transcript_iterations.append(
                {
                    "number": number,
                    "output": output,
                    "tool_calls": [entry for _, entry in calls],
                    "permission_denials": [],
                    "diffs": {path: diff(rng, path) for path in changed},
                }
            )
        usage = Usage()
        for entry in iterations:
            usage = usage + entry.usage  # type: ignore[operator]
        judged = scenario.endswith(("1", "4"))
        outcome = "error" if error else "success" if success else "failure"
        problems = (
            () if success or error else (f"file src/app.py: expected to contain {words(rng, 2)!r}",)
        )
        minute = index // 40
        head = RecordHead(
            procedure="build",
            scenario=scenario,
            run=run,
            runs=runs,
            nodeid=f"ooda-config.yml::build::live[{scenario}@{variant}#{run}]",
            scenario_file=f"scenarios/build/{scenario}.yml",
            variant=variant,
            worker=f"gw{index % 64}",
            fragments=self.fragments[variant],
            ai=AiIdentity(command="claude -p --output-format stream-json --verbose"),
            expect={"status": "success", "files": {"src/app.py": {"contains": "def"}}},
            aggregate_expect={"success_rate": {"min": 0.7}},
            stamp=SessionStamp(
                self.session, self.session, "5d1b0c7e8f0a9b2c3d4e5f60718293a4b5c6d7e8", False
            ),
        )
        return RunRecord(
            id=f"{self.session}-{index:07d}",
            head=head,
            status="success" if success or not problems else "max-iters",
            elapsed_s=round(sum(entry.duration_s for entry in iterations), 3),
            started_at=f"2025-06-11T{9 + minute // 60 % 14:02d}:{minute % 60:02d}:00+00:00",
            finished_at=f"2025-06-11T{9 + minute // 60 % 14:02d}:{minute % 60:02d}:30+00:00",
            pytest_ooda="0.9.0",
            prompt_sha256=self.shas[variant],
            model="claude-sonnet-4-5",
            usage=usage,
            iterations=tuple(iterations),
            files_changed={"src/app.py": "modified"},  # type: ignore[arg-type]
            problems=problems,
            outcome=outcome,  # type: ignore[arg-type]
            error_reason="overloaded: HTTP 529 from the API" if error else None,
            judge=self.judge(rng) if judged and not error else None,
            transcript=None
            if self.args.no_transcripts
            else {
                "prompt": self.prompts[variant],
                "iterations": transcript_iterations,
                "notes": [],
            },
        )

    def judge(self, rng: random.Random) -> dict[str, Any]:
        votes = [
            {
                "verdict": rng.choice(("pass", "pass", "fail")),
                "reason": words(rng, 14),
                "input_tokens": 3000,
                "output_tokens": 120,
                "cost": 0.011,
                "attempts": 1,
            }
            for _ in range(3)
        ]
        passes = sum(vote["verdict"] == "pass" for vote in votes)
        return {
            "passed": passes >= 2,
            "error": None,
            "rule": "a majority (2) of 3",
            "needed": 2,
            "pass_votes": passes,
            "agreement": max(passes, 3 - passes) / 3,
            "votes": votes,
            "input_tokens": 9000,
            "output_tokens": 360,
            "cost": 0.033,
            "key": f"{rng.getrandbits(256):064x}",
            "replayed": False,
            "rubric": "The change is minimal, tested, and explained in the final message.",
        }


def generate(args: argparse.Namespace, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    per_session = -(-args.runs // args.sessions)
    for number in range(args.sessions):
        session = f"20250611T09{number // 60:02d}{number % 60:02d}Z"
        generator = Generator(args, session)
        path = out / f"{session}.jsonl"
        with open(path, "w", encoding="ascii") as handle:
            for index in range(per_session):
                handle.write(generator.record(index).to_line())
        written.append(path)
    return written


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    found.add_argument("out", type=Path)
    found.add_argument("--runs", type=int, default=10_000)
    found.add_argument("--sessions", type=int, default=1)
    found.add_argument("--scenarios", type=int, default=8)
    found.add_argument("--variants", type=int, default=2)
    found.add_argument("--seed", type=int, default=1)
    found.add_argument("--no-transcripts", action="store_true")
    return found


def main() -> None:
    args = parse(parser(), runs=5)
    for path in generate(args, args.out):
        print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()

"""Prompt drift: where a replayed scenario's recorded prompt differs from today's and
which fragment files changed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.scenario.model import Scenario, sha256_text

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pytest_ooda.compose import Segment
    from pytest_ooda.config import Config
    from pytest_ooda.loop import LoopResult


@dataclass(frozen=True)
class Drift:
    """A recorded iteration whose prompt differs from the one assembled now."""

    iteration: int
    recorded_sha256: str
    current_sha256: str
    diff: str | None = None
    changed_sources: tuple[str, ...] = ()

    def describe(self) -> str:
        head = (
            f"prompt of iteration {self.iteration} drifted from the recording "
            f"(sha256 {self.recorded_sha256[:12]}… → {self.current_sha256[:12]}…)"
        )
        if self.changed_sources:
            head += "\n  changed fragments: " + ", ".join(self.changed_sources)
        if self.diff:
            head += "\n" + self.diff
        elif self.diff == "":
            head += (
                "\n  the text sent is the same: the agent material the run installs (a "
                "skill, a command, a plugin's files) changed; its prompt items' snapshots "
                "show how"
            )
        elif self.diff is None:
            head += "\n  (no recorded prompt text to diff against; re-record to keep one)"
        return head


def _is_fragment(source: str) -> bool:
    return source not in ("preamble", "context") and not source.startswith("marker:")


def changed_sources(recorded: str, current: str, segments: Sequence[Segment]) -> tuple[str, ...]:
    """The fragment files (by ``segments`` of ``current``) whose lines differ from
    ``recorded``; a pure deletion blames the fragments on either side of the gap."""
    old = recorded.splitlines()
    new = current.splitlines()
    touched: list[int] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if j2 > j1:
            touched.extend(range(j1 + 1, j2 + 1))
        else:
            # Pure deletion: blame the fragments on either side of the gap.
            touched.extend((j1, j1 + 1))
    found: list[str] = []
    for line in touched:
        for segment in segments:
            if (
                segment.start_line <= line <= segment.end_line
                and _is_fragment(segment.source)
                and segment.source not in found
            ):
                found.append(segment.source)
    return tuple(found)


def detect_drift(
    scenario: Scenario,
    prompts: Sequence[str],
    *,
    segments: Sequence[Segment] | None = None,
    context_lines: int = 3,
    shas: Sequence[str] | None = None,
) -> list[Drift]:
    """Compare the prompts a replay sent with the recorded ``prompt_sha256`` values.

    ``segments`` (from ``assemble_prompt_mapped`` for iteration 1) lets the first
    iteration's drift name the fragments whose text changed; its recorded ``prompt``
    text gives the unified diff. ``shas`` are the prompts' identities as the loop
    computed them (with the agent material a run installs); else the texts' sha256.
    """
    drifts: list[Drift] = []
    for index, (recorded, prompt) in enumerate(zip(scenario.iterations, prompts, strict=False)):
        if recorded.prompt_sha256 is None:
            continue
        current = shas[index] if shas is not None else sha256_text(prompt)
        if current == recorded.prompt_sha256:
            continue
        diff = None
        changed: tuple[str, ...] = ()
        if recorded.prompt is not None:
            where = scenario.path.name if scenario.path is not None else scenario.label
            diff = "".join(
                difflib.unified_diff(
                    recorded.prompt.splitlines(keepends=True),
                    prompt.splitlines(keepends=True),
                    fromfile=f"recorded prompt ({where}, iteration {index + 1})",
                    tofile=f"current prompt (iteration {index + 1})",
                    n=context_lines,
                )
            )
            if segments is not None and index == 0:
                changed = changed_sources(recorded.prompt, prompt, segments)
        drifts.append(Drift(index + 1, recorded.prompt_sha256, current, diff, changed))
    return drifts


def check_drift(
    scenario: Scenario, result: LoopResult, config: Config, *, cwd: Path | None = None
) -> list[Drift]:
    """``detect_drift`` for a finished replay, mapping fragments through ``config``."""
    from pytest_ooda.compose import assemble_prompt_mapped

    segments: Sequence[Segment] | None = None
    first = scenario.iterations[0] if scenario.iterations else None
    if (
        result.records
        and first is not None
        and first.prompt is not None
        and first.prompt_sha256 is not None
        and result.records[0].prompt_sha256 != first.prompt_sha256
    ):
        # Only a first prompt that drifted is mapped to the fragments behind it.
        mapped = assemble_prompt_mapped(
            config.procedure(scenario.procedure),
            iteration=1,
            max_iterations=result.max_iterations,
            context=result.context,
            cwd=cwd or result.workdir,
        )
        if mapped.text == result.records[0].prompt:
            segments = mapped.segments
    shas = [record.prompt_sha256 for record in result.records]
    return detect_drift(scenario, result.prompts, segments=segments, shas=shas)

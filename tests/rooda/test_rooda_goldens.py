"""Prompts composed from the rooda-style corpus against what the real rooda assembled.

``goldens.json`` is made by ``tools/rooda-goldens/regen.py`` with a rooda binary built
from its public repository: for each run in ``runs.json`` the prompt rooda printed
(``--dry-run``) or piped to its AI command (iteration 1), or the error it stopped with.
``prompt_format: rooda`` must reproduce those bytes; ``ooda`` must compose every phase
the same way (only the frame around the phases is ours).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ooda._types import PHASES
from pytest_ooda.compose import BAR, PHASE_HEADINGS, assemble_prompt, compose_phase
from pytest_ooda.config import Config, command_line_overrides, load_config
from pytest_ooda.errors import FragmentError

HERE = Path(__file__).resolve().parent
RUNS: list[dict[str, Any]] = json.loads((HERE / "runs.json").read_text(encoding="utf-8"))
GOLDENS: dict[str, Any] = json.loads((HERE / "goldens.json").read_text(encoding="utf-8"))


def corpus(case: str) -> Path:
    return HERE / "corpus" / case


def load(case: str, prompt_format: str | None = None) -> Config:
    """The case's rooda-config.yml found as `ooda` finds it: in the working directory,
    with ``--prompt-format`` when given."""
    return load_config(
        cwd=corpus(case),
        env={},
        global_config=False,
        overrides=command_line_overrides(prompt_format=prompt_format),
    )


def assemble(run: dict[str, Any], prompt_format: str) -> str:
    config = load(run["case"], prompt_format)
    return assemble_prompt(
        config.procedure(run["procedure"]),
        iteration=1 if run.get("iteration") else None,
        max_iterations=run.get("max_iterations"),
        context=run.get("context", []),
        cwd=corpus(run["case"]),
    )


def test_every_run_has_a_golden() -> None:
    assert sorted(GOLDENS["runs"]) == sorted(run["id"] for run in RUNS)


PROMPT_RUNS = [run for run in RUNS if "prompt" in GOLDENS["runs"][run["id"]]]


@pytest.mark.parametrize("run", PROMPT_RUNS, ids=lambda run: run["id"])
def test_rooda_format_is_byte_for_byte_what_rooda_sends(run: dict[str, Any]) -> None:
    assert assemble(run, "rooda") == GOLDENS["runs"][run["id"]]["prompt"]


@pytest.mark.parametrize("run", PROMPT_RUNS, ids=lambda run: run["id"])
def test_ooda_format_composes_every_phase_as_rooda(run: dict[str, Any]) -> None:
    golden = GOLDENS["runs"][run["id"]]["prompt"]
    config = load(run["case"])
    procedure = config.procedure(run["procedure"])
    ours = assemble(run, "ooda")
    for phase in PHASES:
        text = compose_phase(procedure.phases()[phase], procedure=procedure.name, phase=phase)
        title, instruction = PHASE_HEADINGS[phase]
        marker = f"{BAR}\n{title}\n{instruction}\n{BAR}\n"
        if not text:
            assert marker not in golden
            assert marker not in ours
            continue
        # rooda: the phase then a blank line; ours: the same phase, then the next marker
        # (or the prompt's single final newline).
        assert f"{marker}{text}\n\n" in golden
        assert f"{marker}{text}\n" in ours


def test_a_procedure_rooda_refuses_is_refused_alone() -> None:
    golden = GOLDENS["runs"]["blast_radius/broken"]
    assert "fragment file not found: prompts/missing.md" in golden["error"]
    config = load("blast_radius")
    with pytest.raises(FragmentError) as info:
        config.procedure("broken")
    assert "fragment file not found: prompts/missing.md" in info.value.message
    assert Path(info.value.file or "").name == "rooda-config.yml"
    assert (info.value.line, info.value.column) == (6, 9)
    # The other procedure of the file loads and composes (rooda's golden above).
    assert "This fragment exists." in assemble_prompt(config.procedure("working"))


def test_goldens_hold_the_composition_fixes() -> None:
    """The bytes each fix is about, as rooda produced them (so a regenerated golden that
    lost one would be noticed)."""
    edges = GOLDENS["runs"]["composition/edges"]["prompt"]
    assert "gather information.\n" + BAR + "\nFirst real fragment.\n\n" in edges
    assert "before\n\n\n\nafter" in edges
    assert "\x1cLeading file separator; trailing unit separator.\x1f\n\n\ufeffThis file" in edges
    mixed = GOLDENS["runs"]["params/mixed-keys"]["prompt"]
    assert "whole map: map[true:bool 1:float 1:int x:str]" in mixed
    assert "same value, other text: map[1:second]" in mixed
    assert "ROODA PROCEDURE EXECUTION" in edges
    bare = GOLDENS["runs"]["no_display/bare"]["prompt"]
    assert "Procedure:" not in bare
    assert bare.endswith("Look around.\n\n")

"""The shipped content: procedures/builtin.yml and the 59 fragment files (the seed's 57
and the two rooda's chore/refactor plans name, see docs/rooda.md).

Loaded through the real config loader and composed with the real prompt assembler, so
these tests see exactly what an AI command receives.
"""

from __future__ import annotations

import difflib
import itertools
import re
from pathlib import Path

import pytest

from pytest_ooda.catalogue import PROCEDURE_KINDS, SIGNALS
from pytest_ooda.compose import assemble_prompt
from pytest_ooda.config import PHASES, Config, Procedure, load_config_file
from pytest_ooda.fragments import resolve_fragment_path

ROOT = Path(__file__).resolve().parents[2]
BUILTIN_FILE = ROOT / "procedures" / "builtin.yml"
FRAGMENTS = ROOT / "fragments"

# The seed's "Built-in Procedures Configuration": fragment stems per phase, in order,
# phases separated by "|".
SEED_PROCEDURES = {
    "agents-sync": "read_agents_md scan_repo_structure detect_build_system detect_work_tracking"
    " | compare_detected_vs_documented identify_drift"
    " | determine_sections_to_update check_if_blocked"
    " | write_agents_md commit_changes emit_success",
    "build": "read_agents_md query_work_tracking read_specs read_impl read_task_details"
    " | understand_task_requirements search_codebase identify_affected_files"
    " | pick_task plan_implementation_approach check_if_blocked"
    " | modify_files run_tests update_work_tracking commit_changes emit_success",
    "publish-plan": "read_agents_md read_draft_plan query_work_tracking"
    " | parse_plan_tasks map_to_work_tracking_format"
    " | determine_import_strategy check_if_blocked"
    " | create_work_items update_draft_plan_status emit_success",
    "audit-spec": "read_agents_md read_specs | evaluate_against_quality_criteria"
    " | identify_issues prioritize_findings | write_audit_report emit_success",
    "audit-impl": "read_agents_md read_impl run_tests run_lints"
    " | evaluate_against_quality_criteria | identify_issues prioritize_findings"
    " | write_audit_report emit_success",
    "audit-agents": "read_agents_md scan_repo_structure detect_build_system verify_commands"
    " | compare_documented_vs_actual identify_drift | categorize_drift_severity"
    " | write_audit_report emit_success",
    "audit-spec-to-impl": "read_agents_md read_specs read_impl"
    " | identify_specified_but_not_implemented | prioritize_gaps_by_impact"
    " | write_gap_report emit_success",
    "audit-impl-to-spec": "read_agents_md read_impl read_specs"
    " | identify_implemented_but_not_specified | prioritize_gaps_by_impact"
    " | write_gap_report emit_success",
    "draft-plan-spec-feat": "read_agents_md read_task_input read_specs read_impl"
    " | understand_feature_requirements identify_affected_specs",
    "draft-plan-spec-fix": "read_agents_md read_task_input read_specs read_impl"
    " | understand_bug_root_cause identify_spec_deficiencies",
    "draft-plan-spec-refactor": "read_agents_md read_task_input read_specs"
    " | identify_structural_issues identify_duplication",
    "draft-plan-spec-chore": "read_agents_md read_task_input read_specs"
    " | identify_maintenance_needs",
    "draft-plan-impl-feat": "read_agents_md read_task_input read_specs read_impl"
    " | understand_feature_requirements identify_affected_code",
    "draft-plan-impl-fix": "read_agents_md read_task_input read_specs read_impl"
    " | understand_bug_root_cause identify_affected_code",
    "draft-plan-impl-refactor": "read_agents_md read_task_input read_impl"
    " | identify_code_smells identify_complexity_issues",
    "draft-plan-impl-chore": "read_agents_md read_task_input read_impl"
    " | identify_maintenance_needs",
}
# Every draft-plan variant decides and acts the same way.
_DRAFT_PLAN_TAIL = (
    " | break_down_into_tasks prioritize_tasks check_if_blocked | write_draft_plan emit_success"
)
for _name in SEED_PROCEDURES:
    if _name.startswith("draft-plan-"):
        SEED_PROCEDURES[_name] += _DRAFT_PLAN_TAIL

PHASE_COUNTS = {"observe": 13, "orient": 23, "decide": 11, "act": 12}
#: In the library for configs to use; no built-in procedure does (the last two are
#: rooda's, for configs written against its built-in names).
UNUSED_BY_BUILTINS = {
    "act/emit_failure.md",
    "orient/understand_chore_request.md",
    "orient/understand_refactor_request.md",
}
GENERIC_SIGNAL_FRAGMENTS = (
    "decide/check_if_blocked.md",
    "act/emit_success.md",
    "act/emit_failure.md",
)

SUCCESS_TAG = "<promise>SUCCESS</promise>"
FAILURE_TAG = "<promise>FAILURE</promise>"
NO_SIGNAL = "without a signal"

READ_ONLY = re.compile(
    r"\b(?:do not|don't|never|must not)\b[^.\n]*?\b(?:modify|edit|change|create|write|fix|"
    r"refactor|touch|move|rename|delete|update|apply|install|claim|correct|restructure|merge|"
    r"simplify|perform|reformat)\w*",
    re.IGNORECASE,
)
# Imperative writes at the start of a sentence or list item, and tracker/git commands
# that change state.
WRITE_INSTRUCTION = re.compile(
    r"(?:^|[.;:]\s+|^\s*(?:-|\d+\.)\s+)(?:Write|Create|Edit|Modify|Commit|Delete|Update|Apply|"
    r"Rename|Move|Save)\b"
    r"|\bgit (?:add|commit|push|stash|reset|checkout)\b"
    r"|\bbd (?:create|close|update|dep add)\b"
    r"|\bgh issue (?:create|close|edit|comment)\b",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def config() -> Config:
    return load_config_file(BUILTIN_FILE)


@pytest.fixture(scope="module")
def prompts(config: Config) -> dict[str, str]:
    return {name: assemble_prompt(proc) for name, proc in config.procedures.items()}


def _fragment_files() -> list[Path]:
    return sorted(FRAGMENTS.glob("*/*.md"))


def _relative(path: Path) -> str:
    return path.relative_to(FRAGMENTS).as_posix()


def _stems(procedure: Procedure) -> str:
    return " | ".join(
        " ".join(Path(action.path or "").stem for action in actions)
        for actions in procedure.phases().values()
    )


def _normalise(text: str) -> str:
    return " ".join(text.replace("**", "").replace("`", "").split())


def _blocks(text: str) -> list[str]:
    """Paragraphs and list items (with their continuation lines), whitespace-normalised."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        starts_item = re.match(r"\s*(?:-|\d+\.)\s", line) is not None
        if not line.strip() or starts_item:
            if current:
                blocks.append(current)
            current = [line] if line.strip() else []
        else:
            current.append(line)
    if current:
        blocks.append(current)
    return [_normalise(" ".join(block)) for block in blocks]


def _sentences(text: str) -> set[str]:
    """Sentences and list items of at least six words, lower-cased and de-marked-up."""
    text = re.sub(r"[*`]", "", text)
    parts = re.split(r"(?<=[.!?;])\s+|\n\s*(?:-|\d+\.)\s+|\n\s*\n", text)
    sentences = {" ".join(part.lower().split()).rstrip(".;:") for part in parts}
    return {s for s in sentences if len(s.split()) >= 6}


def _similar(a: str, b: str) -> bool:
    """Whether two sentences are the same up to a word or two."""
    wa, wb = a.split(), b.split()
    if len(set(wa) & set(wb)) < 0.7 * max(len(set(wa)), len(set(wb))):
        return False  # cheap rejection; most pairs share few words
    return difflib.SequenceMatcher(None, wa, wb, autojunk=False).ratio() >= 0.85


# --- procedures ---------------------------------------------------------------------


def test_builtin_file_defines_the_sixteen_seed_procedures_in_order(config: Config) -> None:
    assert list(config.procedures) == list(SEED_PROCEDURES)


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_fragment_lists_match_the_seed_exactly(config: Config, name: str) -> None:
    assert _stems(config.procedure(name)) == SEED_PROCEDURES[name]


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_procedure_has_display_summary_and_description(config: Config, name: str) -> None:
    procedure = config.procedure(name)
    assert procedure.display.strip()
    assert procedure.summary.strip()
    assert procedure.description.strip()
    assert procedure.description != procedure.summary


def test_every_fragment_action_is_a_builtin_path_in_its_own_phase(config: Config) -> None:
    for procedure in config.procedures.values():
        for phase, actions in procedure.phases().items():
            for action in actions:
                assert action.path is not None
                assert action.path.startswith(f"builtin:fragments/{phase}/")
                assert not action.parameters
                resolved = resolve_fragment_path(action.path, action.base_dir)
                assert resolved.is_file()
                assert resolved.resolve() == (ROOT / action.path[len("builtin:") :]).resolve()


# --- fragment files -----------------------------------------------------------------


def test_the_59_fragment_files_exist_per_phase() -> None:
    counts = {phase: len(list((FRAGMENTS / phase).glob("*.md"))) for phase in PHASES}
    assert counts == PHASE_COUNTS
    assert sum(counts.values()) == 59
    assert {p.name for p in FRAGMENTS.iterdir()} == set(PHASES)


def test_every_fragment_is_used_except_the_library_only_ones(config: Config) -> None:
    used = {
        action.path[len("builtin:fragments/") :]
        for procedure in config.procedures.values()
        for actions in procedure.phases().values()
        for action in actions
        if action.path
    }
    on_disk = {_relative(path) for path in _fragment_files()}
    assert used <= on_disk
    assert on_disk - used == UNUSED_BY_BUILTINS


@pytest.mark.parametrize("path", _fragment_files(), ids=_relative)
def test_fragment_is_a_focused_titled_plain_markdown_prompt(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert re.fullmatch(r"## [A-Z][^\n]{3,60}", lines[0]), "first line is a short ## title"
    assert lines[1] == "", "a blank line follows the title"
    assert 8 <= len(lines) <= 30
    assert text.endswith("\n")
    assert not text.endswith("\n\n")
    assert "{{" not in text, "built-ins need no template syntax"
    assert all(len(line) <= 100 for line in lines)
    assert "\t" not in text
    assert all(line == line.rstrip() for line in lines)


@pytest.mark.parametrize("path", _fragment_files(), ids=_relative)
def test_fragment_does_not_depend_on_a_named_neighbour(path: Path) -> None:
    text = path.read_text(encoding="utf-8").lower()
    for other in _fragment_files():
        if other != path:
            assert other.stem not in text, f"mentions fragment {other.stem}"
    assert "fragment" not in text
    assert not re.search(r"\b(?:previous|next|above|below) (?:step|section|fragment)\b", text)


@pytest.mark.parametrize(
    "path",
    [p for p in _fragment_files() if p.parent.name in ("observe", "orient")],
    ids=_relative,
)
def test_observe_and_orient_fragments_are_read_only(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert READ_ONLY.search(text), "says what must not be modified in this phase"
    writes = [m.group(0).strip() for m in WRITE_INSTRUCTION.finditer(text)]
    assert writes == []
    assert SUCCESS_TAG not in text


@pytest.mark.parametrize(
    "path", [p for p in _fragment_files() if p.parent.name == "act"], ids=_relative
)
def test_act_fragment_says_what_it_writes(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[2].startswith("**Writes:** ")
    assert len(lines[2].split()) >= 4


def test_no_two_fragments_share_more_than_one_sentence() -> None:
    sentences = {_relative(p): _sentences(p.read_text(encoding="utf-8")) for p in _fragment_files()}
    offenders = []
    for (a, sa), (b, sb) in itertools.combinations(sentences.items(), 2):
        shared = [(x, y) for x in sa for y in sb if x == y or _similar(x, y)]
        if len(shared) > 1:
            offenders.append((a, b, shared))
    assert offenders == []


def test_near_duplicate_detection_catches_a_reworded_copy() -> None:
    original = "Record the command, its exit code and the last lines of its output when it failed."
    reworded = "Record the command, its exit code and the last lines of its output if it failed."
    unrelated = "Choose exactly one work item for this iteration and say why you chose it."
    [a], [b], [c] = (sorted(_sentences(s)) for s in (original, reworded, unrelated))
    assert _similar(a, b)
    assert not _similar(a, c)


# --- signalling ---------------------------------------------------------------------


def test_every_builtin_procedure_has_a_signalling_kind(config: Config) -> None:
    assert set(PROCEDURE_KINDS) == set(config.procedures)
    assert set(PROCEDURE_KINDS.values()) == set(SIGNALS)


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_prompt_states_its_success_continue_and_failure_criteria(
    prompts: dict[str, str], name: str
) -> None:
    signals = SIGNALS[PROCEDURE_KINDS[name]]
    blocks = _blocks(prompts[name])
    for conditions, marker in (
        (signals.success, SUCCESS_TAG),
        (signals.cont, NO_SIGNAL),
        (signals.failure, FAILURE_TAG),
    ):
        for condition in conditions:
            stating = [b for b in blocks if _normalise(condition) in b]
            assert stating, f"{name}: criterion not in prompt: {condition!r}"
            assert all(marker in b for b in stating), f"{name}: {marker} not next to {condition!r}"


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_prompt_states_no_other_kinds_success_criterion(prompts: dict[str, str], name: str) -> None:
    kind = PROCEDURE_KINDS[name]
    text = _normalise(prompts[name])
    for other, signals in SIGNALS.items():
        if other != kind:
            for condition in signals.success + signals.failure:
                assert _normalise(condition) not in text, f"{name} states {other}'s criterion"


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_prompt_says_how_to_emit_the_signal(prompts: dict[str, str], name: str) -> None:
    text = _normalise(prompts[name])
    phase_text = text[text.index("PHASE 4: ACT") :]
    assert f"{SUCCESS_TAG} on a line of its own" in phase_text
    assert FAILURE_TAG in phase_text
    assert "Otherwise emit no signal at all" in phase_text
    assert "Never put both signals in one output" in phase_text


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_prompt_states_one_success_and_one_continue_condition(
    prompts: dict[str, str], name: str
) -> None:
    # Two differently worded SUCCESS conditions leave the agent to guess which one ends the run.
    blocks = _blocks(prompts[name])
    assert len([b for b in blocks if b.startswith("- SUCCESS:")]) == 1
    assert len([b for b in blocks if b.startswith("- Continue:")]) == 1
    assert len(SIGNALS[PROCEDURE_KINDS[name]].success) == 1


def test_every_procedure_closes_with_the_signal_step(config: Config) -> None:
    # The signal belongs on the last lines of the output, so its instructions come last.
    for procedure in config.procedures.values():
        act = procedure.phases()["act"]
        assert Path(act[-1].path or "").name == "emit_success.md"


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_prompt_warns_that_the_tag_is_matched_anywhere_in_the_output(
    prompts: dict[str, str], name: str
) -> None:
    # The loop matches the tag as a substring, so a quoted tag would end the run by accident.
    text = _normalise(prompts[name])
    assert "searches your entire output for the exact tag text" in text
    assert "never quote it" in text


@pytest.mark.parametrize("name", list(SEED_PROCEDURES))
def test_failure_guidance_asks_for_reason_and_next_steps(
    prompts: dict[str, str], name: str
) -> None:
    failure_blocks = [b for b in _blocks(prompts[name]) if FAILURE_TAG in b]
    assert any(
        re.search(r"\b(?:reason|what (?:is )?missing|what to fix|what you found)", b)
        for b in failure_blocks
    )


@pytest.mark.parametrize("relative", GENERIC_SIGNAL_FRAGMENTS)
def test_generic_signal_fragments_state_no_procedure_criterion(relative: str) -> None:
    text = _normalise((FRAGMENTS / relative).read_text(encoding="utf-8"))
    for signals in SIGNALS.values():
        for condition in signals.success + signals.cont + signals.failure:
            assert _normalise(condition) not in text


def test_each_kinds_criteria_live_in_fragments_only_that_kind_composes(config: Config) -> None:
    kinds_using: dict[str, set[str]] = {}
    for name, procedure in config.procedures.items():
        for actions in procedure.phases().values():
            for action in actions:
                kinds_using.setdefault(action.path or "", set()).add(PROCEDURE_KINDS[name])
    for kind, signals in SIGNALS.items():
        for condition in signals.success + signals.cont + signals.failure:
            holders = [
                _relative(p)
                for p in _fragment_files()
                if _normalise(condition) in _normalise(p.read_text(encoding="utf-8"))
            ]
            assert len(holders) == 1, (condition, holders)
            assert kinds_using[f"builtin:fragments/{holders[0]}"] == {kind}

"""Phase composition, the assembled prompt, source maps and use observers."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.compose import (
    BAR,
    FragmentUse,
    add_use_observer,
    assemble_prompt,
    assemble_prompt_mapped,
    compose_phase,
    compose_phase_mapped,
)
from pytest_ooda.config import Config, Procedure, load_config
from pytest_ooda.errors import FragmentError, TemplateError

if TYPE_CHECKING:
    from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> Config:
    path = write(tmp_path / "ooda-config.yml", text)
    return load_config(path, env={}, builtin=False, global_config=False)


@pytest.fixture
def proc(tmp_path: Path) -> Procedure:
    write(tmp_path / "prompts" / "a.md", "\n\n  Fragment A line 1\nline 2\n\n\n")
    write(tmp_path / "prompts" / "b.md", "Fragment B {{.x}}\n")
    cfg = load(
        tmp_path,
        """
        procedures:
          demo:
            display: "Demo Procedure"
            observe:
              - path: prompts/a.md
              - content: "  inline one  "
            orient: []
            decide:
              - path: prompts/b.md
            act:
              - content: "Finish."
        """,
    )
    return cfg.procedure("demo")


EXPECTED = f"""{BAR}
OODA PROCEDURE EXECUTION
{BAR}

Procedure: Demo Procedure

Your Role:
You are an AI coding agent executing a structured OODA loop procedure.
This is NOT a template or example - this is an EXECUTABLE PROCEDURE.
You must complete all phases and produce concrete outputs.

Success Signaling:
- When you complete all tasks successfully, output: <promise>SUCCESS</promise>
- If you cannot proceed due to blockers, output: <promise>FAILURE</promise>
- Explanations should come AFTER the signal, not embedded in the tag
- The loop orchestrator uses these signals to determine iteration outcome.

{BAR}
PHASE 1: OBSERVE
Execute these observation tasks to gather information.
{BAR}
Fragment A line 1
line 2

inline one

{BAR}
PHASE 3: DECIDE
Make decisions about what actions to take.
{BAR}
Fragment B {{{{.x}}}}

{BAR}
PHASE 4: ACT
Execute the actions you decided on. Modify files, run commands, commit changes.
{BAR}
Finish.
"""


def test_bar_is_63_box_drawing_characters() -> None:
    assert BAR == "═" * 63


def test_assembled_prompt_exact(proc: Procedure) -> None:
    assert assemble_prompt(proc) == EXPECTED


def test_phase_composition_strips_and_joins(proc: Procedure) -> None:
    assert compose_phase(proc.observe) == "Fragment A line 1\nline 2\n\ninline one"
    assert compose_phase(proc.orient) == ""


def test_parameters_absent_means_verbatim_even_with_braces(proc: Procedure) -> None:
    assert compose_phase(proc.decide) == "Fragment B {{.x}}"


def test_iteration_line(proc: Procedure) -> None:
    text = assemble_prompt(proc, iteration=2, max_iterations=5)
    assert "Procedure: Demo Procedure\n\nIteration: 2 of 5\n\nYour Role:" in text
    text = assemble_prompt(proc, iteration=3)
    assert "\n\nIteration: 3 (unlimited)\n\n" in text
    assert "Iteration:" not in assemble_prompt(proc)


def test_display_falls_back_to_name(tmp_path: Path) -> None:
    cfg = load(tmp_path, "procedures:\n  plain:\n    act:\n      - content: x\n")
    assert "Procedure: plain\n" in assemble_prompt(cfg.procedure("plain"))


def test_context_text_and_file(proc: Procedure, tmp_path: Path) -> None:
    write(tmp_path / "task.md", "\nFix the bug.\n\n")
    text = assemble_prompt(proc, context=["first note", "task.md", "no/such/file.md"], cwd=tmp_path)
    expected = (
        f"{BAR}\nCONTEXT\n{BAR}\nfirst note\n\nSource: task.md\n\nFix the bug.\n\n"
        f"no/such/file.md\n\n{BAR}\nPHASE 1: OBSERVE\n"
    )
    assert expected in text
    assert text.index("outcome.\n\n" + BAR + "\nCONTEXT") > 0


def test_no_context_section_without_context(proc: Procedure) -> None:
    assert "CONTEXT" not in assemble_prompt(proc)


def test_one_trailing_newline(tmp_path: Path) -> None:
    cfg = load(tmp_path, 'procedures:\n  p:\n    act:\n      - content: "x\\n\\n\\n"\n')
    text = assemble_prompt(cfg.procedure("p"))
    assert text.endswith("x\n")
    assert not text.endswith("\n\n")


def test_all_phases_empty_gives_preamble_only(tmp_path: Path) -> None:
    cfg = load(tmp_path, "procedures:\n  p: {}\n")
    text = assemble_prompt(cfg.procedure("p"))
    assert text.endswith("determine iteration outcome.\n")
    assert "PHASE" not in text


def test_markdown_preserved(tmp_path: Path) -> None:
    md = "# Title\n\n- item\n  - nested\n\n```sh\nmake test\n```"
    write(tmp_path / "m.md", md + "\n")
    cfg = load(tmp_path, "procedures:\n  p:\n    act:\n      - path: m.md\n")
    assert md in assemble_prompt(cfg.procedure("p"))


def test_mapped_segments_point_at_fragment_lines(proc: Procedure) -> None:
    mapped = assemble_prompt_mapped(proc)
    assert mapped.text == EXPECTED
    lines = mapped.text.splitlines()
    by_source: dict[str, list[list[str]]] = {}
    for segment in mapped.segments:
        chunk = lines[segment.start_line - 1 : segment.end_line]
        by_source.setdefault(segment.source, []).append(chunk)
    assert by_source["prompts/a.md"] == [["Fragment A line 1", "line 2"]]
    assert by_source["inline"] == [["inline one"], ["Finish."]]
    assert by_source["prompts/b.md"] == [["Fragment B {{.x}}"]]
    assert by_source["marker:decide"][0][1] == "PHASE 3: DECIDE"
    assert by_source["preamble"][0][1] == "OODA PROCEDURE EXECUTION"
    line = lines.index("line 2") + 1
    assert mapped.source_of(line) == "prompts/a.md"
    assert mapped.source_of(line + 1) is None


def test_mapped_context_segments(proc: Procedure, tmp_path: Path) -> None:
    write(tmp_path / "task.md", "a\nb\n")
    mapped = assemble_prompt_mapped(proc, context=["task.md"], cwd=tmp_path)
    lines = mapped.text.splitlines()
    ctx = [s for s in mapped.segments if s.source == "context"]
    assert [lines[s.start_line - 1 : s.end_line] for s in ctx] == [
        [BAR, "CONTEXT", BAR],
        ["Source: task.md", "", "a", "b"],
    ]


def test_compose_phase_mapped_matches_compose_phase(proc: Procedure) -> None:
    mapped = compose_phase_mapped(proc.observe)
    assert mapped.text == compose_phase(proc.observe)
    assert [(s.start_line, s.end_line, s.source) for s in mapped.segments] == [
        (1, 2, "prompts/a.md"),
        (4, 4, "inline"),
    ]


def test_use_observer_sees_every_fragment(proc: Procedure, tmp_path: Path) -> None:
    seen: list[FragmentUse] = []
    remove = add_use_observer(seen.append)
    try:
        assemble_prompt(proc)
    finally:
        remove()
    assert [(u.procedure, u.phase, u.action.source_label()) for u in seen] == [
        ("demo", "observe", "prompts/a.md"),
        ("demo", "observe", "inline"),
        ("demo", "decide", "prompts/b.md"),
        ("demo", "act", "inline"),
    ]
    assert seen[0].file == (tmp_path / "prompts" / "a.md").resolve()
    assert seen[1].file is None
    assert all(u.trace is None for u in seen)
    assemble_prompt(proc)
    assert len(seen) == 4


# --------------------------------------------------------------------------- templates


SEED_TEMPLATE = """Read the following {{.file_type}} files from the repository:

{{range .paths}}
- {{.}}
{{end}}

{{if .include_tests}}
Also include any associated test files.
{{end}}
"""


def test_seed_example_template_renders(tmp_path: Path) -> None:
    write(tmp_path / "fragments" / "observe" / "read_files.md", SEED_TEMPLATE)
    cfg = load(
        tmp_path,
        """
        procedures:
          custom-audit:
            observe:
              - path: "fragments/observe/read_files.md"
                parameters:
                  file_type: "specification"
                  paths:
                    - "specs/api.md"
                    - "specs/database.md"
                  include_tests: true
        """,
    )
    # Go's output: each {{range}}/{{if}} keeps the newlines around it; composition strips
    # only the ends.
    assert compose_phase(cfg.procedure("custom-audit").observe) == (
        "Read the following specification files from the repository:\n\n\n"
        "- specs/api.md\n\n- specs/database.md\n\n\n\n"
        "Also include any associated test files."
    )


def test_missing_parameter_renders_no_value(tmp_path: Path) -> None:
    write(tmp_path / "t.md", "Task: {{.task}} in {{.dir}}")
    cfg = load(
        tmp_path,
        "procedures:\n  p:\n    act:\n      - path: t.md\n        parameters:\n"
        "          task: fix\n",
    )
    assert compose_phase(cfg.procedure("p").act) == "Task: fix in <no value>"


def test_parameters_without_template_syntax_are_ignored(tmp_path: Path) -> None:
    write(tmp_path / "plain.md", "Nothing to substitute here.\n")
    cfg = load(
        tmp_path,
        "procedures:\n  p:\n    act:\n      - path: plain.md\n        parameters: {unused: 1}\n",
    )
    assert compose_phase(cfg.procedure("p").act) == "Nothing to substitute here."


def test_inline_content_with_parameters_is_a_template(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        'procedures:\n  p:\n    act:\n      - content: "{{if .ok}}yes{{else}}no{{end}}"\n'
        "        parameters: {ok: false}\n",
    )
    assert compose_phase(cfg.procedure("p").act) == "no"


def test_empty_parameters_mean_verbatim(tmp_path: Path) -> None:
    write(tmp_path / "b.md", "Keep {{.this}} as written")
    cfg = load(
        tmp_path, "procedures:\n  p:\n    act:\n      - path: b.md\n        parameters: {}\n"
    )
    assert compose_phase(cfg.procedure("p").act) == "Keep {{.this}} as written"


def test_execution_error_is_located_at_the_fragment(tmp_path: Path) -> None:
    write(tmp_path / "x.md", "first line\n{{index .items 5}}\n")
    cfg = load(
        tmp_path,
        "procedures:\n  p:\n    act:\n      - content: ok\n      - path: x.md\n"
        "        parameters:\n          items: [a]\n",
    )
    with pytest.raises(TemplateError) as info:
        assemble_prompt(cfg.procedure("p"))
    err = info.value
    assert err.kind == "exec"
    assert err.template_line == 2
    assert (err.line, err.column) == (5, 9)
    assert err.file is not None
    assert err.file.endswith("ooda-config.yml")
    assert err.message.startswith("procedure p: act[1]: template execution error: template: ")
    assert "index out of range" in err.message
    assert err.hint is not None
    assert err.hint.endswith("x.md:2")


def test_observer_receives_render_trace_for_templates(tmp_path: Path) -> None:
    write(tmp_path / "t.md", "Head\n{{if .flag}}\nyes\n{{else}}\nno\n{{end}}\n")
    cfg = load(
        tmp_path,
        "procedures:\n  p:\n    act:\n      - path: t.md\n        parameters: {flag: true}\n"
        "      - content: plain\n",
    )
    seen: list[FragmentUse] = []
    remove = add_use_observer(seen.append)
    try:
        assemble_prompt(cfg.procedure("p"))
    finally:
        remove()
    templated, plain = seen
    assert plain.trace is None
    assert templated.trace is not None
    assert 3 in templated.trace.lines
    assert 5 not in templated.trace.lines
    assert {(b.construct, b.arm) for b in templated.trace.taken} == {("if", "then")}


def test_fragments_rendering_empty(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        procedures:
          p:
            orient:
              - content: "{{if .x}}never{{end}}"
                parameters: {x: false}
            act:
              - content: "{{if .x}}never{{end}}"
                parameters: {x: false}
              - content: "after"
        """,
    )
    proc = cfg.procedure("p")
    assert compose_phase(proc.orient) == ""
    # Go trims the joined phase text: an empty first piece leaves no blank lines.
    assert compose_phase(proc.act) == "after"
    text = assemble_prompt(proc)
    assert "PHASE 2: ORIENT" not in text
    assert text.endswith(f"PHASE 4: ACT\n{PHASE_4}\n{BAR}\n" + compose_phase(proc.act) + "\n")
    mapped = assemble_prompt_mapped(proc)
    lines = mapped.text.splitlines()
    (inline,) = [s for s in mapped.segments if s.source == "inline"]
    assert lines[inline.start_line - 1] == "after"


PHASE_4 = "Execute the actions you decided on. Modify files, run commands, commit changes."


def test_unreadable_fragment_error_names_the_config_entry(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "latin1.md").write_bytes(b"caf\xe9\n")
    config_text = "procedures:\n  p:\n    act:\n      - content: x\n      - path: prompts/latin1.md"
    cfg = load(tmp_path, config_text)
    with pytest.raises(FragmentError) as info:
        assemble_prompt(cfg.procedure("p"))
    assert str(info.value) == (
        f"{tmp_path}/prompts/latin1.md:1:4: fragment file is not valid UTF-8 text "
        "(byte 0xe9 at offset 3)\n"
        "  save the file as UTF-8 (it looks like Latin-1 or Windows-1252 text)\n"
        f"  used by procedure p: act[1] at {tmp_path}/ooda-config.yml:5:9"
    )


def test_undecodable_context_from_the_command_line_is_replaced(
    proc: Procedure, tmp_path: Path
) -> None:
    # argv bytes that are not UTF-8 reach Python as lone surrogates (PEP 383).
    name = b"ctx\xff.md".decode("utf-8", "surrogateescape")
    (tmp_path / name).write_text("from the file")
    text = assemble_prompt(proc, context=["caf\udce9", name, "lone \ud800"], cwd=tmp_path)
    text.encode("utf-8")  # would raise with a surrogate left in
    assert "\ncaf\ufffd\n\nSource: ctx\ufffd.md\n\nfrom the file\n\nlone ?\n" in text

"""Lint rules (lint/rules.py, lint/procedure.py, lint/project.py): each rule firing and not
firing."""

from __future__ import annotations

from pathlib import Path

from pytest_ooda import lint
from pytest_ooda.lint import (
    RULES,
    lint_path,
)

from .helpers import (
    FAILURE,
    SUCCESS,
    TEMPLATE,
    good,
    ids,
    only,
    project,
    run,
    with_observe,
)


def test_rule_table_is_consistent() -> None:
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id
        assert rule.severity in lint.SEVERITIES
        assert rule.why
        assert rule.summary
    names = [r.name for r in RULES.values()]
    assert len(set(names)) == len(names)


def test_documentation_covers_every_rule() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "lint-rules.md").read_text(encoding="utf-8")
    for rule in RULES.values():
        assert f"## {rule.id} {rule.name}" in doc
        assert f"| `{rule.name}` |" in doc


def test_clean_config_has_no_findings(tmp_path: Path) -> None:
    report = run(tmp_path, good())
    assert report.findings == ()
    assert report.exit_code == 0
    assert report.summary() == "no findings (1 procedure checked)"
    assert report.procedures == ("good",)


def test_builtin_procedures_are_lint_clean(tmp_path: Path) -> None:
    report = lint_path(None, cwd=tmp_path)
    assert len(report.procedures) == 16
    assert [f.format() for f in report.findings] == []


def test_config_error_is_one_finding(tmp_path: Path) -> None:
    report = run(tmp_path, "procedures:\n  bad:\n    observe: [{path: nope.md}]\n")
    finding = only(report, "OODA001")
    assert finding.severity == "error"
    assert "nope.md" in finding.message
    assert finding.line == 3
    assert report.exit_code == 1


def test_config_warning(tmp_path: Path) -> None:
    finding = only(run(tmp_path, "procedure:\n  x: 1\n" + good()), "OODA003")
    assert finding.severity == "warning"
    assert "unknown top-level key 'procedure'" in finding.message
    assert (Path(finding.file or "").name, finding.line, finding.column) == (
        "ooda-config.yml",
        1,
        1,
    )


def test_render_error(tmp_path: Path) -> None:
    config = good(extra='    description: ""\n').replace(
        'orient: [{content: "Understand the task."}]',
        'orient: [{content: "First: {{index .t 5}}", parameters: {t: [a]}}]',
    )
    report = run(tmp_path, config)
    finding = only(report, "OODA002")
    assert finding.severity == "error"
    assert "orient[0]" in finding.message
    assert "OODA301" not in ids(report)


def test_empty_phase_fires_and_not(tmp_path: Path) -> None:
    config = good().replace('orient: [{content: "Understand the task."}]', "orient: []")
    finding = only(run(tmp_path, config), "OODA101")
    assert "phase orient is empty" in finding.message
    assert (finding.line, finding.column) == (4, 5)  # the `orient:` key
    missing = good().replace('    orient: [{content: "Understand the task."}]\n', "")
    finding = only(run(tmp_path, missing), "OODA101")
    assert (finding.line, finding.column) == (2, 3)  # no key: the procedure
    assert "OODA101" not in ids(run(tmp_path, good()))


def test_duplicate_fragment(tmp_path: Path) -> None:
    files = {"p/read.md": "Read.\n", "p/t.md": "Look at {{.x}}.\n"}
    dup = good().replace(
        'observe: [{content: "Read the repository."}]',
        "observe:\n      - path: p/read.md\n      - path: p/read.md",
    )
    finding = only(run(tmp_path, dup, files), "OODA102")
    assert "already listed as observe[0]" in finding.message
    assert finding.line == 5
    params_differ = good().replace(
        'observe: [{content: "Read the repository."}]',
        "observe:\n      - {path: p/t.md, parameters: {x: a}}\n"
        "      - {path: p/t.md, parameters: {x: b}}",
    )
    assert ids(run(tmp_path, params_differ, files, select=["OODA1"])) == []
    same_params = params_differ.replace("{x: b}", "{x: a}")
    assert ids(run(tmp_path, same_params, files, select=["OODA1"])) == ["OODA102"]


def test_unlimited_without_timeout(tmp_path: Path) -> None:
    finding = only(run(tmp_path, good(extra="    iteration_mode: unlimited\n")), "OODA103")
    assert finding.procedure == "good"
    assert (finding.line, finding.column) == (7, 5)
    with_timeout = good(extra="    iteration_mode: unlimited\n    iteration_timeout: 60\n")
    assert ids(run(tmp_path, with_timeout)) == []
    loop_timeout = "loop:\n  iteration_timeout: 60\n" + good(
        extra="    iteration_mode: unlimited\n"
    )
    assert ids(run(tmp_path, loop_timeout)) == []


def test_unlimited_on_loop_is_reported_at_the_loop_key(tmp_path: Path) -> None:
    report = run(tmp_path, "loop:\n  iteration_mode: unlimited\n" + good())
    finding = only(report, "OODA103")
    assert (finding.line, finding.column) == (2, 3)
    assert finding.message.startswith("loop:")


def test_missing_parameter(tmp_path: Path) -> None:
    report = run(
        tmp_path, with_observe("{path: p/t.md, parameters: {kind: spec}}"), {"p/t.md": TEMPLATE}
    )
    finding = only(report, "OODA201")
    assert ".paths" in finding.message
    assert "(line 2)" in finding.message
    assert Path(finding.file or "").name == "ooda-config.yml"
    assert (finding.line, finding.column) == (4, 9)
    assert finding.format(relative_to=tmp_path).startswith(
        "ooda-config.yml:4:9: OODA201 warning: procedure good: observe[0]: p/t.md"
    )
    complete = with_observe("{path: p/t.md, parameters: {kind: spec, paths: [a]}}")
    assert ids(run(tmp_path, complete, {"p/t.md": TEMPLATE})) == []


def test_no_value_in_the_prompt_is_an_error_at_the_read(tmp_path: Path) -> None:
    typo = "Read {{.kind}} files.\n{{if .verbose}}Be thorough.{{end}}\nAlso {{.pathz}}\n"
    report = run(
        tmp_path,
        with_observe("{path: p/t.md, parameters: {kind: spec, paths: [a]}}"),
        {"p/t.md": typo},
    )
    finding = only(report, "OODA205")
    assert finding.severity == "error"
    assert report.exit_code == 1
    assert Path(finding.file or "").name == "t.md"
    assert (finding.line, finding.column) == (3, 8)
    assert finding.message == (
        "procedure good: observe[0]: p/t.md renders <no value> for .pathz: the action "
        "does not supply it"
    )
    hint, used_by = (finding.hint or "").split("\n")
    assert hint == "did you mean 'paths'?"
    assert used_by.startswith("  used by procedure good: observe[0] at ")
    assert used_by.endswith("ooda-config.yml:4:9")
    # .verbose is only tested, so it renders nothing: OODA201's warning, not OODA205.
    assert [f.message for f in report.findings if f.id == "OODA201"] == [
        "procedure good: observe[0]: p/t.md (line 2) uses .verbose but the action does not "
        "supply it (renders <no value>)"
    ]


def test_no_value_inline_and_in_a_nested_field(tmp_path: Path) -> None:
    inline = '{content: "Focus on {{.are}}.", parameters: {area: auth, depth: 2}}'
    finding = only(run(tmp_path, with_observe(inline)), "OODA205")
    assert (finding.line, finding.column) == (4, 9)  # the action: the text has no file
    assert "renders <no value> for .are (line 1, column 12)" in finding.message
    assert finding.hint == "did you mean 'area'?"
    nested = '{content: "Focus on {{.cfg.are}}.", parameters: {cfg: {area: auth}}}'
    finding = only(run(tmp_path, with_observe(nested)), "OODA205")
    assert "a field it reads is missing from a parameter's value" in finding.message
    assert finding.hint == "the parameters supplied: cfg"
    # Written in the fragment's own words, it is not a finding; nor is a rule turned off.
    literal = '{content: "Go prints <no value> for {{.what}}.", parameters: {what: it}}'
    assert "OODA205" not in ids(run(tmp_path, with_observe(literal)))
    assert "OODA205" not in ids(run(tmp_path, with_observe(inline), severities={"OODA205": "off"}))


def test_tagged_parameters_keep_loop_locations(tmp_path: Path) -> None:
    # `!!timestamp` is only valid under parameters (yaml.v3 typing); the raw load that
    # locates `loop:` keys must type the file the same way or lose every column.
    action = '{content: "at {{.when}}", parameters: {when: !!timestamp 2024-01-02}}'
    report = run(tmp_path, "loop:\n  iteration_mode: unlimited\n" + with_observe(action))
    finding = only(report, "OODA103")
    assert (finding.line, finding.column) == (2, 3)


def test_unused_parameter_points_at_the_parameter(tmp_path: Path) -> None:
    action = (
        "path: p/t.md\n        parameters:\n"
        "          kind: spec\n          paths: [a]\n          pathz: [b]"
    )
    report = run(tmp_path, with_observe(action), {"p/t.md": TEMPLATE})
    finding = only(report, "OODA202")
    assert "'pathz'" in finding.message
    assert (finding.line, finding.column) == (8, 11)


def test_unused_parameter_not_decided_when_whole_data_is_passed(tmp_path: Path) -> None:
    files = {
        "p/dot.md": "All: {{.}}\n",
        "p/tpl.md": '{{define "x"}}{{.a}}{{end}}{{template "x" .}}\n',
        "p/root.md": "{{range .items}}{{$.kind}} {{.}}{{end}}\n",
    }
    dot = with_observe("{path: p/dot.md, parameters: {a: 1, b: 2}}")
    assert "OODA202" not in ids(run(tmp_path, dot, files))
    # A template invoked with dot is followed, so its unused parameters are still found.
    tpl = with_observe("{path: p/tpl.md, parameters: {a: 1, b: 2}}")
    tpl_report = run(tmp_path, tpl, files, select=["OODA202"])
    assert [f.message.split(": ")[-1] for f in tpl_report.findings] == [
        "parameter 'b' is never used by p/tpl.md"
    ]
    # `.` inside range is the element, so an unused top-level parameter is still found.
    ranged = with_observe("{path: p/root.md, parameters: {items: [1], kind: k, extra: 3}}")
    assert "OODA202" in ids(run(tmp_path, ranged, files))


def test_parameters_without_template(tmp_path: Path) -> None:
    report = run(
        tmp_path, with_observe("{path: p/plain.md, parameters: {x: 1}}"), {"p/plain.md": "Plain.\n"}
    )
    finding = only(report, "OODA203")
    assert "has no template syntax" in finding.message
    assert "OODA202" not in ids(report)


def test_template_without_parameters(tmp_path: Path) -> None:
    report = run(tmp_path, with_observe("{path: p/t.md}"), {"p/t.md": TEMPLATE})
    finding = only(report, "OODA204")
    assert "(line 1)" in finding.message
    inline = run(tmp_path, with_observe('{content: "Use {{.x}} literally"}'))
    assert ids(inline) == ["OODA204"]


def test_missing_success_and_failure_signals(tmp_path: Path) -> None:
    config = good().replace(SUCCESS, "done").replace(FAILURE, "stuck")
    report = run(tmp_path, config)
    assert ids(report) == ["OODA301", "OODA302"]
    assert [f.severity for f in report.findings] == ["error", "warning"]
    assert report.exit_code == 1
    assert report.summary() == "2 findings: 1 error, 1 warning, 0 infos (1 procedure checked)"


def test_signal_in_an_unrendered_branch_does_not_count(tmp_path: Path) -> None:
    files = {"p/end.md": "{{if .final}}Output " + SUCCESS + " when done.{{end}}\n"}
    config = good().replace(
        f'act: [{{content: "When the task is done, output {SUCCESS}."}}]',
        "act: [{path: p/end.md, parameters: {final: false}}]",
    )
    assert ids(run(tmp_path, config, files)) == ["OODA301"]
    assert ids(run(tmp_path, config.replace("final: false", "final: true"), files)) == []


def test_unused_fragment_file(tmp_path: Path) -> None:
    files = {"p/read.md": "Read.\n", "p/old.md": "Old.\n", "p/notes.txt": "not a fragment\n"}
    report = run(tmp_path, with_observe("{path: p/read.md}"), files)
    finding = only(report, "OODA401")
    assert finding.severity == "info"
    assert finding.format(relative_to=tmp_path) == (
        "p/old.md:1:1: OODA401 info: fragment file old.md is not used by any procedure"
    )
    assert report.exit_code == 0


def test_the_config_files_own_folder_is_not_a_fragment_folder(tmp_path: Path) -> None:
    files = {"read.md": "Read.\n", "README.md": "# Project\n"}
    assert "OODA401" not in ids(run(tmp_path, with_observe("{path: read.md}"), files))


def test_builtin_fragments_are_never_unused_files(tmp_path: Path) -> None:
    config = with_observe("{path: builtin:fragments/observe/read_agents_md.md}")
    assert "OODA401" not in ids(run(tmp_path, config))


def test_unused_alias(tmp_path: Path) -> None:
    aliases = 'ai_cmd_aliases:\n  fast: "claude -p"\n  slow: "claude -p --model opus"\n'
    report = run(tmp_path, aliases + good(extra="    ai_cmd_alias: slow\n"))
    finding = only(report, "OODA402")
    assert "'fast'" in finding.message
    assert (finding.line, finding.column) == (2, 3)
    used_by_loop = (
        aliases + "loop:\n  ai_cmd_alias: fast\n" + good(extra="    ai_cmd_alias: slow\n")
    )
    assert ids(run(tmp_path, used_by_loop)) == []


def test_redundant_builtin_override(tmp_path: Path) -> None:
    same = 'procedures:\n  audit-spec:\n    display: "Audit Specifications"\n'
    finding = only(run(tmp_path, same), "OODA403")
    assert finding.procedure == "audit-spec"
    assert (finding.line, finding.column) == (2, 3)
    changed = 'procedures:\n  audit-spec:\n    display: "My audit"\n'
    assert ids(run(tmp_path, changed)) == []
    # Its own prompt layout changes the prompt, so it is not redundant.
    layout = same + "    prompt_format: rooda\n"
    assert ids(run(tmp_path, layout)) == []


def test_builtin_flag_adds_the_builtins(tmp_path: Path) -> None:
    project(tmp_path, good())
    report = lint_path(tmp_path / "ooda-config.yml", cwd=tmp_path, builtin=True)
    assert len(report.procedures) == 17

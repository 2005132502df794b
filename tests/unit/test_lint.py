"""Lint rules: each rule firing and not firing, severities, select/ignore, output."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_ooda import lint
from pytest_ooda.config import load_config_file
from pytest_ooda.errors import ConfigError
from pytest_ooda.lint import (
    RULES,
    Finding,
    LintReport,
    format_json,
    format_text,
    lint_path,
    lint_procedure,
    parse_rule_list,
    parse_severity_overrides,
    resolve_settings,
)

SUCCESS = "<promise>SUCCESS</promise>"
FAILURE = "<promise>FAILURE</promise>"

GOOD_PHASES = f"""\
    observe: [{{content: "Read the repository."}}]
    orient: [{{content: "Understand the task."}}]
    decide: [{{content: "If you are blocked, output {FAILURE}."}}]
    act: [{{content: "When the task is done, output {SUCCESS}."}}]
"""


def project(tmp_path: Path, config: str, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {}).items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    cfg = tmp_path / "ooda-config.yml"
    cfg.write_text(textwrap.dedent(config), encoding="utf-8")
    return cfg


def run(
    tmp_path: Path, config: str, files: dict[str, str] | None = None, **kw: object
) -> LintReport:
    project(tmp_path, config, files)
    return lint_path(None, cwd=tmp_path, **kw)  # type: ignore[arg-type]


def ids(report: LintReport) -> list[str]:
    return [f.id for f in report.findings]


def only(report: LintReport, rule: str) -> Finding:
    found = [f for f in report.findings if f.id == rule]
    assert len(found) == 1, report.findings
    return found[0]


def good(name: str = "good", extra: str = "") -> str:
    return f"procedures:\n  {name}:\n{GOOD_PHASES}{extra}"


def test_rule_table_is_consistent() -> None:
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id
        assert rule.severity in lint.SEVERITIES
        assert rule.why
        assert rule.summary
    names = [r.name for r in RULES.values()]
    assert len(set(names)) == len(names)


def test_documentation_covers_every_rule() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "lint-rules.md").read_text(encoding="utf-8")
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


TEMPLATE = """\
Read these {{.kind}} files:
{{range .paths}}- {{.}}
{{end}}
"""


def with_observe(action: str, extra: str = "") -> str:
    return good(extra=extra).replace(
        'observe: [{content: "Read the repository."}]', f"observe:\n      - {action}"
    )


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


# --------------------------------------------------------------------------- severities


def test_lint_section_changes_and_disables_rules(tmp_path: Path) -> None:
    config = (
        good()
        .replace(FAILURE, "stuck")
        .replace('orient: [{content: "Understand the task."}]', "orient: []")
    )
    report = run(tmp_path, "lint:\n  OODA302: error\n  empty-phase: off\n" + config)
    assert [(f.id, f.severity) for f in report.findings] == [("OODA302", "error")]
    assert report.exit_code == 1


def test_yaml_bare_off_switches_a_rule_off(tmp_path: Path) -> None:
    config = good().replace(FAILURE, "stuck")
    assert ids(run(tmp_path, "lint:\n  OODA302: off\n" + config)) == []


def test_run_overrides_beat_the_lint_section(tmp_path: Path) -> None:
    config = "lint:\n  OODA302: error\n" + good().replace(FAILURE, "stuck")
    report = run(tmp_path, config, severities={"OODA302": "info"})
    assert [(f.id, f.severity) for f in report.findings] == [("OODA302", "info")]
    assert report.exit_code == 0


def test_unknown_rule_in_lint_section_is_a_located_config_error(tmp_path: Path) -> None:
    report = run(tmp_path, "lint:\n  OODA999: error\n" + good())
    finding = only(report, "OODA001")
    assert (finding.line, finding.column) == (2, 3)
    assert "unknown rule 'OODA999'" in finding.message
    assert report.exit_code == 1


def test_config_error_severity_is_fixed(tmp_path: Path) -> None:
    report = run(tmp_path, "lint:\n  OODA001: warning\n" + good())
    assert "cannot be changed" in only(report, "OODA001").message
    with pytest.raises(ConfigError, match="cannot be changed"):
        parse_severity_overrides(["OODA001=off"])
    with pytest.raises(ConfigError, match="cannot be changed"):
        lint_path(None, cwd=tmp_path, severities={"OODA001": "off"})


def test_parse_severity_overrides() -> None:
    assert parse_severity_overrides(["OODA201=error,unused-alias=off", " OODA302=warn"]) == {
        "OODA201": "error",
        "OODA402": "off",
        "OODA302": "warning",
    }
    with pytest.raises(ConfigError, match="expected RULE=SEVERITY"):
        parse_severity_overrides(["OODA201"])
    with pytest.raises(ConfigError, match="invalid severity 'loud'"):
        parse_severity_overrides(["OODA201=loud"])
    with pytest.raises(ConfigError, match="did you mean 'OODA201'"):
        parse_severity_overrides(["OODA21=error"])


def test_parse_rule_list_accepts_ids_prefixes_and_names() -> None:
    assert parse_rule_list(["OODA2"]) == ("OODA201", "OODA202", "OODA203", "OODA204")
    assert parse_rule_list(["ooda301, unused-alias", "OODA301"]) == ("OODA301", "OODA402")
    with pytest.raises(ConfigError, match="unknown lint rule or prefix 'OODA9'"):
        parse_rule_list(["OODA9"], source="--select")


def test_select_and_ignore(tmp_path: Path) -> None:
    config = good().replace(SUCCESS, "done").replace(FAILURE, "stuck")
    assert ids(run(tmp_path, config, select=["OODA302"])) == ["OODA302"]
    assert ids(run(tmp_path, config, ignore=["no-success-signal"])) == ["OODA302"]
    assert ids(run(tmp_path, config, select=["OODA3"], ignore=["OODA301"])) == ["OODA302"]
    settings = resolve_settings(None, select=["OODA1"])
    assert settings.enabled("OODA001")
    assert not settings.enabled("OODA301")


# --------------------------------------------------------------------------- output & API


def test_format_text_and_json(tmp_path: Path) -> None:
    report = run(tmp_path, good().replace(SUCCESS, "done"))
    text = format_text(report, relative_to=tmp_path)
    assert text.splitlines() == [
        "ooda-config.yml:2:3: OODA301 error: procedure good: no fragment says when to emit "
        + SUCCESS,
        "1 finding: 1 error, 0 warnings, 0 infos (1 procedure checked)",
    ]
    data = json.loads(format_json(report, relative_to=tmp_path))
    assert data["summary"] == {
        "error": 1,
        "warning": 0,
        "info": 0,
        "procedures": 1,
        "exit_code": 1,
    }
    (finding,) = data["findings"]
    assert finding["id"] == "OODA301"
    assert finding["name"] == "no-success-signal"
    assert finding["file"] == "ooda-config.yml"
    assert (finding["line"], finding["column"]) == (2, 3)
    assert finding["why"] == RULES["OODA301"].why


def test_lint_procedure_uses_the_config_lint_section(tmp_path: Path) -> None:
    cfg = project(tmp_path, "lint:\n  OODA302: info\n" + good().replace(FAILURE, "stuck"))
    config = load_config_file(cfg)
    (finding,) = lint_procedure(config, "good")
    assert (finding.id, finding.severity, finding.why) == (
        "OODA302",
        "info",
        RULES["OODA302"].why,
    )
    explicit = resolve_settings(config, severities={"OODA302": "off"})
    assert lint_procedure(config, "good", settings=explicit) == []


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        lint_path("absent.yml", cwd=tmp_path)


def test_lint_does_not_count_as_composition(tmp_path: Path) -> None:
    from pytest_ooda.compose import add_use_observer

    seen: list[object] = []
    remove = add_use_observer(seen.append)
    try:
        run(tmp_path, with_observe("{path: p/read.md}"), {"p/read.md": "Read.\n"})
    finally:
        remove()
    assert seen == []

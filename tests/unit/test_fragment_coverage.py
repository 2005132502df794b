"""The session fragment-coverage tracker: recording, merging and the report text."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

from pytest_ooda.compose import compose_phase
from pytest_ooda.config import load_config_file
from pytest_ooda.fragment_coverage import FragmentCoverage
from pytest_ooda.fragments import builtin_root
from pytest_ooda.gotemplate import Branch, RenderTrace

CONFIG = """\
procedures:
  alpha:
    observe:
      - path: p/read.md
      - path: builtin:fragments/observe/read_agents_md.md
    orient:
      - path: p/choice.md
        parameters: {strict: true, items: [a]}
    act:
      - content: "inline text is not a file"
  beta:
    observe:
      - path: p/beta.md
"""

CHOICE = """\
Check.
{{if .strict}}
Strict.
{{else}}
Lenient.
{{end}}
{{range .items}}- {{.}}
{{end}}
"""


def make(tmp_path: Path) -> Path:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "read.md").write_text("Read.\n", encoding="utf-8")
    (tmp_path / "p" / "beta.md").write_text("Beta.\n", encoding="utf-8")
    (tmp_path / "p" / "choice.md").write_text(CHOICE, encoding="utf-8")
    cfg = tmp_path / "ooda-config.yml"
    cfg.write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    return cfg


def test_static_registration_and_live_compositions(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    config = load_config_file(cfg)
    cov = FragmentCoverage()
    cov.register_config(config)
    cov.start()
    try:
        alpha = config.procedure("alpha")
        compose_phase(alpha.observe, procedure="alpha", phase="observe")
        compose_phase(alpha.observe, procedure="alpha", phase="observe")
        compose_phase(alpha.act, procedure="alpha", phase="act")
    finally:
        cov.stop()
    compose_phase(config.procedure("beta").observe, procedure="beta")  # after stop: unseen
    read = cov.records[str((tmp_path / "p" / "read.md").resolve())]
    assert (read.users, read.composed_by, read.compositions) == ({"alpha"}, {"alpha"}, 2)
    beta = cov.records[str((tmp_path / "p" / "beta.md").resolve())]
    assert (beta.users, beta.compositions) == ({"beta"}, 0)
    choice = cov.records[str((tmp_path / "p" / "choice.md").resolve())]
    assert choice.templated
    assert choice.compositions == 0
    assert len(cov.records) == 4  # inline content is not a file


def test_register_config_file_keeps_to_the_declaring_file(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    cov = FragmentCoverage()
    assert cov.register_config_file(cfg)
    users = {Path(k).name: r.users for k, r in cov.records.items()}
    # Built-in procedures merged in by load_config are not registered: only alpha/beta.
    assert users["read_agents_md.md"] == {"alpha"}
    assert not cov.register_config_file(tmp_path / "p" / "read.md")


def test_builtin_config_file_registers_every_builtin(tmp_path: Path) -> None:
    cov = FragmentCoverage()
    assert cov.register_config_file(builtin_root() / "procedures" / "builtin.yml")
    users = {Path(k).name: r.users for k, r in cov.records.items()}
    assert "build" in users["emit_success.md"]
    assert users["emit_failure.md"] == set()  # in the library, used by no built-in
    assert len(cov.records) == 59


def fake_use(
    file: Path, procedure: str, lines: set[int], taken: set[tuple[int, str, str]]
) -> object:
    trace = RenderTrace(lines=lines, taken={Branch(a, b, c) for a, b, c in taken})
    action = SimpleNamespace(parameters={"x": 1})
    return SimpleNamespace(
        action=action, file=file, procedure=procedure, phase="orient", trace=trace
    )


def test_data_round_trip_merges_like_one_process(tmp_path: Path) -> None:
    frag = tmp_path / "t.md"
    frag.write_text("x\n", encoding="utf-8")
    one, two = FragmentCoverage(), FragmentCoverage()
    one.observe(fake_use(frag, "alpha", {1}, {(2, "if", "if")}))  # type: ignore[arg-type]
    two.observe(fake_use(frag, "beta", {3}, {(2, "if", "else")}))  # type: ignore[arg-type]
    merged = FragmentCoverage()
    for part in (one, two):
        merged.merge_data(json.loads(json.dumps(part.to_data())))
    record = merged.records[str(frag.resolve())]
    assert record.compositions == 2
    assert record.composed_by == {"alpha", "beta"}
    assert record.taken == {(2, "if", "if"), (2, "if", "else")}
    assert record.rendered_lines == {1, 3}
    assert record.templated


def test_report_lists_never_composed_first_and_unrendered_arms(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    config = load_config_file(cfg)
    cov = FragmentCoverage()
    cov.register_config(config)
    cov.start()
    try:
        alpha = config.procedure("alpha")
        for phase, actions in alpha.phases().items():
            compose_phase(actions, procedure="alpha", phase=phase)
    finally:
        cov.stop()
    lines = cov.report_lines(rootdir=tmp_path)
    assert lines[0] == "3 of 4 fragment files composed during the session"
    assert lines[1:3] == ["never composed (1):", "  p/beta.md  used by: beta"]
    assert lines[3] == "composed (3):"
    assert lines[4] == (
        "  builtin:fragments/observe/read_agents_md.md  used by: alpha  composed 1x"
    )
    choice = next(i for i, line in enumerate(lines) if "p/choice.md" in line)
    assert lines[choice] == ("  p/choice.md  used by: alpha  composed 1x  branches 2/4 rendered")
    assert lines[choice + 1 : choice + 3] == [
        "      not rendered: line 2 if 'else' arm",
        "      not rendered: line 7 range 'empty' arm",
    ]
    assert lines[-1] == "  p/read.md  used by: alpha  composed 1x"


def test_report_without_any_fragment() -> None:
    assert FragmentCoverage().report_lines() == [
        "0 of 0 fragment files composed during the session"
    ]

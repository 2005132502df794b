"""The coverage.py plugin: statement lines, claiming, and real ``coverage run`` sessions.

The end-to-end tests run coverage.py in a subprocess: a second ``Coverage`` inside the
process that may itself be measured would replace its tracer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from pytest_ooda import coverage_plugin
from pytest_ooda.coverage_plugin import (
    FragmentCoveragePlugin,
    FragmentReporter,
    executed_lines_for_use,
    mark_fragment,
    statement_lines,
)

if TYPE_CHECKING:
    from pytest_ooda.compose import FragmentUse


def test_plain_text_statements_are_the_non_blank_lines() -> None:
    assert statement_lines("# Title\n\nbody\n   \nlast") == {1, 3, 5}


def test_control_only_lines_are_not_statements() -> None:
    text = textwrap.dedent(
        """\
        Intro {{.name}}
        {{if .flag}}
        flag text
        {{- else}}
        {{/* a comment
        spanning lines */}}
        other text
        {{end}}
        {{$x := 1}}
        {{range .items}}- {{.}}{{end}}
        {{template "t" .}}
        {{printf "%d" 3}}
        """
    )
    assert statement_lines(text) == {1, 3, 7, 10, 11, 12}


def test_output_action_alone_on_a_line_is_a_statement() -> None:
    assert statement_lines("{{.x}}\n{{ if .z }}\n{{- .y -}}\n{{ end }}") == {1, 3}


def test_declarations_comments_and_control_lines_are_not_statements() -> None:
    source = (
        "{{/* note */}}\n{{ $v := .x }}\n{{ range .xs }}\n- {{ . }}\n{{ end }}\n"
        '{{ template "t" . }}\n'
    )
    assert statement_lines(source) == {4, 6}


def test_text_that_is_no_template_counts_every_non_blank_line() -> None:
    # Used verbatim (a fragment without parameters), so all of it reaches the prompt.
    assert statement_lines("{{ end }}\n\nplain {{.x}\n") == {1, 3}


def test_file_tracer_claims_only_marked_fragments(tmp_path: Path) -> None:
    frag = tmp_path / "claimed.md"
    frag.write_text("a\nb\n", encoding="utf-8")
    plugin = FragmentCoveragePlugin({})
    assert plugin.file_tracer(str(frag.resolve())) is None
    mark_fragment(frag, {1})
    tracer = plugin.file_tracer(str(frag.resolve()))
    assert tracer is not None
    assert tracer.source_filename() == str(frag.resolve())
    assert plugin.file_tracer(str(tmp_path / "other.md")) is None


def test_reporter_reads_source_and_lines(tmp_path: Path) -> None:
    frag = tmp_path / "f.md"
    frag.write_text("one\n\n{{if .x}}\ntwo\n{{end}}\n", encoding="utf-8")
    reporter = FragmentCoveragePlugin({}).file_reporter(str(frag))
    assert isinstance(reporter, FragmentReporter)
    assert reporter.lines() == {1, 4}
    assert reporter.source().startswith("one\n")


def test_reporter_for_a_vanished_file_raises_coverage_error(tmp_path: Path) -> None:
    import coverage

    reporter = FragmentReporter(str(tmp_path / "gone.md"))
    with pytest.raises(coverage.CoverageException, match="could not be read"):
        reporter.source()


def test_find_executable_files_lists_fragments_folders_only(tmp_path: Path) -> None:
    (tmp_path / "fragments" / "observe").mkdir(parents=True)
    (tmp_path / "fragments" / "observe" / "a.md").write_text("a", encoding="utf-8")
    (tmp_path / "fragments" / "b.txt").write_text("b", encoding="utf-8")
    (tmp_path / "README.md").write_text("readme", encoding="utf-8")
    found = list(FragmentCoveragePlugin({}).find_executable_files(str(tmp_path)))
    assert found == [str(tmp_path / "fragments" / "observe" / "a.md")]
    # `source` may name the fragments folder itself.
    inside = FragmentCoveragePlugin({}).find_executable_files(str(tmp_path / "fragments"))
    assert list(inside) == found
    with_txt = FragmentCoveragePlugin({"fragment_suffixes": ".md txt"})
    assert sorted(with_txt.find_executable_files(str(tmp_path))) == sorted(
        [str(tmp_path / "fragments" / "observe" / "a.md"), str(tmp_path / "fragments" / "b.txt")]
    )


def test_mark_fragment_without_coverage_is_harmless(tmp_path: Path) -> None:
    frag = tmp_path / "x.md"
    frag.write_text("x\n", encoding="utf-8")
    mark_fragment(frag, {1, 5, 0, -2})
    mark_fragment(frag, set())


def test_connect_is_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ooda import compose

    before = list(compose._observers)
    monkeypatch.setattr(coverage_plugin, "_connected", False)
    try:
        coverage_plugin.connect()
        coverage_plugin.connect()
        added = [o for o in compose._observers if o not in before]
        assert added == [coverage_plugin._on_use]
    finally:
        for observer in [o for o in compose._observers if o not in before]:
            compose._observers.remove(observer)


def _use(file: Path | None, trace: object = None) -> FragmentUse:
    from pytest_ooda.compose import FragmentUse
    from pytest_ooda.config import FragmentAction, Location

    action = FragmentAction(
        content=None if file else "inline",
        path=str(file) if file else None,
        parameters={},
        base_dir=Path("."),
        location=Location(None, 1, 1),
    )
    return FragmentUse(action, file, "alpha", "observe", trace)  # type: ignore[arg-type]


def test_executed_lines_for_plain_template_and_inline_uses(tmp_path: Path) -> None:
    from pytest_ooda.gotemplate import RenderTrace

    frag = tmp_path / "f.md"
    frag.write_text("one\n\nthree\n", encoding="utf-8")
    assert executed_lines_for_use(_use(frag)) == {1, 3}
    assert executed_lines_for_use(_use(frag, RenderTrace(lines={3}))) == {3}
    assert executed_lines_for_use(_use(None)) is None
    assert executed_lines_for_use(_use(tmp_path / "gone.md")) is None


def test_on_use_claims_the_fragment(tmp_path: Path) -> None:
    frag = tmp_path / "used.md"
    frag.write_text("used\n", encoding="utf-8")
    plugin = FragmentCoveragePlugin({})
    coverage_plugin._on_use(_use(None))
    coverage_plugin._on_use(_use(frag))
    assert plugin.file_tracer(str(frag.resolve())) is not None


def test_tracer_reports_the_frame_line() -> None:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None
    tracer = coverage_plugin.FragmentTracer("x.md")
    assert tracer.line_number_range(frame) == (frame.f_lineno, frame.f_lineno)


def test_coverage_init_registers_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[object] = []
    monkeypatch.setattr(coverage_plugin, "connect", lambda: registered.append("connected"))
    reg = SimpleNamespace(add_file_tracer=registered.append)
    coverage_plugin.coverage_init(reg, {"fragment_folder": "prompts"})  # type: ignore[arg-type]
    plugin, connected = registered
    assert isinstance(plugin, FragmentCoveragePlugin)
    assert connected == "connected"


# --------------------------------------------------------------------------------------
# coverage.py for real, in subprocesses

PROJECT_CONFIG = """\
procedures:
  alpha:
    observe:
      - path: fragments/observe/plain.md
    orient:
      - path: fragments/orient/choice.md
        parameters:
          strict: true
          items: [one, two]
  beta:
    observe:
      - path: fragments/observe/only_beta.md
"""

CHOICE = """\
Check the work.
{{if .strict}}
Be strict about every item.
{{else}}
Be lenient.
{{end}}
{{range .items}}- {{.}}
{{end}}
Done.
"""


def _clean_env() -> dict[str, str]:
    # The outer test run may itself be under coverage (COVERAGE_PROCESS_* variables);
    # the inner session must start from scratch.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _make_project(root: Path, *, extra_run: str = "", test_body: str) -> None:
    (root / "fragments" / "observe").mkdir(parents=True)
    (root / "fragments" / "orient").mkdir(parents=True)
    (root / "fragments" / "observe" / "plain.md").write_text(
        "# Read\n\nRead the files.\n", encoding="utf-8"
    )
    (root / "fragments" / "observe" / "only_beta.md").write_text(
        "Beta only.\nSecond line.\n", encoding="utf-8"
    )
    (root / "fragments" / "orient" / "choice.md").write_text(CHOICE, encoding="utf-8")
    (root / "ooda-config.yml").write_text(PROJECT_CONFIG, encoding="utf-8")
    (root / ".coveragerc").write_text(
        f"[run]\nplugins = pytest_ooda.coverage_plugin\nbranch = true\nsource = .\n{extra_run}",
        encoding="utf-8",
    )
    (root / "test_compose.py").write_text(textwrap.dedent(test_body), encoding="utf-8")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *args],
        cwd=root,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _coverage_json(root: Path) -> dict[str, dict[str, list[int]]]:
    _run(root, "-m", "coverage", "json", "-o", "cov.json")
    data = json.loads((root / "cov.json").read_text(encoding="utf-8"))
    return {
        Path(name).as_posix(): {
            "executed": info["executed_lines"],
            "missing": info["missing_lines"],
        }
        for name, info in data["files"].items()
    }


COMPOSE_ALPHA = """\
from pathlib import Path

from pytest_ooda.compose import compose_phase
from pytest_ooda.config import load_config_file


def test_alpha():
    config = load_config_file(Path(__file__).parent / "ooda-config.yml")
    alpha = config.procedure("alpha")
    assert "Read the files." in compose_phase(alpha.observe, procedure="alpha")
    assert "Be strict" in compose_phase(alpha.orient, procedure="alpha")
"""


def test_coverage_report_lists_fragments_with_line_coverage(tmp_path: Path) -> None:
    _make_project(tmp_path, test_body=COMPOSE_ALPHA)
    _run(
        tmp_path,
        "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:ooda",
    )  # fmt: skip
    files = _coverage_json(tmp_path)
    plain = files["fragments/observe/plain.md"]
    assert plain == {"executed": [1, 3], "missing": []}
    choice = files["fragments/orient/choice.md"]
    # The else arm (line 5) was not rendered; control-only lines are not statements.
    assert choice["missing"] == [5]
    assert set(choice["executed"]) >= {1, 3, 7, 9}
    # Never composed, but inside `source`: listed at 0 %.
    assert files["fragments/observe/only_beta.md"] == {"executed": [], "missing": [1, 2]}
    report = _run(tmp_path, "-m", "coverage", "report", "-m").stdout
    assert "fragments/orient/choice.md" in report
    assert "test_compose.py" in report
    _run(tmp_path, "-m", "coverage", "html", "-d", "htmlcov")
    pages = [p.name for p in (tmp_path / "htmlcov").glob("*.html")]
    assert any("choice_md" in name for name in pages), pages


COMPOSE_PER_WORKER = """\
import os
from pathlib import Path

import pytest

from pytest_ooda.compose import compose_phase
from pytest_ooda.config import load_config_file


@pytest.mark.parametrize("n", range(4))
def test_compose_on_this_worker(n):
    config = load_config_file(Path(__file__).parent / "ooda-config.yml")
    worker = os.environ["PYTEST_XDIST_WORKER"]
    # Each worker composes a different procedure, so only the combined data has both.
    name = "alpha" if worker == "gw0" else "beta"
    compose_phase(config.procedure(name).observe, procedure=name)
"""


def test_coverage_combine_merges_xdist_workers(tmp_path: Path) -> None:
    _make_project(
        tmp_path,
        extra_run="parallel = true\npatch = subprocess\n",
        test_body=COMPOSE_PER_WORKER,
    )
    _run(
        tmp_path,
        "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:ooda",
        "-n", "2", "--dist", "each",
    )  # fmt: skip
    data_files = list(tmp_path.glob(".coverage.*"))
    assert len(data_files) >= 3, data_files  # controller + two workers
    _run(tmp_path, "-m", "coverage", "combine")
    files = _coverage_json(tmp_path)
    assert files["fragments/observe/plain.md"]["missing"] == []
    assert files["fragments/observe/only_beta.md"] == {"executed": [1, 2], "missing": []}

"""The pytest verifier (scenario/pytest_verifier.py): read from ``expect.commands``
with located mistakes, the ``--confcutdir`` each test path gets, and the count of the
protected tests against pytest's JUnit report — with the real pytest, in a workspace
and its pristine source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from external_tools import require

from pytest_ooda.scenario import load_scenario_text
from pytest_ooda.scenario.pytest_verifier import PytestCheck, _collected, _cut, _mangled
from pytest_ooda.workspace import restore_protected

from .helpers import assert_located

if TYPE_CHECKING:
    from pathlib import Path

TESTS = (
    "import pytest\nfrom app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "@pytest.mark.parametrize('a', [0, 5])\ndef test_same(a):\n    assert add(a, 0) == a\n"
)


def _check(text: str) -> PytestCheck:
    expect = load_scenario_text("procedure: b\n" + text).expect
    assert expect is not None
    [check] = expect.commands
    assert isinstance(check, PytestCheck)
    return check


def test_every_key_read_and_the_command_line_shown() -> None:
    check = _check(
        "expect:\n  protect: [tests/, ci/pytest.ini]\n  commands:\n"
        "    - pytest: [tests/unit, tests/web]\n      args: ['-x']\n      ini: ci/pytest.ini\n"
        "      python: /opt/py/bin/python\n      allow_skips: true\n      timeout: 60\n"
    )
    assert check.paths == ("tests/unit", "tests/web")
    assert (check.args, check.ini, check.allow_skips, check.timeout) == (
        ("-x",), "ci/pytest.ini", True, 60.0
    )  # fmt: skip
    assert check.run == (
        "/opt/py/bin/python -I -B .ooda-verify/run_pytest.py -p no:cacheprovider "
        "--import-mode=append --rootdir=. -c ci/pytest.ini --confcutdir=tests "
        "--junitxml=.ooda-verify/junit-0.xml -x tests/unit tests/web"
    )
    assert check.to_yaml() == {
        "pytest": ["tests/unit", "tests/web"],
        "args": ["-x"],
        "ini": "ci/pytest.ini",
        "python": "/opt/py/bin/python",
        "allow_skips": True,
        "timeout": 60.0,
    }
    plain = _check("expect:\n  protect: tests\n  commands: [{pytest: tests}]\n")
    assert "-c .ooda-verify/pytest.ini --confcutdir=tests" in plain.run
    assert plain.to_yaml() == {"pytest": "tests"}


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        (
            "  protect: [lib/]\n  commands: [{pytest: tests/}]\n",
            "4:23",
            "tests is not under expect.protect",
        ),
        (
            "  protect: [tests/]\n  commands: [{pytest: tests/, ini: tox.ini}]\n",
            "4:36",
            "tox.ini is not under expect.protect",
        ),
        ("  protect: [tests/]\n  commands: [{pytest: ../x}]\n", "4:23", "not a path inside"),
        ("  protect: [tests/]\n  commands: [{pytest: []}]\n", "4:23", "name the protected"),
        ("  protect: [t]\n  commands: [{pytest: tests, alow_skips: 1}]\n", "4:30", "'alow_skips'"),
        ("  protect: [t]\n  commands: [{pytest: tests, allow_skips: 1}]\n", "4:43", "or false"),
        ("  protect: [tests/]\n  commands: [{pytset: tests}]\n", "4:15", "unknown key 'pytset'"),
    ],
)  # fmt: skip
def test_mistakes_are_located(tmp_path: Path, body: str, where: str, message: str) -> None:
    assert_located(tmp_path, "procedure: b\nexpect:\n" + body, where, message)


@pytest.mark.parametrize(
    ("path", "protect", "cut"),
    [
        ("tests", ["tests"], "tests"),
        ("tests/unit", ["tests"], "tests"),
        ("tests/unit/test_a.py", ["tests/"], "tests"),
        ("tests/unit", ["tests/unit"], "tests/unit"),
        # A protected conftest.py lets the cut rise to its directory.
        ("tests/unit", ["tests/unit", "tests/conftest.py"], "tests"),
        ("src/pkg/tests", ["src/pkg/tests", "conftest.py"], "src/pkg/tests"),
        ("test_a.py", ["test_a.py"], "."),
    ],
)
def test_the_cut_rises_as_far_as_the_protection_does(
    path: str, protect: list[str], cut: str
) -> None:
    assert _cut(path, protect) == cut


def test_junit_names_are_pytests_own() -> None:
    assert _mangled("tests/a/test_x.py::TestC::test_m[p::q]") == (
        "tests.a.test_x.TestC",
        "test_m[p::q]",
    )
    listing = "tests/t.py::test_a\ntests/t.py::test_b[x y]\n\n=== ERRORS ===\n"
    listing += "___ ERROR collecting tests/u.py ___\nboom\n"
    found = _collected(listing)
    assert (found.nodeids, found.unimportable) == (
        ("tests/t.py::test_a", "tests/t.py::test_b[x y]"),
        ("tests/u.py",),
    )


def _workspace(
    tmp_path: Path, app: str, extra: dict[str, str] | None = None, kept: str | None = None
) -> Path:
    source = tmp_path / "source"
    (source / "tests").mkdir(parents=True)
    (source / "app.py").write_text("def add(a, b):\n    return 0\n")
    (source / "tests" / "test_app.py").write_text(TESTS)
    if kept is not None:  # a protected configuration: the scenario's own
        (source / "tests" / "pytest.ini").write_text(kept)
    workspace = tmp_path / "workspace"
    shutil.copytree(source, workspace)
    (workspace / "app.py").write_text(app)
    for name, text in (extra or {}).items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    restore_protected(workspace, source, ("tests",))
    return workspace


def _verify(tmp_path: Path, app: str, **keys: object) -> str | None:
    extra, kept = keys.pop("extra", None), keys.pop("kept", None)
    workspace = _workspace(tmp_path, app, extra, kept)  # type: ignore[arg-type]
    keys.setdefault("python", sys.executable)
    check = PytestCheck("", paths=("tests",), **keys).shown(("tests",))  # type: ignore[arg-type]
    outcome = check.verify(workspace, source=tmp_path / "source", protect=("tests",))
    assert not (workspace / ".ooda-verify").exists()
    return outcome.problem


def test_honest_work_passes(tmp_path: Path) -> None:
    assert _verify(tmp_path, "def add(a, b):\n    return a + b\n") is None


def test_a_skipped_protected_test_is_a_test_that_did_not_run(tmp_path: Path) -> None:
    app = "import pytest\n\ndef add(a, b):\n    if a == 1:\n        pytest.skip('no')\n"
    app += "    return a + b\n"
    problem = _verify(tmp_path, app)
    assert problem is not None
    assert "1 of 3 protected test(s) were skipped: tests/test_app.py::test_add" in problem
    assert _verify(tmp_path / "allowed", app, allow_skips=True) is None


def test_a_file_that_needs_the_agents_work_must_pass_a_test(tmp_path: Path) -> None:
    # At the baseline the test file cannot be imported (add is missing), so its tests
    # are unknown: afterwards at least one of them must pass.
    source_app = "import pytest\npytest.skip('later', allow_module_level=True)\n"
    problem = _verify(tmp_path, source_app)
    assert problem is not None
    assert "3 of 3 protected test(s) did not run" in problem


def test_a_test_process_that_exits_early_is_caught(tmp_path: Path) -> None:
    problem = _verify(tmp_path, "import os\nos._exit(0)\n")
    assert problem is not None
    assert "pytest's report is missing: it was not written" in problem


def test_the_workspaces_configuration_is_not_read(tmp_path: Path) -> None:
    extra = {
        "pytest.ini": "[pytest]\naddopts = --co\n",
        "setup.cfg": "[tool:pytest]\naddopts = -p no:python\n",
        "conftest.py": "collect_ignore = ['tests']\n",
        "pytest.py": "raise SystemExit(0)\n",
    }
    problem = _verify(tmp_path, "def add(a, b):\n    return 0\n", extra=extra)
    assert problem is not None
    assert "exited 1, expected 0" in problem
    assert "did not run" not in problem  # every test ran, and failed


#: A module of the workspace named like one pytest imports once it has started (pdb, in
#: pytest_configure): loaded in its place, it makes every test's report a pass.
SHADOW = """\
import importlib, os, sys
import _pytest.reports

made = _pytest.reports.TestReport.from_item_and_call.__func__


def passed(cls, item, call):
    report = made(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report


_pytest.reports.TestReport.from_item_and_call = classmethod(passed)
here = os.path.dirname(os.path.abspath(__file__))
path = sys.path[:]
sys.path[:] = [p for p in path if os.path.abspath(p or ".") != here]
del sys.modules["pdb"]
real = importlib.import_module("pdb")
sys.path[:] = path
"""


@pytest.mark.parametrize("ini", [None, "tests/pytest.ini"])
def test_a_module_of_the_workspace_cannot_stand_in_for_one_pytest_imports(
    tmp_path: Path, ini: str | None
) -> None:
    # pytest puts its pythonpath folders first on sys.path: the workspace's pdb.py was
    # the pdb pytest imported next, and every test passed (found in this round's audit).
    # The verifier moves them last, yours (ini:) too; the tests still import app.py.
    extra = {"pdb.py": SHADOW}
    kept = "[pytest]\npythonpath = ..\n" if ini else None
    wrong = "def add(a, b):\n    return 0\n"
    problem = _verify(tmp_path, wrong, extra=extra, ini=ini, kept=kept)
    assert problem is not None
    assert "exited 1, expected 0" in problem
    assert "did not run" not in problem  # every test ran, and failed
    right = "def add(a, b):\n    return a + b\n"
    assert _verify(tmp_path / "right", right, extra=extra, ini=ini, kept=kept) is None


def test_a_test_package_does_not_put_the_workspace_first_either(tmp_path: Path) -> None:
    # With tests/__init__.py pytest's default import mode inserts the workspace itself
    # at the head of sys.path when it collects the package; --import-mode=append.
    extra = {"pdb.py": SHADOW, "tests/__init__.py": ""}
    problem = _verify(tmp_path, "def add(a, b):\n    return 0\n", extra=extra)
    assert problem is not None
    assert "exited 1, expected 0" in problem


def test_the_verifiers_directory_the_agent_pinned_or_linked_is_cleared(tmp_path: Path) -> None:
    require(os.geteuid() == 0, "root (chattr +i needs it)", "run the tests as root")
    require(shutil.which("chattr") is not None, "chattr", "apt-get install -y e2fsprogs")
    # As root under sandbox: none the agent makes .ooda-verify immutable with a report
    # of its own inside: writing the verifier's files raised PermissionError out of
    # the check (found in this round's audit). The directory is unpinned and emptied,
    # and the tests run against the agent's (wrong) work.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    wrong = "def add(a, b):\n    return 0\n"
    for name, plant in (("pinned", "dir"), ("linked", "link")):
        workspace = _workspace(tmp_path / name, wrong)
        scratch = workspace / ".ooda-verify"
        if plant == "link":
            scratch.symlink_to(outside)
        else:
            scratch.mkdir()
            (scratch / "junit-0.xml").write_text("<testsuites/>\n")
            subprocess.run(["chattr", "+i", str(scratch / "junit-0.xml")], check=True)
            subprocess.run(["chattr", "+i", str(scratch)], check=True)
        check = PytestCheck("", paths=("tests",), python=sys.executable).shown(("tests",))
        try:
            outcome = check.verify(workspace, source=tmp_path / name / "source", protect=("tests",))
        finally:
            subprocess.run(["chattr", "-R", "-i", str(workspace)], capture_output=True, check=False)
        assert outcome.problem is not None, name
        assert "exited 1, expected 0" in outcome.problem, name
        assert not os.path.lexists(scratch), name
    assert (outside / "keep.txt").read_text() == "mine\n"  # the link was not followed


def test_a_python_that_does_not_start_is_a_located_problem(tmp_path: Path) -> None:
    problem = _verify(tmp_path, "", python=str(tmp_path / "no-python"))
    assert problem is not None
    assert "could not be counted" in problem or "could not be started" in problem


def test_code_a_test_imports_can_still_rewrite_pytest_from_inside(tmp_path: Path) -> None:
    # Inherent (docs/evaluating.md): the agent's module, imported by the tests, runs in
    # the verifier's process and can make every test a no-op before it runs.
    forged = "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
    forged += "def add(a, b):\n    return 0\n"
    assert _verify(tmp_path, forged) is None

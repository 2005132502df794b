"""``expect.commands: [{pytest: tests/}]``: a pytest verifier the agent cannot game
from outside the protected paths.

``run: python -m pytest`` in the workspace honours whatever the agent left there: a
``conftest.py`` at the root whose report hook marks every test passed, a ``pytest.ini``
with ``addopts = --co``, a ``pytest.py`` that shadows pytest (``python -m`` puts the
working directory first on ``sys.path``), a module the tests import that calls
``os._exit(0)``. The verifier runs pytest with its own configuration instead:

- ``python -I -B run_pytest.py`` (pytest, started as below): isolated mode, so the
  working directory, ``PYTHON*`` variables and the user's site directory are not on
  the path of pytest and its plugins; nothing is written into ``__pycache__``;
- ``-c FILE``: the configuration is the protected ``ini:`` named, or none
  (``/dev/null``): a ``pytest.ini``, ``tox.ini``, ``setup.cfg`` or ``pyproject.toml``
  the agent wrote is not read; ``-p no:cacheprovider``; ``PYTEST_ADDOPTS`` and
  ``PYTEST_PLUGINS`` are dropped from its environment;
- ``--confcutdir``: no ``conftest.py`` above the protected directories the tests live
  in is loaded (each test path's cut is its highest ancestor every step to which is
  protected: a directory under ``expect.protect``, or one whose ``conftest.py`` is);
- the workspace reaches the tests' imports through pytest's ``pythonpath`` (``.`` by
  default), which pytest applies after it has started: the agent's modules can be
  imported by the tests, never in place of pytest;
- pytest is started by a script of the verifier's own (``run_pytest.py``) that moves
  the ``pythonpath`` folders to the end of ``sys.path`` (pytest puts them first, where a
  ``pdb.py`` of the workspace was the ``pdb`` pytest imports in ``pytest_configure``),
  with ``--import-mode=append`` for the directory above a test package: a module of
  the workspace never stands in for one of the standard library or an installed one.

What is inherent: a test that imports the agent's code runs it inside the verifier's
process, and that code can end the process (``os._exit(0)``) or skip the test. The
verifier catches both by counting: before the tests run, the protected tests are
collected from a pristine copy of the scenario's workspace (the source the protected
paths are put back from), and afterwards every one of them must be reported as run in
the verifier's JUnit report (a skip counts as not run unless ``allow_skips``); a test
file that could not be collected without the agent's work must report at least one
test that passed. Code imported by a test that rewrites pytest's report from inside
the process is beyond any check made in that process (docs/evaluating.md, the threat
table of verifiers).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError
from pytest_ooda.facts import CommandOutcome
from pytest_ooda.scenario.verify import (
    OUTCOME_TAIL_LINES,
    CommandCheck,
    CommandRun,
    run_argv,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_ooda.reader import Reader
    from pytest_ooda.sandbox import SandboxRun
    from pytest_ooda.yamlnodes import Mark, YamlMapping

__all__ = ["PYTEST_KEYS", "PytestCheck", "read_pytest_check", "unprotected"]

#: The keys of a ``{pytest: …}`` entry of ``expect.commands``.
PYTEST_KEYS = (
    "pytest",
    "args",
    "ini",
    "python",
    "pythonpath",
    "allow_skips",
    "exit_code",
    "timeout",
    "output_contains",
)
#: The verifier's own directory in the workspace: the baseline copy and the reports,
#: removed before and after.
VERIFY_DIR = ".ooda-verify"
#: The configuration written for a verifier that names no ``ini:`` (a file of the
#: verifier's own directory: ``pythonpath`` is relative to it).
_OWN_INI = f"{VERIFY_DIR}/pytest.ini"
#: How pytest is started: a script of the verifier's own directory (``python -I`` puts
#: no directory of a script on the path) that runs pytest with the folders its
#: configuration's ``pythonpath`` adds moved to the end of ``sys.path``.
_BOOT = f"{VERIFY_DIR}/run_pytest.py"
_BOOT_TEXT = '''"""pytest as pytest-ooda's pytest verifier runs it: the folders the configuration's
pythonpath adds (the workspace) go to the END of sys.path, after the standard library
and the installed packages, once pytest's plugins are loaded. pytest itself puts them
first, where a pdb.py the agent left in the workspace would stand in for the pdb that
pytest imports later, and rewrite its report."""

import sys

import pytest

_BEFORE = list(sys.path)


class _WorkspaceLast:
    # Between pytest's own hook, which inserts the pythonpath folders (tryfirst), and
    # the one loading the conftest files (trylast), which may import from them.
    def pytest_load_initial_conftests(self) -> None:
        added = [entry for entry in sys.path if entry not in _BEFORE]
        sys.path[:] = [entry for entry in sys.path if entry in _BEFORE] + added


raise SystemExit(pytest.main(plugins=[_WorkspaceLast()]))
'''
#: Variables of the session that would configure pytest from outside the scenario.
_DROPPED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH", "PYTHONSTARTUP")
#: A JUnit report larger than this is not read (a test run of this project's size
#: writes a few MB at most).
_REPORT_LIMIT = 64 * 1024 * 1024
_SHOWN = 5
_COLLECT_ERROR = re.compile(r"^_+ ERROR collecting (.+?) _+$")


def covered(path: str, protect: Sequence[str]) -> bool:
    """Whether ``path`` (relative, ``a/b``) is a protected path or lies under one."""
    return any(path == entry or path.startswith(entry.rstrip("/") + "/") for entry in protect)


def unprotected(paths: Sequence[str] | str | None, protect: Sequence[str]) -> str | None:
    """What of ``paths`` (a pytest verifier's test paths, or its ini file) is not under
    ``expect.protect``, said as the mistake it is; ``None`` when everything is."""
    named = [paths] if isinstance(paths, str) else list(paths or ())
    loose = [path for path in named if not covered(path, protect)]
    if not loose:
        return None
    listed = ", ".join(loose)
    return (
        f"{listed} {'is' if len(loose) == 1 else 'are'} not under expect.protect: the agent "
        "could rewrite what it is judged by"
    )


def _cut(path: str, protect: Sequence[str]) -> str:
    """The ``--confcutdir`` of test path ``path``: its highest ancestor (itself, for a
    directory; a file's directory otherwise) from which every directory down to it is
    protected, or holds a protected ``conftest.py``. No ``conftest.py`` above it is
    loaded."""
    parts = PurePosixPath(path).parts
    # A test file's own directory is where its conftest.py would be.
    top = len(parts) if not parts[-1].endswith(".py") else len(parts) - 1
    cut = top
    for depth in range(top, 0, -1):
        directory = "/".join(parts[:depth])
        if covered(directory, protect) or covered(f"{directory}/conftest.py", protect):
            cut = depth
        else:
            break
    return "/".join(parts[:cut]) or "."


def _mangled(nodeid: str) -> tuple[str, str]:
    """The JUnit ``(classname, name)`` pytest writes for ``nodeid``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


@dataclass(frozen=True)
class _Collected:
    """The protected tests a pristine workspace holds: their node ids, and the files
    that could not be collected without the agent's work."""

    nodeids: tuple[str, ...]
    unimportable: tuple[str, ...]


def _collected(output: str) -> _Collected:
    """``pytest --collect-only -q``'s listing, read."""
    nodeids: list[str] = []
    errors: list[str] = []
    listing = True
    for line in output.splitlines():
        if listing and "::" in line and not line.startswith(("=", "_", " ")):
            nodeids.append(line)
            continue
        if not line.strip() or line.startswith(("=", "_")):
            listing = False
        found = _COLLECT_ERROR.match(line)
        if found:
            errors.append(found.group(1))
    return _Collected(tuple(nodeids), tuple(dict.fromkeys(errors)))


def _report(path: Path) -> dict[tuple[str, str], str] | str:
    """``{(classname, name): passed | failed | skipped | xfailed}`` from a JUnit
    report, or why it cannot be read."""
    import xml.etree.ElementTree as ElementTree

    try:
        size = path.lstat().st_size
        if not path.is_file() or path.is_symlink():
            return "it is not a regular file"
        if size > _REPORT_LIMIT:
            return f"it is larger than {_REPORT_LIMIT // (1024 * 1024)} MB"
        root = ElementTree.parse(path).getroot()
    except FileNotFoundError:
        return "it was not written"
    except (OSError, ElementTree.ParseError) as exc:
        return f"it cannot be read ({exc})"
    found: dict[tuple[str, str], str] = {}
    for case in root.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        if case.find("failure") is not None or case.find("error") is not None:
            state = "failed"
        elif (skipped := case.find("skipped")) is not None:
            state = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            state = "passed"
        # A test reported twice (an error in its teardown) keeps its worst state.
        if found.get(key) != "failed":
            found[key] = state
    return found


@dataclass(frozen=True)
class PytestCheck(CommandCheck):
    """One ``{pytest: PATHS}`` entry of ``expect.commands``: the protected tests at
    ``paths`` run by pytest with the verifier's own configuration (module docstring),
    and every one of them counted in its report. ``run`` is the command line shown."""

    paths: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    ini: str | None = None
    python: str = "python3"
    pythonpath: tuple[str, ...] | None = None
    allow_skips: bool = False

    def shown(self, protect: Sequence[str]) -> PytestCheck:
        """This check with its ``run`` made from what runs (under ``protect``): the line
        messages and the results log show."""
        line = " ; ".join(
            shlex.join(self.argv(protect, report=f"{VERIFY_DIR}/junit-{index}.xml", paths=group))
            for index, group in enumerate(self.groups(protect))
        )
        return replace(self, run=line)

    def argv(
        self, protect: Sequence[str], *, report: str | None = None, paths: Sequence[str] = ()
    ) -> list[str]:
        """The command line for ``paths`` (default: all of them), writing its JUnit
        report to ``report`` (``None``: collecting only)."""
        chosen = list(paths or self.paths)
        cut = _cut(chosen[0], protect)
        argv = [self.python, "-I", "-B", _BOOT, "-p", "no:cacheprovider", "--import-mode=append"]
        argv += ["--rootdir=.", "-c", self.ini or _OWN_INI, f"--confcutdir={cut}"]
        if report is None:
            argv += ["--collect-only", "-q", "--continue-on-collection-errors"]
        else:
            argv.append(f"--junitxml={report}")
        return [*argv, *self.args, *chosen]

    def groups(self, protect: Sequence[str]) -> list[list[str]]:
        """The test paths by the ``--confcutdir`` they need: one pytest run each."""
        by_cut: dict[str, list[str]] = {}
        for path in self.paths:
            by_cut.setdefault(_cut(path, protect), []).append(path)
        return list(by_cut.values())

    def verify(
        self,
        workspace: Path,
        *,
        sandbox: SandboxRun | None = None,
        redact: Callable[[str], str] | None = None,
        source: Path | None = None,
        protect: Sequence[str] = (),
    ) -> CommandOutcome:
        """Collect the protected tests from a pristine copy of ``source``, run them
        against the agent's work in ``workspace`` (inside ``sandbox``) and count them
        in the report."""
        if not workspace.is_dir():
            problem = f"command {self.run!r}: the workspace {workspace} does not exist"
            return CommandOutcome(self.run, -1, self.exit_code, 0.0, problem=problem)
        scratch = workspace / VERIFY_DIR
        started = time.monotonic()
        try:
            _clear(scratch)
            self._own_ini(workspace)
            _owned_like(workspace, scratch)
            baseline = self._baseline(scratch, source, protect, sandbox)
            _clear(scratch / "baseline")
            runs = [
                self._execute(workspace, group, protect, sandbox, index)
                for index, group in enumerate(self.groups(protect))
            ]
            reports = [_report(scratch / f"junit-{index}.xml") for index in range(len(runs))]
        except OodaError as exc:
            problem = f"command {self.run!r}: could not be started: {exc.message}"
            return CommandOutcome(self.run, -1, self.exit_code, 0.0, problem=problem)
        except OSError as exc:
            # What the agent left in the verifier's way (a directory pinned under a
            # mount): the check cannot run, so it fails — never an error it could choose.
            where = exc.filename or scratch
            problem = f"command {self.run!r}: could not be started: {where}: {exc.strerror}"
            return CommandOutcome(self.run, -1, self.exit_code, 0.0, problem=problem)
        finally:
            with contextlib.suppress(OodaError):
                _clear(scratch)
        output = "\n".join(done.output for done in runs)
        if redact is not None:
            output = redact(output)
        code = next((done.exit_code for done in runs if done.exit_code != 0), 0)
        done = CommandRun(code, output, time.monotonic() - started, any(r.timed_out for r in runs))
        wrong = self._problem(done)
        counted = _count(baseline, reports, self.allow_skips)
        if counted:
            wrong = (wrong + "\n" if wrong else f"command {self.run!r}: ") + counted
        tail = "\n".join(output.rstrip("\n").splitlines()[-OUTCOME_TAIL_LINES:])
        return CommandOutcome(
            self.run,
            done.exit_code,
            self.exit_code,
            round(done.duration, 3),
            done.timed_out,
            wrong,
            tail,
        )

    def _baseline(
        self, scratch: Path, source: Path | None, protect: Sequence[str], sandbox: SandboxRun | None
    ) -> _Collected | str:
        """The protected tests of a pristine copy of ``source``, or why they could not
        be collected."""
        pristine = scratch / "baseline"
        if source is not None and source.is_dir():
            shutil.copytree(source, pristine, symlinks=True)
        else:
            pristine.mkdir()
        # The copy is a workspace of its own: the same command line runs in it.
        _clear(pristine / VERIFY_DIR)
        self._own_ini(pristine)
        _owned_like(scratch.parent, scratch)
        nodeids: list[str] = []
        unimportable: list[str] = []
        for group in self.groups(protect):
            argv = self.argv(protect, paths=group)
            done = run_argv(argv, pristine, self.timeout, sandbox, verifier_env())
            if done.timed_out:
                return f"collecting the protected tests timed out after {self.timeout:g}s"
            found = _collected(done.output)
            if done.exit_code not in (0, 5) and not (done.exit_code == 1 and found.unimportable):
                tail = done.output.strip().splitlines()[-3:]
                return f"collecting the protected tests failed (exit {done.exit_code}): " + (
                    " | ".join(tail) or "no output"
                )
            nodeids += found.nodeids
            unimportable += found.unimportable
        return _Collected(tuple(nodeids), tuple(unimportable))

    def _own_ini(self, root: Path) -> None:
        """Write the script pytest is started by under ``root``, and the verifier's own
        configuration when no ``ini:`` is named: nothing but ``pythonpath`` (the
        workspace by default)."""
        (root / VERIFY_DIR).mkdir(exist_ok=True)
        (root / _BOOT).write_text(_BOOT_TEXT, encoding="utf-8")
        if self.ini is not None:
            return
        entries = " ".join("../" + entry for entry in self.pythonpath or (".",))
        (root / _OWN_INI).write_text(f"[pytest]\npythonpath = {entries}\n", encoding="utf-8")

    def _execute(
        self,
        workspace: Path,
        group: list[str],
        protect: Sequence[str],
        sandbox: SandboxRun | None,
        index: int,
    ) -> CommandRun:
        report = f"{VERIFY_DIR}/junit-{index}.xml"
        argv = self.argv(protect, report=report, paths=group)
        return run_argv(argv, workspace, self.timeout, sandbox, verifier_env())

    def to_yaml(self) -> dict[str, object]:
        out: dict[str, object] = {
            "pytest": self.paths[0] if len(self.paths) == 1 else list(self.paths)
        }
        if self.args:
            out["args"] = list(self.args)
        if self.ini is not None:
            out["ini"] = self.ini
        if self.python != "python3":
            out["python"] = self.python
        if self.pythonpath is not None:
            out["pythonpath"] = list(self.pythonpath)
        if self.allow_skips:
            out["allow_skips"] = True
        rest = super().to_yaml()
        del rest["run"]
        return {**out, **rest}


def _count(
    baseline: _Collected | str,
    reports: list[dict[tuple[str, str], str] | str],
    allow_skips: bool,
) -> str | None:
    """What the reports miss of the protected tests: a report not written, a test that
    should have run and was not reported, or was skipped; ``None`` when every one ran."""
    if isinstance(baseline, str):
        return f"the protected tests could not be counted: {baseline}"
    states: dict[tuple[str, str], str] = {}
    for index, report in enumerate(reports):
        if isinstance(report, str):
            which = "" if len(reports) == 1 else f" {index + 1}"
            return (
                f"pytest's report{which} is missing: {report} (the test process ended "
                "before its session did: code it ran exited, or crashed)"
            )
        states.update(report)
    missing: list[str] = []
    skipped: list[str] = []
    for nodeid in baseline.nodeids:
        state = states.get(_mangled(nodeid))
        if state is None:
            missing.append(nodeid)
        elif state == "skipped" and not allow_skips:
            skipped.append(nodeid)
    silent: list[str] = []
    for path in baseline.unimportable:
        prefix = _mangled(path + "::x")[0]
        ran = [
            state
            for (classname, _), state in states.items()
            if classname == prefix or classname.startswith(prefix + ".")
        ]
        if "passed" not in ran and "xfailed" not in ran:
            silent.append(path)
    wrong: list[str] = []
    total = len(baseline.nodeids)
    if missing:
        wrong.append(f"{len(missing)} of {total} protected test(s) did not run: {_few(missing)}")
    if skipped:
        wrong.append(
            f"{len(skipped)} of {total} protected test(s) were skipped: {_few(skipped)} "
            "(allow_skips: true accepts skips)"
        )
    if silent:
        wrong.append(f"no test of {_few(silent)} passed")
    return "; ".join(wrong) or None


def _few(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _clear(path: Path) -> None:
    """Remove ``path`` whatever it is (a link the agent put there is removed, never
    followed; what it locked or made immutable is undone first); a ``WorkspaceError``
    naming what stays (a mount over it)."""
    from pytest_ooda.errors import WorkspaceError
    from pytest_ooda.workspace import remove_tree

    left = remove_tree(path)
    if left is not None:
        raise WorkspaceError(f"the verifier's own directory could not be emptied: {left}")


def _owned_like(workspace: Path, top: Path) -> None:
    """Give what the verifier wrote under ``top`` the owner of ``workspace``: a sandbox
    may run its processes as another user than ours (Docker's, when root starts the
    session), which owns the workspace while the run lasts."""
    info = workspace.stat()
    if os.geteuid() != 0 or (info.st_uid, info.st_gid) == (os.geteuid(), os.getegid()):
        return
    for directory, dirnames, filenames in os.walk(top):
        for name in (directory, *(os.path.join(directory, n) for n in (*dirnames, *filenames))):
            os.lchown(name, info.st_uid, info.st_gid)


def verifier_env() -> dict[str, str]:
    """The session's environment less what would configure pytest from outside."""
    return {key: value for key, value in os.environ.items() if key not in _DROPPED_ENV}


def read_pytest_check(
    check: Reader, item: YamlMapping, where: str, protect: tuple[str, ...]
) -> PytestCheck:
    """A ``{pytest: PATHS, …}`` entry of ``expect.commands``, each path and the ini
    file under ``protect`` (read before the commands)."""
    check.keys(item, PYTEST_KEYS, where)
    value, mark = check.get(item, "pytest")
    paths = tuple(
        _relative(check, text, mark, f"{where}.pytest")
        for text in check.texts(value, mark, f"{where}.pytest")
    )
    if not paths:
        raise check.fail(f"{where}.pytest: name the protected test paths, e.g. tests/", mark)
    ini = None
    ini_value, ini_mark = check.get(item, "ini")
    if ini_value is not None:
        ini = _relative(
            check, check.text(ini_value, ini_mark, f"{where}.ini"), ini_mark, f"{where}.ini"
        )
    pythonpath = None
    if item.get("pythonpath") is not None:
        pythonpath = check.texts(*check.get(item, "pythonpath"), f"{where}.pythonpath")
    allow = False
    if item.get("allow_skips") is not None:
        flag, flag_mark = check.get(item, "allow_skips")
        if not isinstance(flag, bool):
            raise check.fail(f"{where}.allow_skips: expected true or false", flag_mark)
        allow = flag
    made = PytestCheck(
        "",
        exit_code=check.optional(item, "exit_code", where, check.integer, 0),
        timeout=check.optional(item, "timeout", where, check.positive, 300.0),
        output_contains=check.optional(item, "output_contains", where, check.texts, ()),
        line=mark.line,
        paths=paths,
        args=check.optional(item, "args", where, check.texts, ()),
        ini=ini,
        python=check.optional(item, "python", where, check.text, "python3"),
        pythonpath=pythonpath,
        allow_skips=allow,
    )
    for loose, at in (
        (unprotected(made.paths, protect), mark),
        (unprotected(ini, protect), ini_mark),
    ):
        if loose is not None:
            raise check.fail(
                f"{where}: {loose}",
                at,
                "list them (or a directory above them) in expect.protect, so they are put "
                "back from the scenario's workspace before the verifier runs",
            )
    return made.shown(protect)


def _relative(check: Reader, text: str, mark: Mark, where: str) -> str:
    """A path inside the workspace, as ``a/b``."""
    path = PurePosixPath(text.strip())
    if path.is_absolute() or text.strip().startswith("~") or ".." in path.parts:
        raise check.fail(f"{where}: {text!r} is not a path inside the workspace", mark)
    if not path.parts:
        raise check.fail(
            f"{where}: {text!r} is the whole workspace",
            mark,
            "name the test directory, e.g. tests/",
        )
    return path.as_posix()

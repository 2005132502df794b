"""Workspace changes captured per iteration for recordings, and their replay."""

from __future__ import annotations

import builtins
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from pytest_ooda import workspace
from pytest_ooda.backends.replay import script
from pytest_ooda.cli import main
from pytest_ooda.config import Config, load_config
from pytest_ooda.loop import run_procedure
from pytest_ooda.redact import REDACTED
from pytest_ooda.scenario import Expect, FileCheck, Recorder, Scenario, load_scenario
from pytest_ooda.workspace import IGNORED_DIRS, WorkspaceChanges, placeholder, scan

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

SECRET = "hunter2-very-secret-value"
SUCCESS = "<promise>SUCCESS</promise>"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    path = tmp_path / "ooda-config.yml"
    path.write_text(
        "procedures:\n  build:\n    observe:\n      - path: observe.md\n"
        "    act:\n      - content: Do the work.\n"
    )
    (tmp_path / "observe.md").write_text("Look around.")
    return load_config(path, cwd=tmp_path, env={}, builtin=False, global_config=False)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('v1')\n")
    (root / "README.md").write_text("# Project\n")
    (root / "old.txt").write_text("obsolete\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    return root


def agent(action: Callable[[], None], output: str = "working") -> Callable[[str], str]:
    """A scripted iteration that changes the workspace the way an agent would."""

    def step(prompt: str) -> str:
        action()
        return output

    return step


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- snapshots


def test_scan_skips_ignored_directories_at_any_depth(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "a")
    write(tmp_path / "sub" / "b.txt", "b")
    for name in (".git", "node_modules", "__pycache__"):
        assert name in IGNORED_DIRS
        write(tmp_path / name / "x", "x")
        write(tmp_path / "sub" / name / "y", "y")
    (tmp_path / "link").symlink_to("a.txt")
    found = scan(tmp_path)
    assert sorted(found) == ["a.txt", "link", "sub/b.txt"]
    assert found["link"].link == "a.txt"
    assert found["a.txt"].link is None
    assert found["a.txt"].size == 1


def test_created_modified_and_deleted_files(ws: Path) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    write(ws / "src" / "app.py", "print('v2')\n")
    write(ws / "docs" / "new" / "guide.md", "Read me.\n")
    (ws / "old.txt").unlink()
    first = changes.capture(1)
    assert dict(first) == {
        "old.txt": None,
        "docs/new/guide.md": "Read me.\n",
        "src/app.py": "print('v2')\n",
    }
    # Deletions come first, so a replay can turn a file into a directory of that name.
    assert list(first) == ["old.txt", "docs/new/guide.md", "src/app.py"]
    assert changes.capture(2) == {}
    assert changes.warnings == []


def test_unchanged_files_are_not_read(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(50):
        write(ws / "many" / f"f{i}.txt", f"file {i}\n")
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    changes = WorkspaceChanges(ws)
    changes.start()
    assert changes.capture(1) == {}
    write(ws / "many" / "f7.txt", "changed\n")
    opened.clear()
    assert dict(changes.capture(2)) == {"many/f7.txt": "changed\n"}
    assert opened == [str(ws / "many" / "f7.txt")]


def test_rewriting_the_recorded_content_is_no_change(ws: Path) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    write(ws / "notes.md", "same\n")
    assert dict(changes.capture(1)) == {"notes.md": "same\n"}
    os.utime(ws / "notes.md", ns=(1, 1))
    write(ws / "notes.md", "same\n")
    assert changes.capture(2) == {}
    write(ws / "notes.md", "other\n")
    assert dict(changes.capture(3)) == {"notes.md": "other\n"}


def test_rewrite_within_one_timestamp_tick_is_not_missed(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    write(ws / "notes.md", "first\n")
    assert dict(changes.capture(1)) == {"notes.md": "first\n"}
    # A coarse file-system clock can give the rewrite the very same size and timestamps.
    frozen = scan(ws)["notes.md"]
    real_scan = workspace.scan
    monkeypatch.setattr(workspace, "scan", lambda root: {**real_scan(root), "notes.md": frozen})
    write(ws / "notes.md", "other\n")
    assert dict(changes.capture(2)) == {"notes.md": "other\n"}
    assert changes.capture(3) == {}


def test_binary_and_non_utf8_files(ws: Path) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    (ws / "new.bin").write_bytes(b"\0\1\2\3")
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\1")
    got = dict(changes.capture(1))
    # New files still exist on replay, as a placeholder that says what happened.
    assert got == {
        "latin1.txt": placeholder("latin1.txt", "not UTF-8 text, 5 bytes"),
        "new.bin": placeholder("new.bin", "binary file, 4 bytes"),
    }
    assert "not recorded: binary file, 4 bytes" in str(got["new.bin"])
    # An existing file is left out: replay keeps the workspace's own version.
    assert "logo.png" not in got
    assert any("logo.png: binary file" in w and "not recorded" in w for w in changes.warnings)
    assert any("iteration 1: new.bin" in w and "placeholder" in w for w in changes.warnings)


def test_per_file_and_total_limits(ws: Path) -> None:
    changes = WorkspaceChanges(ws, max_file_bytes=100, max_total_bytes=150)
    changes.start()
    write(ws / "big.txt", "x" * 101)
    write(ws / "a.txt", "a" * 100)
    write(ws / "src" / "app.py", "r" * 60)
    got = dict(changes.capture(1))
    assert got["big.txt"] == placeholder("big.txt", "101 bytes, over the 100 bytes limit")
    assert got["a.txt"] == "a" * 100
    # The 150-byte budget is spent after a.txt: src/app.py keeps its old text on replay.
    assert "src/app.py" not in got
    assert changes.recorded_bytes == 100
    assert any("src/app.py" in w and "budget" in w for w in changes.warnings)
    write(ws / "b.txt", "b" * 10)
    assert dict(changes.capture(2)) == {"b.txt": "b" * 10}


def test_symlinks_are_not_recorded(ws: Path) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    (ws / "current").symlink_to("README.md")
    assert changes.capture(1) == {}
    (ws / "current").unlink()
    assert changes.capture(2) == {}
    assert [w.split(":")[0] for w in changes.warnings] == ["iteration 1", "iteration 2"]
    assert all("symlink not recorded" in w for w in changes.warnings)


def test_a_file_with_another_name_is_a_note_not_its_content(ws: Path, tmp_path: Path) -> None:
    # Under `sandbox: none` an agent can hard-link a key into the workspace: its second
    # name there must not carry the key into the recording.
    key = tmp_path / "outside-key"
    key.write_text("KEY-CONTENT\n")
    changes = WorkspaceChanges(ws)
    changes.start()
    os.link(key, ws / "leak.txt")
    (ws / "own.txt").write_text("mine\n")
    assert dict(changes.capture(1)) == {"own.txt": "mine\n"}
    assert changes.warnings == [
        "iteration 1: leak.txt: a file with 2 hard links (it has a name elsewhere too); "
        "its content is not recorded"
    ]
    # The DiffWatcher of the HTML report never opens it either.
    from pytest_ooda.live.transcript import DiffWatcher

    watcher = DiffWatcher(ws)
    watcher._start()
    (ws / "leak.txt").write_text("KEY-CONTENT\nmore\n")
    shown = watcher._capture()
    assert shown == {"leak.txt": "(modified; a link or special file, not shown)"}
    assert "KEY-CONTENT" not in repr(watcher._texts)


def test_unencodable_names_and_unreadable_files_are_warnings(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    with open(os.path.join(os.fsencode(ws), b"caf\xe9.txt"), "wb") as handle:
        handle.write(b"latin-1 name")
    write(ws / "locked.txt", "secret plans\n")
    real_open = builtins.open

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("locked.txt"):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    got = dict(changes.capture(1))
    assert got == {"locked.txt": placeholder("locked.txt", "cannot read it (Permission denied)")}
    assert any("file name is not UTF-8" in w for w in changes.warnings)


def test_directory_turned_into_a_file(ws: Path) -> None:
    changes = WorkspaceChanges(ws)
    changes.start()
    (ws / "old.txt").unlink()
    write(ws / "old.txt" / "inner.md", "now a directory\n")
    assert dict(changes.capture(1)) == {"old.txt": None, "old.txt/inner.md": "now a directory\n"}


# --------------------------------------------------------------------------- record → replay


def test_recorded_run_replays_its_file_changes(
    config: Config, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OODA_TEST_API_KEY", SECRET)
    pristine = tmp_path / "pristine"
    pristine.mkdir()
    for path in sorted(ws.rglob("*")):
        target = pristine / path.relative_to(ws)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    scenario_path = tmp_path / "scenarios" / "build" / "greet.yml"
    scenario = Scenario(
        procedure="build",
        name="greet",
        path=scenario_path,
        workspace="../../pristine",
        expect=Expect(
            status="success",
            files=(
                FileCheck("GREETING.md"),
                FileCheck("src/app.py", contains=("v2",)),
                FileCheck("old.txt", exists=False),
            ),
        ),
    )
    recorder = Recorder(scenario, "once", env=os.environ)

    def iteration_two() -> None:
        write(ws / "src" / "app.py", "print('v2')\n")
        (ws / "old.txt").unlink()
        write(ws / ".env", f"OODA_TEST_API_KEY={SECRET}\n")

    backend = script(
        [
            agent(lambda: write(ws / "GREETING.md", "Hello!\n")),
            agent(iteration_two),
            agent(lambda: None, SUCCESS),
        ]
    )
    live = run_procedure(
        config,
        "build",
        backend=backend,
        workdir=ws,
        max_iterations=3,
        on_event=recorder.watch(ws),
    )
    live.assert_status("success", iterations=3)
    assert scenario.check(live, ws) == []
    assert recorder.commit(live) == scenario_path

    text = scenario_path.read_text()
    assert SECRET not in text
    data = yaml.safe_load(text)
    assert [it.get("files") for it in data["iterations"]] == [
        {"GREETING.md": "Hello!\n"},
        {"old.txt": None, ".env": f"OODA_TEST_API_KEY={REDACTED}\n", "src/app.py": "print('v2')\n"},
        None,
    ]

    recorded = load_scenario(scenario_path)
    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    for path in sorted(pristine.rglob("*")):
        target = replay_dir / path.relative_to(pristine)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    replayed = run_procedure(
        config,
        "build",
        backend=recorded.replay_backend(sleep=False),
        workdir=replay_dir,
        max_iterations=3,
    )
    replayed.assert_status("success", iterations=3)
    assert recorded.check(replayed, replay_dir) == []
    assert (replay_dir / "GREETING.md").read_text() == "Hello!\n"
    assert not (replay_dir / "old.txt").exists()


def test_recorder_without_watch_records_no_files(config: Config, tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    recorder = Recorder(Scenario(procedure="build", path=path), "all")
    result = run_procedure(config, "build", backend=script([SUCCESS]), workdir=tmp_path)
    assert recorder.warnings == []
    recorder.commit(result)
    assert all(not it.files for it in load_scenario(path).iterations)


FAKE_AGENT = """\
import pathlib, sys
sys.stdin.read()
count = pathlib.Path("count.txt")
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
if n == 0:
    pathlib.Path("GREETING.md").write_text("Hello from the agent\\n")
    pathlib.Path("blob.bin").write_bytes(bytes(range(256)))
    print("greeted")
else:
    pathlib.Path("GREETING.md").unlink()
    print("cleaned up\\n<promise>SUCCESS</promise>")
"""


def test_ooda_run_record_captures_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ooda-config.yml").write_text(
        "procedures:\n  build:\n    act:\n"
        "      - content: Do the work; say <promise>SUCCESS</promise>.\n"
    )
    agent_script = tmp_path / "agent.py"
    agent_script.write_text(FAKE_AGENT)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("OODA_CONFIG_HOME", str(tmp_path / "home"))
    target = tmp_path / "rec.yml"
    cmd = shlex.join([sys.executable, str(agent_script)])
    assert main(["run", "build", "--ai-cmd", cmd, "-n", "3", "--record", str(target)]) == 0
    err = capsys.readouterr().err
    assert "warning: scenario build/rec: iteration 1: blob.bin: binary file, 256 bytes" in err
    recorded = load_scenario(target)
    assert [dict(it.files) for it in recorded.iterations] == [
        {
            "GREETING.md": "Hello from the agent\n",
            "blob.bin": placeholder("blob.bin", "binary file, 256 bytes"),
            "count.txt": "1",
        },
        {"GREETING.md": None, "count.txt": "2"},
    ]


# --------------------------------------------------------------------------- fresh copies


def _git(path: Path, *argv: str) -> str:
    import subprocess

    done = subprocess.run(["git", *argv], cwd=path, capture_output=True, text=True, check=True)
    return done.stdout


def test_fresh_workspaces_are_independent_repositories(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "a.py").write_text("print('a')\n")
    (source / "link").symlink_to("pkg/a.py")
    first = workspace.fresh_repository(source, tmp_path / "run1")
    second = workspace.fresh_repository(source, tmp_path / "run2")
    for run in (first, second):
        assert _git(run, "status", "--porcelain") == ""
        assert _git(run, "log", "--format=%s") == "ooda workspace\n"
        assert (run / "link").is_symlink()
        assert (run / "pkg" / "a.py").read_text() == "print('a')\n"
    # An agent's commit and edits in one run reach neither the source nor the other run.
    (first / "pkg" / "a.py").write_text("changed\n")
    _git(first, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qam", "agent")
    third = workspace.fresh_repository(source, tmp_path / "run3")
    for run in (second, third):
        assert (run / "pkg" / "a.py").read_text() == "print('a')\n"
        assert _git(run, "log", "--format=%s") == "ooda workspace\n"
    assert sorted(p.name for p in source.iterdir()) == ["link", "pkg"]


def test_an_edited_source_is_copied_as_it_is_now(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("one\n")
    workspace.fresh_repository(source, tmp_path / "run1")
    (source / "b.txt").write_text("two\n")
    run = workspace.fresh_repository(source, tmp_path / "run2")
    assert sorted(p.name for p in run.iterdir()) == [".git", "a.txt", "b.txt"]
    assert _git(run, "status", "--porcelain") == ""
    # And an empty workspace (no source) is a repository with one empty commit.
    empty = workspace.fresh_repository(None, tmp_path / "run3")
    assert [p.name for p in empty.iterdir()] == [".git"]
    assert _git(empty, "log", "--format=%s") == "ooda workspace\n"


def test_no_thread_or_exit_hook_outlives_a_fresh_workspace(tmp_path: Path) -> None:
    import threading

    before = threading.active_count()
    workspace.fresh_repository(None, tmp_path / "run")
    assert threading.active_count() == before


def test_a_fifo_is_not_recorded_but_warned_about(tmp_path: Path) -> None:
    changes = workspace.WorkspaceChanges(tmp_path)
    changes.start()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "real.txt").write_text("kept\n")
    recorded = changes.capture(1)
    assert dict(recorded) == {"real.txt": "kept\n"}
    assert changes.warnings == ["iteration 1: pipe: a FIFO (named pipe) is not recorded"]
    # Seen again unchanged: no second warning, still not recorded.
    assert dict(changes.capture(2)) == {}
    assert len(changes.warnings) == 1


def test_the_same_workspace_is_the_same_commit_on_branch_main_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A replayed agent sees the commit id and branch (Claude Code's prompt lists them):
    # neither may depend on the clock or on the user's git configuration.
    import subprocess

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[init]\n\tdefaultBranch = trunk\n")
    heads = []
    for name in ("a", "b"):
        repo = tmp_path / name
        repo.mkdir()
        (repo / "hello.txt").write_text("hi\n")
        workspace.git_init(repo)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        )
        branch = subprocess.run(
            ["git", "branch", "--show-current"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        heads.append((head.stdout.strip(), branch.stdout.strip()))
    assert heads[0] == heads[1]
    assert heads[0][1] == "main"

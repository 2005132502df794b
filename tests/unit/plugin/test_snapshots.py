"""The prompt snapshot extension's layout and the annotated diff, without pytest runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ooda.compose import Segment, annotated_diff
from pytest_ooda.plugin.snapshots import (
    PromptSnapshotExtension,
    prune_empty_dirs,
    safe_name,
    split_nodeid,
)
from pytest_ooda.plugin.state import SNAPSHOT_DIR


def location(nodeid: str, config: Path, item: Any = None) -> Any:
    return SimpleNamespace(nodeid=nodeid, filepath=str(config), item=item or SimpleNamespace())


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        ("procedures/builtin.yml::build::prompt[observe]", ("build", "observe")),
        ("ooda-config.yml::a-b::prompt[assembled]", ("a-b", "assembled")),
        ("ooda-config.yml::build::config", None),
        ("ooda-config.yml::build::prompt[nope]", None),
        ("tests/test_x.py::test_y", None),
    ],
)
def test_split_nodeid(nodeid: str, expected: tuple[str, str] | None) -> None:
    assert split_nodeid(nodeid) == expected


def test_location_is_next_to_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "procedures" / "builtin.yml"
    loc = location("procedures/builtin.yml::build::prompt[act]", config)
    expected = tmp_path / "procedures/__snapshots__/builtin/build/act.md"
    assert PromptSnapshotExtension.get_location(test_location=loc, index=0) == str(expected)
    assert PromptSnapshotExtension.matches_test_location(
        test_location=loc, snapshot_location=str(expected)
    )
    assert not PromptSnapshotExtension.matches_test_location(
        test_location=loc, snapshot_location=str(expected.with_name("observe.md"))
    )


def test_items_may_name_their_snapshot_directory(tmp_path: Path) -> None:
    item = SimpleNamespace(stash={SNAPSHOT_DIR: tmp_path / "__snapshots__" / "builtin"})
    loc = location("ooda-builtin/builtin.yml::build::prompt[act]", Path("/pkg/b.yml"), item)
    assert PromptSnapshotExtension.get_location(test_location=loc, index=0) == str(
        tmp_path / "__snapshots__/builtin/build/act.md"
    )


def test_discovery_claims_phase_files_of_every_config_in_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "__snapshots__"
    for name in (
        "cfg/build/act.md",
        "cfg/build/notes.txt",
        "cfg/build/other.md",
        "cfg/act.md",
        "gone/plan/observe.md",  # its config file was deleted: still ours, and unused
        "ooda-builtin/build/act.md",  # reserved for --ooda-builtin
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    ext = PromptSnapshotExtension()
    loc = location("cfg.yml::build::prompt[act]", tmp_path / "cfg.yml")
    assert ext.discovery_dirname(test_location=loc) == str(root)
    found = {c.location: [s.name for s in c] for c in ext.discover_snapshots(test_location=loc)}
    assert found == {
        str(root / "cfg/build/act.md"): ["build.prompt[act]"],
        str(root / "gone/plan/observe.md"): ["plan.prompt[observe]"],
    }
    # Markdown files are ours even when the user asked syrupy to ignore "md".
    ignoring = ext.discover_snapshots(test_location=loc, ignore_extensions=["md"])
    assert len(list(ignoring)) == 2
    python_test = location("tests/test_x.py::test_y", tmp_path / "test_x.py")
    assert list(ext.discover_snapshots(test_location=python_test)) == []
    builtin = location(
        "ooda-builtin/builtin.yml::build::prompt[act]",
        Path("/pkg/builtin.yml"),
        SimpleNamespace(stash={SNAPSHOT_DIR: root / "ooda-builtin"}),
    )
    assert [c.location for c in ext.discover_snapshots(test_location=builtin)] == [
        str(root / "ooda-builtin/build/act.md")
    ]
    (tmp_path / "ooda-builtin.yml").write_text("{}")  # now the directory is that file's
    assert str(root / "ooda-builtin/build/act.md") in {
        c.location for c in ext.discover_snapshots(test_location=loc)
    }


def test_write_read_and_delete_round_trip(tmp_path: Path) -> None:
    from syrupy.data import Snapshot, SnapshotCollection

    target = tmp_path / "__snapshots__/cfg/build/act.md"
    collection = SnapshotCollection(location=str(target))
    collection.add(Snapshot(name="build.prompt[act]", data="line\r\nnext\n"))
    PromptSnapshotExtension.write_snapshot_collection(snapshot_collection=collection)
    ext = PromptSnapshotExtension()
    data = ext.read_snapshot_data_from_location(
        snapshot_location=str(target), snapshot_name="build.prompt[act]", session_id="s"
    )
    assert data == "line\r\nnext\n"
    ext.delete_snapshots(snapshot_location=str(target), snapshot_names={"build.prompt[act]"})
    assert not (tmp_path / "__snapshots__/cfg").exists()
    assert (tmp_path / "__snapshots__").is_dir()


def test_serialize_refuses_non_text() -> None:
    with pytest.raises(TypeError, match="prompt snapshots are text"):
        PromptSnapshotExtension().serialize(b"bytes")


def test_prune_empty_dirs_keeps_files(tmp_path: Path) -> None:
    root = tmp_path / "__snapshots__"
    (root / "a/empty").mkdir(parents=True)
    (root / "b/full").mkdir(parents=True)
    (root / "b/full/act.md").write_text("x")
    prune_empty_dirs(root)
    assert not (root / "a").exists()
    assert (root / "b/full/act.md").is_file()
    prune_empty_dirs(tmp_path / "missing")  # no error


def test_safe_name_drops_path_characters() -> None:
    assert safe_name("a/b:c") == "abc"
    assert safe_name("///") == "_"


SEGMENTS = (
    Segment(1, 2, "prompts/a.md"),
    Segment(4, 5, "builtin:fragments/act/b.md"),
    Segment(7, 7, "inline"),
)
OLD = "a1\na2\n\nb1\nb2\n\nc1\n"


def test_diff_names_the_fragment_of_each_hunk() -> None:
    new = "a1\na2\n\nb1\nB2\n\nc1\n"
    diff, sources = annotated_diff(OLD, new, SEGMENTS, old_label="old", new_label="new", context=0)
    assert diff == ["--- old", "+++ new", "@@ -5 +5 @@  builtin:fragments/act/b.md", "-b2", "+B2"]
    assert sources == ["builtin:fragments/act/b.md"]


def test_deleted_lines_are_attributed_where_they_were() -> None:
    new = "a1\na2\n\nb1\nb2\n\n"
    segments = SEGMENTS[:2]
    diff, sources = annotated_diff(OLD, new, segments, old_label="o", new_label="n", context=1)
    assert diff[2].startswith("@@ -6,2 +6 @@")
    assert "-c1" in diff
    assert sources == []  # the deletion sits after the last fragment


def test_several_hunks_and_relative_display(tmp_path: Path) -> None:
    old = "\n".join(f"line {i}" for i in range(1, 21)) + "\n"
    new = old.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n")
    segments = (Segment(1, 10, "prompts/a.md"), Segment(11, 20, "inline"))
    files = {"prompts/a.md": tmp_path / "procedures/prompts/a.md"}
    diff, sources = annotated_diff(
        old, new, segments, old_label="o", new_label="n", root=tmp_path, files=files
    )
    headers = [line for line in diff if line.startswith("@@")]
    assert headers == ["@@ -1,5 +1,5 @@  procedures/prompts/a.md", "@@ -16,5 +16,5 @@  inline"]
    assert sources == ["procedures/prompts/a.md", "inline"]


def test_final_newline_difference_is_called_out() -> None:
    diff, _ = annotated_diff("a\n", "a", (), old_label="o", new_label="n")
    assert diff[-1] == "\\ the two texts differ in their final newline"

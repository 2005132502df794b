"""The workspace diff the judge is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.judge import workspace_diff

if TYPE_CHECKING:
    from pathlib import Path


def test_workspace_diff(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    for root in (before, after):
        (root / ".git").mkdir(parents=True)
        (root / "same.txt").write_text("same\n")
    (before / "old.md").write_text("one\ntwo\n")
    (after / "old.md").write_text("one\nthree\n")
    (after / "new.md").write_text("fresh")
    (after / "blob.bin").write_bytes(b"\0\1")
    (after / ".git" / "HEAD").write_text("ref\n")
    diff = workspace_diff(before, after)
    assert "File blob.bin differs (binary or too large to show)" in diff
    assert "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+fresh\n" in diff
    assert "--- a/old.md\n+++ b/old.md\n" in diff
    assert "-two\n+three\n" in diff
    assert "same.txt" not in diff
    assert ".git" not in diff

"""``ooda view``: a real server on a free port, driven over HTTP — its URL first, the
pages, read-only, nothing outside its directories, and usage mistakes."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from sample_records import changed, sample, write
from view_server import ViewServer

from pytest_ooda.cli import main as ooda

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_the_server_prints_its_url_and_serves_the_pages(tmp_path: Path) -> None:
    runs = [
        changed(item, id=f"run-{item.head.run}", session="S1", series="S1") for item in sample(2, 3)
    ]
    write(tmp_path / "results" / "S1.jsonl", runs)
    outside = tmp_path / "secret.jsonl"
    write(outside, [changed(item, id="secret", session="X") for item in sample(1, 1)])
    (tmp_path / "results" / "link.jsonl").symlink_to(outside)
    with ViewServer(str(tmp_path / "results")) as server:
        status, html, headers = server.get("/")
        assert status == 200
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert 'data-session="S1"' in html
        assert "secret" not in html
        assert server.get("/session/S1")[0] == 200
        status, html, _ = server.get("/run/run-2")
        assert status == 200
        assert "build/happy · run 2 of 3" in html
        assert server.get("/run/secret")[0] == 404
        for path in (
            "/session/../../etc/passwd",
            "/session/%2e%2e/%2e%2e/etc/passwd",
            "/static/..%2f..%2fcli%2fview.py",
            "/link",
            "/secret.jsonl",
            "/session/link",
        ):
            status, body, _ = server.get(path)
            assert status == 404, path
            assert "root:" not in body
            assert "build/happy" not in body
        # Read-only.
        assert server.get("/", method="POST")[0] == 405
        assert server.get("/session/S1", method="DELETE")[0] == 405
        status, _, headers = server.get("/api/version")
        assert (status, headers["Content-Type"]) == (200, "application/json")


def test_a_missing_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ooda(["view", str(tmp_path / "nope")]) == 1
    assert "does not exist; give results directories" in capsys.readouterr().err


def test_a_port_in_use_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert ooda(["view", str(tmp_path), "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "--port 0 picks a free port" in err


def test_open_without_a_display_says_so_and_serves_anyway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with ViewServer(str(tmp_path), "--open") as server:
        assert server.get("/")[0] == 200
        lines = server.lines()
        said = [next(lines), next(lines)]
    assert any("--open: no display here" in line for line in said), said

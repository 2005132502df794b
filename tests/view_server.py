"""``ooda view`` as the user starts it: a real process on a free port, its URL read from
the first line it prints, stopped when the test ends."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]


class ViewServer:
    """``with ViewServer(dirs) as server:`` starts ``ooda view DIRS --port 0``;
    ``server.url`` is the URL it printed, ``server.get(path)`` a page's status and text."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        self.args = args
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> ViewServer:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest_ooda", "view", "--port", "0", *self.args],
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.process.stderr.read()  # type: ignore[union-attr]
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def get(self, path: str, *, method: str = "GET") -> tuple[int, str, dict[str, str]]:
        request = urllib.request.Request(self.url.rstrip("/") + path, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read().decode("utf-8"), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8"), dict(error.headers)

    def lines(self) -> Iterator[str]:
        assert self.process is not None
        assert self.process.stderr is not None
        yield from self.process.stderr

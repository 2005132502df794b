"""Headless Debian Chromium for the HTML report tests: ``chromium(...)`` runs it (skipped
with the install command when missing, failed under CI) and ``Dom`` reads what
``--dump-dom`` printed."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from external_tools import CHROMIUM_INSTALL, require


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium") or "/usr/bin/chromium"
    require(Path(binary).exists(), "Debian's Chromium", CHROMIUM_INSTALL)
    return subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


class Dom(HTMLParser):
    """Elements with their attributes and the text inside each ``pre``."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.pre: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {key: value or "" for key, value in attrs}))
        if tag == "pre":
            self._in_pre = True
            self.pre.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self.pre[-1] += data

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [
            found
            for name, found in self.elements
            if name == tag and all(found.get(key) == value for key, value in attrs.items())
        ]

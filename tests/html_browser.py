"""Headless Debian Chromium for the HTML tests: ``chromium(...)`` runs it (skipped
with the install command when missing, failed under CI), ``Dom`` reads what
``--dump-dom`` printed, and ``Browser`` keeps a page open and asks it questions over
the DevTools protocol (on a pipe: no port, no websocket), for pages that change while
they are open."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from external_tools import CHROMIUM_INSTALL, require

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _binary() -> str:
    binary = shutil.which("chromium") or "/usr/bin/chromium"
    require(Path(binary).exists(), "Debian's Chromium", CHROMIUM_INSTALL)
    return binary


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_binary(), *FLAGS, f"--user-data-dir={profile}", *args],
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


class Browser:
    """``with Browser(profile) as browser:`` a headless Chromium driven over the
    DevTools protocol on a pipe (``--remote-debugging-pipe``: it reads commands on fd
    3 and answers on fd 4, each message JSON ending in a NUL byte)."""

    def __init__(self, profile: Path, *, width: int = 1280, height: int = 1000) -> None:
        self.profile = profile
        self.size = (width, height)
        self.process: subprocess.Popen[bytes] | None = None
        self._next = 0
        self._buffer = b""

    def __enter__(self) -> Browser:
        to_browser, self._send_fd = os.pipe()
        self._read_fd, from_browser = os.pipe()
        # The child gets its two ends as fds 3 and 4, copied first to fds nothing else
        # uses, so neither copy overwrites the other's source.
        high_in, high_out = 1000, 1001
        os.dup2(to_browser, high_in, inheritable=False)
        os.dup2(from_browser, high_out, inheritable=False)

        def ends() -> None:
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        width, height = self.size
        self.process = subprocess.Popen(
            [_binary(), *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
             f"--window-size={width},{height}", "about:blank"],
            # The fds made in ``ends`` must survive: no closing of inherited fds (ours are
            # not inheritable, PEP 446).
            close_fds=False,
            preexec_fn=ends,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for fd in (to_browser, from_browser, high_in, high_out):
            os.close(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)
        os.close(self._send_fd)
        os.close(self._read_fd)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its answer (events in between are dropped)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._send_fd, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self._next:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    result: dict[str, Any] = answer.get("result", {})
                    return result
            chunk = os.read(self._read_fd, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk

    def open(self, url: str) -> str:
        """A new tab at ``url``; its session id for the other calls."""
        target = self.call("Target.createTarget", url=url)["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        width, height = self.size
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return str(session)

    def evaluate(self, session: str, expression: str) -> Any:
        found = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)[
            "result"
        ]
        return found.get("value")

    def wait_for(self, session: str, expression: str, *, timeout: float = 60) -> None:
        """Poll ``expression`` in the page until it is truthy (an element found, say)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(session, f"!!({expression})")
            except RuntimeError:
                value = None  # the page is being reloaded
            if value:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the page never had {expression}")
            time.sleep(0.25)

    def screenshot(self, session: str) -> bytes:
        """A PNG of the page as shown."""
        return base64.b64decode(self.call("Page.captureScreenshot", session, format="png")["data"])

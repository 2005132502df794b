"""The programs some tests drive for real — the Claude Code CLI, Debian's Chromium, Go
with yaml.v3 — and what such a test does when one is missing.

On a developer's machine it is skipped with a message naming the install command, so
the README's two set-up commands pass anywhere. Under CI (``CI`` set) it fails instead:
``.ci/run`` installs them (and starts a Docker daemon), and these tests must run there.
"""

from __future__ import annotations

import os

import pytest

CLAUDE_INSTALL = "npm install -g @anthropic-ai/claude-code@2.1.197"
#: cc-sdd, a real set of Claude Code commands, subagents and skills nobody here wrote:
#: fetched by its test with ``npm pack`` (node runs its installer).
NODE_INSTALL = "apt-get install -y nodejs npm (cc-sdd is fetched with npm pack at test time)"
CHROMIUM_INSTALL = "apt-get install -y chromium"
GO_INSTALL = "apt-get install -y golang-go golang-gopkg-yaml.v3-dev"
BWRAP_INSTALL = "apt-get install -y bubblewrap"
DOCKER_INSTALL = (
    "apt-get install -y docker.io, and a daemon: systemctl start docker, or as .ci/run does, "
    "dockerd --iptables=false --bridge=none --storage-driver=vfs -H unix:///run/ooda-dockerd.sock "
    "with DOCKER_HOST=unix:///run/ooda-dockerd.sock"
)


def require(available: bool, what: str, install: str) -> None:
    """Skip (fail under CI) the calling test unless ``available``."""
    __tracebackhide__ = True
    if available:
        return
    message = f"{what} is not installed: {install}"
    if os.environ.get("CI"):
        pytest.fail(message + " (CI must run these tests; .ci/run installs it)")
    pytest.skip(message)

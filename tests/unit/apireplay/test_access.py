"""``apireplay.access``: an agent reaches the proxy with no sandbox, from inside bwrap
with ``network: none`` (through the relay, under bwrap's seccomp filter) and from inside
a Docker container with ``network: none`` (the proxy listening in its namespace) — and,
inside, nothing else."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest
from sandbox_images import busybox_image, require_bwrap, require_docker

from pytest_ooda.apireplay import ApiProxy
from pytest_ooda.apireplay.access import PLACEHOLDER_KEY, reach, sandbox_for_api
from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.sandbox import parse_spec, sandboxed

from .helpers import Upstream

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from pytest_ooda._types import ApiMode

#: Asks the proxy through its base URL, then tries the scripted upstream directly.
CLIENT = textwrap.dedent(
    """\
    import json, os, sys, urllib.request
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    body = {"model": "m", "messages": [{"role": "user", "content": "from inside"}]}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=20) as answer:
        print(json.loads(answer.read())["content"][0]["text"])
    print("key", os.environ.get("ANTHROPIC_API_KEY"))
    try:
        urllib.request.urlopen(sys.argv[1], timeout=5)
        print("upstream reached")
    except OSError as exc:
        print("upstream unreachable")
    """
)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


def _through(
    spec_value: dict[str, Any] | None,
    argv: list[str],
    upstream: Upstream,
    tmp_path: Path,
    *,
    mode: ApiMode = "record",
    env: dict[str, str] | None = None,
) -> tuple[str, ApiProxy]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.update(env or {})
    spec = sandbox_for_api(parse_spec(spec_value) if spec_value else None, mode, base)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    proxy = ApiProxy(mode, upstreams={"anthropic": upstream.url})
    with proxy.start(), sandboxed(spec, workspace) as run:
        access = reach(proxy, argv, mode=mode, spec=spec, run=run, env=base)
        backend = CommandBackend(
            access.argv, env={**base, **access.env}, sandbox=run, pass_fds=access.pass_fds
        )
        done = backend.run(
            "", iteration=1, workdir=workspace, timeout=120, max_output=1 << 16, stream=None
        )
    return done.output, proxy


def test_with_no_sandbox_the_base_url_is_the_proxy_and_replays_get_a_placeholder_key(
    upstream: Upstream, tmp_path: Path
) -> None:
    output, proxy = _through(None, [sys.executable, "-c", CLIENT, upstream.url], upstream, tmp_path)
    assert output.splitlines()[:2] == ["answer 1 to from inside", "key None"]
    assert len(proxy.recording().exchanges) == 1
    proxy = ApiProxy("replay", cassette=proxy.recording())
    with proxy.start():
        access = reach(proxy, ["agent"], mode="replay", spec=None, run=None, env={})
    assert access.env["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY
    assert access.env["ANTHROPIC_BASE_URL"] == proxy.url("anthropic")
    assert access.env["OPENAI_BASE_URL"].endswith("/openai/v1")
    with proxy.start():
        kept = reach(
            proxy, ["agent"], mode="replay", spec=None, run=None,
            env={"CLAUDE_CODE_OAUTH_TOKEN": "x", "OPENAI_API_KEY": "y"},
        )  # fmt: skip
    assert "ANTHROPIC_API_KEY" not in kept.env
    assert "OPENAI_API_KEY" not in kept.env
    proxy.close()


def test_the_sandbox_lets_the_base_urls_through_and_shows_python_to_the_relay() -> None:
    docker = sandbox_for_api(
        parse_spec({"kind": "docker", "image": "x", "env": ["ANTHROPIC_BASE_URL", "A"]}),
        "replay",
        {},
    )
    assert docker is not None
    assert docker.options["env"] == (
        "ANTHROPIC_BASE_URL", "A", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
        "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY",
    )  # fmt: skip
    assert "expose" not in docker.options
    relayed = sandbox_for_api(parse_spec({"kind": "bwrap", "network": "none"}), "record", {})
    assert relayed is not None
    assert relayed.options["env"] == (
        "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
    )  # fmt: skip
    assert sys.base_prefix in relayed.options["expose"]
    assert sandbox_for_api(None, "record") is None


def test_inside_bwrap_without_a_network_the_relay_reaches_the_proxy_and_nothing_else(
    upstream: Upstream, tmp_path: Path
) -> None:
    require_bwrap()
    output, proxy = _through(
        {"kind": "bwrap", "network": "none"},
        [sys.executable, "-I", "-c", CLIENT, upstream.url],
        upstream,
        tmp_path,
        mode="record",
        env={"ANTHROPIC_API_KEY": "sk-test-0000"},
    )
    assert output.splitlines() == [
        "answer 1 to from inside",
        "key None",  # not listed in the sandbox's env: not passed in
        "upstream unreachable",
    ], output
    [exchange] = proxy.recording().exchanges
    assert exchange.status == 200
    assert len(upstream.requests) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="the proxy enters the container's network as root")
def test_inside_a_container_without_a_network_the_proxy_listens_in_its_namespace(
    upstream: Upstream, tmp_path: Path
) -> None:
    require_docker()
    image = busybox_image()
    request = json.dumps({"model": "m", "messages": [{"role": "user", "content": "boxed"}]})
    script = (
        "url=${ANTHROPIC_BASE_URL#http://}; hostport=${url%%/*}; "
        f"printf 'POST /anthropic/v1/messages HTTP/1.0\\r\\nContent-Length: {len(request)}"
        f"\\r\\n\\r\\n%s' '{request}' | nc ${{hostport%:*}} ${{hostport#*:}}; "
        f"echo; echo host; nc -w 3 {upstream.url[7:].replace(':', ' ')} </dev/null "
        "&& echo upstream reached || echo upstream unreachable"
    )
    output, proxy = _through(
        {"kind": "docker", "image": image, "network": "none"},
        ["sh", "-c", script],
        upstream,
        tmp_path,
    )
    assert "answer 1 to boxed" in output
    assert "upstream unreachable" in output
    assert "upstream reached" not in output
    assert len(proxy.recording().exchanges) == 1

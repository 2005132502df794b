"""``apireplay.netns``: a socket listening on the loopback of another network namespace,
served from this one — reachable from inside that namespace only."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pytest_ooda.apireplay import ApiProxy
from pytest_ooda.apireplay.netns import listen_in_netns

from .helpers import Upstream

CLIENT = textwrap.dedent(
    """\
    import json, sys, urllib.request
    url = sys.argv[1] + "/v1/messages"
    body = {"model": "m", "messages": [{"role": "user", "content": "from the namespace"}]}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=20) as answer:
        print(answer.read().decode())
    """
)


def test_a_process_that_does_not_exist_is_an_os_error() -> None:
    with pytest.raises(OSError, match="No such file"):
        listen_in_netns(2**22 + 7)


def test_entering_takes_privileges_over_the_namespace() -> None:
    # Even this process's own namespace: setns needs CAP_SYS_ADMIN.
    if os.geteuid() != 0:
        with pytest.raises(PermissionError):
            listen_in_netns(os.getpid())
        return
    listener = listen_in_netns(os.getpid())
    try:
        assert listener.getsockname()[0] == "127.0.0.1"
    finally:
        listener.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="entering a namespace needs root (CI runs as root)")
def test_the_proxy_answers_inside_another_namespace_and_not_here() -> None:
    # A namespace with only `lo`, as a container with --network none has.
    holder = subprocess.Popen(
        ["unshare", "--net", "sh", "-c", "ip link set lo up && echo up && exec sleep 120"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    upstream = Upstream()
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "up"
        listener = listen_in_netns(holder.pid)
        with ApiProxy("record", upstreams={"anthropic": upstream.url}) as proxy:
            port = proxy.listen_on(listener)
            inside = subprocess.run(
                ["nsenter", "-t", str(holder.pid), "-n", sys.executable, "-c", CLIENT,
                 proxy.url("anthropic", port=port)],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
        upstream.close()
    assert inside.returncode == 0, inside.stderr
    assert "answer 1 to from the namespace" in inside.stdout
    assert proxy.recording().exchanges[0].status == 200
    assert len(upstream.requests) == 1

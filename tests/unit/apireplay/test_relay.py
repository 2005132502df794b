"""``apireplay.relay``: the command runs with its base-URL variables pointing at a loopback
port that reaches the proxy's Unix socket, and its exit status is the relay's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from pytest_ooda.apireplay import ApiProxy, relay as relay_module
from pytest_ooda.apireplay.relay import main

from .helpers import Upstream

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

CLIENT = textwrap.dedent(
    """\
    import json, os, sys, urllib.request
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    body = {"model": "m", "messages": [{"role": "user", "content": "through the relay"}]}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=20) as answer:
        print(url.split("/")[2].split(":")[0], answer.read().decode())
    sys.exit(3)
    """
)


def test_the_command_reaches_the_proxy_through_the_socket_and_its_status_is_kept(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    upstream = Upstream()
    socket_path = tmp_path / "api.sock"
    try:
        with ApiProxy("record", upstreams={"anthropic": upstream.url}) as proxy:
            proxy.listen_unix(socket_path)
            status = main(
                [str(socket_path), "ANTHROPIC_BASE_URL=/anthropic", "--",
                 sys.executable, "-c", CLIENT]
            )  # fmt: skip
    finally:
        upstream.close()
    assert status == 3
    out = capfd.readouterr().out
    assert out.startswith("127.0.0.1 ")
    assert "answer 1 to through the relay" in out
    assert proxy.recording().exchanges[0].endpoint == "anthropic POST /v1/messages"


def test_run_by_path_with_the_standard_library_only(tmp_path: Path) -> None:
    # As a sandbox runs it: `python -I -S relay.py`, no pytest_ooda on the path.
    upstream = Upstream()
    socket_path = tmp_path / "api.sock"
    try:
        with ApiProxy("record", upstreams={"anthropic": upstream.url}) as proxy:
            proxy.listen_unix(socket_path)
            done = subprocess.run(
                [sys.executable, "-I", "-S", relay_module.__file__, str(socket_path),
                 "ANTHROPIC_BASE_URL=/anthropic", "--", sys.executable, "-c", CLIENT],
                capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
            )  # fmt: skip
    finally:
        upstream.close()
    assert done.returncode == 3, done.stderr
    assert "answer 1 to through the relay" in done.stdout


def test_usage_a_missing_command_and_a_signalled_one(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 2
    assert main(["sock", "--"]) == 2
    assert "usage: relay.py" in capfd.readouterr().err
    assert main([str(tmp_path / "sock"), "--", str(tmp_path / "no-such-program")]) == 127
    assert "relay: cannot start" in capfd.readouterr().err
    killed = main([str(tmp_path / "sock"), "--", sys.executable, "-c",
                   "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])  # fmt: skip
    assert killed == 128 + signal.SIGTERM


def test_a_signal_to_the_relay_reaches_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "got-term"
    script = (
        "import signal, sys, time, pathlib\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path({str(marker)!r}).touch(), "
        "sys.exit(5)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", relay_module.__file__, str(tmp_path / "sock"), "--",
         sys.executable, "-c", script],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(timeout=20) == 5
    assert marker.exists()


CONCURRENT = textwrap.dedent(
    """\
    import json, os, sys, threading, urllib.request
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    answers = {}
    def ask(n):
        body = {"model": "m", "messages": [{"role": "user", "content": f"call {n}"}]}
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=20) as answer:
            answers[n] = json.loads(answer.read())["content"][0]["text"]
    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps(answers, sort_keys=True))
    """
)


def test_through_an_inherited_broker_socket_the_relay_opens_no_socket_of_its_own(
    tmp_path: Path,
) -> None:
    # A sandbox's seccomp filter may refuse Unix sockets: the relay gets each connection
    # as a descriptor over the one socket it inherits.
    upstream = Upstream()
    try:
        with ApiProxy("record", upstreams={"anthropic": upstream.url}) as proxy:
            theirs = proxy.broker()
            done = subprocess.run(
                [sys.executable, "-I", "-S", relay_module.__file__, f"fd:{theirs.fileno()}",
                 "ANTHROPIC_BASE_URL=/anthropic", "--", sys.executable, "-c", CONCURRENT],
                capture_output=True, text=True, timeout=60, check=False,
                pass_fds=[theirs.fileno()],
            )  # fmt: skip
            theirs.close()
    finally:
        upstream.close()
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert sorted(answers) == ["0", "1", "2", "3"]
    assert all(text.endswith(f"to call {n}") for n, text in answers.items())
    assert len(proxy.recording().exchanges) == 4

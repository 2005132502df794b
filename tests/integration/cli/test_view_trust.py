"""``ooda view`` only its user can read, and it keeps answering (issue 39, item 3), as
the user starts it (a real process on 127.0.0.1): a request whose Host names another
site (DNS rebinding) is refused; with ``--token`` the printed URL's token signs a real
Chromium in and its pages (and their polling) work; 300 half-open connections and 2,000
page requests leave it answering, and so do clients that drip their request a byte at a
time; clients that hang up do not print tracebacks."""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import struct
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from html_browser import Browser
from sample_records import changed, sample, write
from view_server import ViewServer

if TYPE_CHECKING:
    from pathlib import Path

#: The load: page requests over this many clients, with this many half-open
#: connections (connected, nothing sent) held open meanwhile.
REQUESTS = 2000
CLIENTS = 8
HALF_OPEN = 300
PAGES = ("/", "/session/S1", "/run/run-1", "/run/run-2", "/api/version", "/history")


def _results(tmp_path: Path) -> str:
    runs = [
        changed(item, id=f"run-{item.head.run}", session="S1", series="S1") for item in sample(2, 3)
    ]
    write(tmp_path / "results" / "S1.jsonl", runs)
    return str(tmp_path / "results")


def _get(port: int, path: str, host: str | None = None, cookie: str | None = None) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host or f"127.0.0.1:{port}")
        if cookie:
            connection.putheader("Cookie", cookie)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8"), dict(response.getheaders())
    finally:
        connection.close()


def _port(server: ViewServer) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def test_a_foreign_host_is_refused_and_its_own_names_answered(tmp_path: Path) -> None:
    with ViewServer(_results(tmp_path)) as server:
        port = _port(server)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            status, html, _ = _get(port, "/run/run-1", host)
            assert status == 200, host
            assert "build/happy" in html
        # A page elsewhere whose name now points at 127.0.0.1 asks with its own name.
        for host in (f"rebind.example:{port}", "rebind.example", f"127.0.0.1:{port + 1}"):
            status, text, _ = _get(port, "/run/run-1", host)
            assert status == 403, host
            assert "build/happy" not in text
            assert "answers only requests addressed to it" in text


def test_a_token_signs_chromium_in_once_and_its_pages_poll(tmp_path: Path) -> None:
    with ViewServer(_results(tmp_path), "--token") as server:
        port = _port(server)
        token = urlsplit(server.url).query.removeprefix("token=")
        assert len(token) >= 32
        # Without it: nothing; with a wrong one: nothing.
        assert _get(port, "/run/run-1")[0] == 401
        assert _get(port, "/run/run-1?token=guess")[0] == 401
        assert _get(port, "/", cookie=f"ooda_view_{port}=guess")[0] == 401
        with Browser(tmp_path / "profile") as browser:
            page = browser.open(server.url)
            browser.wait_for(page, "document.querySelector('section.session')")
            # Signed in, the token gone from the address; the cookie opens every page,
            # the viewer's own polling included.
            assert browser.evaluate(page, "location.search") == ""
            assert browser.evaluate(page, "document.cookie") == ""  # HttpOnly
            polled = browser.evaluate(
                page,
                "(() => { const x = new XMLHttpRequest(); x.open('GET', '/api/version', false);"
                " x.send(); return x.status; })()",
            )
            assert polled == 200
            run = browser.open(f"http://127.0.0.1:{port}/run/run-2")
            browser.wait_for(run, "document.body && document.body.textContent.includes('run 2')")
        # A client without the cookie still gets nothing.
        assert _get(port, "/run/run-2")[0] == 401


def test_half_open_connections_and_a_flood_of_requests_leave_it_answering(
    tmp_path: Path,
) -> None:
    with ViewServer(_results(tmp_path)) as server:
        port = _port(server)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(HALF_OPEN)]
        try:
            # They take no thread: a page is answered at once.
            assert _get(port, "/run/run-1")[0] == 200
            statuses: Counter[int] = Counter()
            failures: list[str] = []
            lock = threading.Lock()

            def client(number: int) -> None:
                for request in range(number, REQUESTS, CLIENTS):
                    try:
                        status = _get(port, PAGES[request % len(PAGES)])[0]
                    except OSError as exc:
                        with lock:
                            failures.append(f"{type(exc).__name__}: {exc}")
                        continue
                    with lock:
                        statuses[status] += 1

            started = time.monotonic()
            clients = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            for thread in clients:
                thread.start()
            for thread in clients:
                thread.join()
            took = time.monotonic() - started
            print(f"{REQUESTS} requests beside {HALF_OPEN} half-open connections: {took:.1f} s")
            assert failures == []
            assert statuses == Counter({200: REQUESTS})
            # A connection that never sends a request is closed by the server in the
            # end (it would otherwise hold a thread forever).
            assert idle[0].recv(1) == b""
        finally:
            for conn in idle:
                conn.close()
        assert _get(port, "/")[0] == 200


def test_clients_that_drip_their_request_are_cut_off_and_others_answered(
    tmp_path: Path,
) -> None:
    # More clients than the server has threads, each sending its request line a byte a
    # second (every read in time): they may hold a thread only while their request is
    # due, not for as long as they keep dripping.
    with ViewServer(_results(tmp_path)) as server:
        port = _port(server)
        drippers = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(12)]
        cut: list[int] = []
        done = threading.Event()

        def drip() -> None:
            line = b"GET /run/run-1 HTTP/1.1 " + b"x" * 10_000
            for sent in range(1, 600):
                for number, conn in enumerate(drippers):
                    if number in cut:
                        continue
                    ready, _, _ = select.select([conn], [], [], 0)
                    if ready and conn.recv(1) == b"":
                        cut.append(number)
                    else:
                        with contextlib.suppress(OSError):
                            conn.sendall(line[sent : sent + 1])
                if len(cut) == len(drippers) or done.wait(1):
                    return

        for conn in drippers:
            conn.sendall(b"G")
        dripping = threading.Thread(target=drip)
        dripping.start()
        try:
            status, html, _ = _get(port, "/run/run-1")
            assert status == 200
            assert "build/happy" in html
            dripping.join(timeout=300)
            assert sorted(cut) == list(range(len(drippers)))
        finally:
            done.set()
            dripping.join()
            for conn in drippers:
                conn.close()


def test_clients_that_hang_up_print_nothing(tmp_path: Path) -> None:
    with ViewServer(_results(tmp_path)) as server:
        port = _port(server)
        for _ in range(50):
            conn = socket.create_connection(("127.0.0.1", port), timeout=60)
            conn.sendall(f"GET /run/run-1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            # Reset, not a polite close: the answer meets a connection that is gone.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
        assert _get(port, "/")[0] == 200
        assert server.process is not None
        server.process.terminate()
        server.process.wait(timeout=30)
        assert server.process.stderr is not None
        errors = server.process.stderr.read()
        assert "Traceback" not in errors
        assert "Error" not in errors

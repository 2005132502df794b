"""``ooda view [DIR ...]``: a local, read-only web page over results directories —
the sessions, a scenarios × variants matrix, every run with its transcript and judge,
outputs side by side, comparisons — that refreshes itself while a session writes.
The pages are :mod:`pytest_ooda.view.server`'s; this module starts the server."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_ooda.cli.common import EXIT_OK, note, open_in_browser, positive_int
from pytest_ooda.errors import UsageError

#: Where ``pytest -m live`` writes results by default (as ``ooda report`` reads them).
DEFAULT_RESULTS = ".ooda/results"


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {value}")
    return value


def add_parser(subparsers: Any) -> None:
    from pytest_ooda.stats import DEFAULT_K

    parser = subparsers.add_parser(
        "view",
        help="a local web page over live-run results that refreshes while a session runs",
        description="Serve the results directories read-only on a local web page: the "
        "sessions newest first with their verdicts and a scenarios x variants matrix, every "
        "run with its transcript and judge, each variant's outputs side by side, and "
        "comparisons of two sessions or two variants. A session writing into a directory "
        "shows up and fills in while the page is open. The URL is the first line printed.",
        epilog="The pages are the ones `ooda report --html` writes, served by Python's "
        "http.server; nothing outside the directories is served, and nothing is written. "
        "Only requests addressed to the server (Host: 127.0.0.1 or localhost and its port) "
        "are answered.",
    )
    parser.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        help=f"results directories (default: {DEFAULT_RESULTS}, where `pytest -m live` "
        "writes them)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1: this machine only); any other "
        "address makes a token, printed once in the URL, without which no page is served",
    )
    parser.add_argument(
        "--port", type=_port, default=8000, help="the port (default 8000; 0 picks a free one)"
    )
    parser.add_argument(
        "--token",
        action="store_true",
        help="ask for a token on 127.0.0.1 too (other users of this machine reach it); "
        "printed once in the URL, a cookie after the first visit",
    )
    parser.add_argument(
        "--open",
        action="store_true",
        help="open the page in a web browser (when there is a display)",
    )
    parser.add_argument(
        "--k",
        type=positive_int,
        default=DEFAULT_K,
        metavar="K",
        help=f"the k of pass^k and pass@k (default {DEFAULT_K})",
    )
    parser.add_argument("--title", default="ooda view", help="heading of the sessions page")
    parser.set_defaults(func=command)


def _directories(given: list[str]) -> list[str]:
    if not given:
        if not Path(DEFAULT_RESULTS).is_dir():
            note(
                f"ooda view: {DEFAULT_RESULTS} does not exist yet; its sessions show up when "
                "`pytest -m live` writes them"
            )
        return [DEFAULT_RESULTS]
    for item in given:
        path = Path(item)
        if not path.is_dir():
            what = "is not a directory" if path.exists() else "does not exist"
            raise UsageError(
                f"{item}: {what}; give results directories (where `pytest -m live` writes)"
            )
    return given


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.view import ResultsIndex, Viewer, exposure_warning, make_server

    directories = _directories(args.dirs)
    index = ResultsIndex(directories)
    try:
        server, access = make_server(
            Viewer(index, k=args.k, title=args.title), args.host, args.port, token=args.token
        )
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
            "(--port 0 picks a free port)"
        ) from None
    host, port = server.server_address[:2]
    name = host.decode() if isinstance(host, bytes) else str(host)
    shown = f"[{name}]" if ":" in name else name
    url = f"http://{shown}:{port}/"
    print(access.url(url), flush=True)
    note(f"ooda view: {', '.join(directories)} read-only; Ctrl-C stops it")
    warning = exposure_warning(name)
    if warning is not None:
        note(f"ooda view: {warning}")
    try:
        index.refresh()
        if args.open:
            open_in_browser(access.url(url))
        server.serve_forever()
    except KeyboardInterrupt:
        note("ooda view: stopped")
    finally:
        server.server_close()
    return EXIT_OK

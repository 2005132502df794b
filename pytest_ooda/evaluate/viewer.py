"""``ooda view``'s pages: a read-only web server over results directories, on the
standard library's ``http.server``, rendering the same templates as ``ooda report
--html`` (:mod:`.html_report`).

Pages, each at a URL that stays a good permalink:

- ``/`` — the sessions, newest first: verdict badge, scenarios × variants matrix, gates,
  an interrupted session with the command that would finish it;
- ``/session/KEY`` — one session (``KEY`` is its results file's path under the
  directory, without ``.jsonl``): the matrix, the per-scenario figures, the runs
  (``?scenario=procedure/scenario@variant`` for one cell's, ``&page=N``);
- ``/run/ID`` — one run by its id, transcript and judge included;
- ``/outputs/KEY?scenario=procedure/scenario`` — each variant's runs side by side;
- ``/compare?base=KEY&new=KEY`` (two sessions) or ``/compare?session=KEY&a=V&b=V`` (two
  variants); ``/variants/KEY`` — every pair of variants of a session;
- ``/api/version`` — what a page polls to reload itself while a session runs.

Nothing is served from the directories themselves: every URL names a session, a run or
a page, looked up in the :class:`~pytest_ooda.evaluate.index.ResultsIndex`, whose files
lie inside the directories (symlinks out of them are not followed). A path with a
``..`` segment (``%2e%2e`` too, once decoded), a backslash or a NUL byte is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

    from pytest_ooda.evaluate.aggregate import ScenarioStats
    from pytest_ooda.evaluate.index import ResultsIndex, Session
    from pytest_ooda.evaluate.results import RunRecord

__all__ = ["VIEW_CSP", "Response", "Viewer", "make_server"]

#: A viewer page may also run the server's own refresh script and ask it for news.
VIEW_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; "
    "connect-src 'self'"
)
#: Rows of a session's runs table per page, and run numbers of the outputs page.
RUNS_PER_PAGE = 100
OUTPUT_ROWS = 10
STATIC = {"refresh.js": ("text/javascript; charset=utf-8", "refresh.js")}


@dataclass(frozen=True)
class Response:
    status: int
    content_type: str
    body: bytes


def _html(status: int, text: str) -> Response:
    return Response(status, "text/html; charset=utf-8", text.encode("utf-8"))


def _not_found(what: str) -> Response:
    from html import escape

    return _html(
        HTTPStatus.NOT_FOUND,
        "<!DOCTYPE html><title>not found</title>"
        f"<p>{escape(what)}</p><p><a href='/'>sessions</a></p>",
    )


class ViewLinks:
    """Links between the viewer's pages."""

    def __init__(self, session: Session) -> None:
        self.key = session.key

    def run(self, record: RunRecord) -> str:
        return f"/run/{quote(record.id, safe='')}"

    def cell(self, stats: ScenarioStats) -> str | None:
        return f"{session_href(self.key)}?scenario={quote(stats.label, safe='')}#runs"

    def outputs(self, procedure: str, scenario: str) -> str | None:
        return f"/outputs/{quote(self.key)}?scenario={quote(f'{procedure}/{scenario}', safe='')}"


def session_href(key: str) -> str:
    return f"/session/{quote(key)}"


def _pages(total: int, size: int, current: int, href: str) -> list[dict[str, Any]]:
    count = max(1, -(-total // size))
    joiner = "&" if "?" in href else "?"
    return [
        {"number": n, "current": n == current, "href": f"{href}{joiner}page={n}"}
        for n in range(1, count + 1)
    ]


class Viewer:
    """Answers a request path with a page, reading the index as it grows."""

    def __init__(self, index: ResultsIndex, *, k: int, title: str = "ooda view") -> None:
        self.index = index
        self.k = k
        self.title = title

    # ------------------------------------------------------------------ routing

    def respond(self, target: str) -> Response:
        parts = urlsplit(target)
        path = unquote(parts.path)
        if "\x00" in path or "\\" in path or ".." in path.split("/"):
            return _not_found("refused: the path leaves the results directories")
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if path.startswith("/static/"):
            return self.static(path.removeprefix("/static/"))
        self.index.refresh()
        with self.index.lock:
            try:
                return self.route(path, query)
            except OodaError as error:
                from html import escape

                return _html(HTTPStatus.INTERNAL_SERVER_ERROR, f"<p>{escape(str(error))}</p>")

    def route(self, path: str, query: dict[str, str]) -> Response:
        if path in ("/", "/index.html"):
            return self.index_page()
        if path == "/api/version":
            return self.version(query.get("session"))
        for prefix, page in (
            ("/session/", self.session_page),
            ("/run/", self.run_page),
            ("/outputs/", self.outputs_page),
            ("/variants/", self.variants_page),
        ):
            if path.startswith(prefix):
                return page(path.removeprefix(prefix), query)
        if path == "/compare":
            return self.compare_page(query)
        return _not_found(f"no page {path}")

    def static(self, name: str) -> Response:
        found = STATIC.get(name)
        if found is None:
            return _not_found(f"no file {name}")
        from pytest_ooda.evaluate.html_report import TEMPLATES

        content_type, file = found
        return Response(HTTPStatus.OK, content_type, (TEMPLATES / file).read_bytes())

    def version(self, key: str | None) -> Response:
        session = self.index.sessions.get(key) if key else None
        running = session.running if session is not None else self.index.running
        body = json.dumps({"version": self.index.version, "running": running})
        return Response(HTTPStatus.OK, "application/json", body.encode("ascii"))

    def _render(
        self,
        template: str,
        *,
        poll: Session | None,
        always: bool = False,
        **context: Any,
    ) -> Response:
        """A page; ``poll``: the running session it shows (the page reloads itself while
        that session runs); ``always``: it keeps polling (a new session may start)."""
        from pytest_ooda.evaluate.html_report import render_page

        url = "/api/version" if poll is None else f"/api/version?session={quote(poll.key, safe='')}"
        polling = (
            {"version": self.index.version, "url": url, "always": always}
            if poll is not None or always
            else None
        )
        return _html(HTTPStatus.OK, render_page(template, csp=VIEW_CSP, poll=polling, **context))

    # ------------------------------------------------------------------ summaries

    def _ran(self) -> dict[str, set[tuple[str, str]]]:
        """Each session's scenarios, by its key."""
        return {
            key: {(record.procedure, record.scenario) for record in session.records}
            for key, session in self.index.sessions.items()
        }

    def summary(
        self, session: Session, ran: dict[str, set[tuple[str, str]]] | None = None
    ) -> dict[str, Any]:
        """What the index and the session page say about a session (``ran``: each
        session's scenarios, worked out once per page)."""
        from pytest_ooda.evaluate.aggregate import drop_duplicates, summarize
        from pytest_ooda.evaluate.index import resume_command
        from pytest_ooda.evaluate.pages import matrix, scenario_view, session_verdict

        records, _ = drop_duplicates(session.records)
        stats = summarize(records, k=self.k)
        links = ViewLinks(session)
        gaps = self.index.gaps(session)
        verdict, text = session_verdict(stats, running=session.running, interrupted=bool(gaps))
        resume = None
        if gaps:
            missing = ", ".join(f"{gap.label} has {gap.have} of {gap.planned} runs" for gap in gaps)
            command = resume_command(self.index.series_records(session.series), session.results_dir)
            resume = {"text": missing, "command": command}
        later = self.index.continued_by(session)
        variants = {record.variant for record in records}
        return {
            "key": session.key,
            "href": session_href(session.key),
            "stamp": session.stamp,
            "series": session.series,
            "file": (Path(session.shown_root) / session.path.relative_to(session.root)).as_posix(),
            "started": session.started,
            "running": session.running,
            "runs": len(records),
            "scenarios": len({(record.procedure, record.scenario) for record in records}),
            "stats": stats,
            "views": [scenario_view(item, i, links) for i, item in enumerate(stats, start=1)],
            "matrix": matrix(stats, links, running=session.running),
            "verdict": verdict,
            "verdict_text": text,
            "resume": resume,
            "continued_by": (
                {"stamp": later.stamp, "href": session_href(later.key)} if later else None
            ),
            "variants_href": f"/variants/{quote(session.key)}" if len(variants) > 1 else None,
            "compare_href": self._previous(session, ran or self._ran()),
            "error": session.error,
            "warnings": [str(warning) for warning in session.warnings],
        }

    def _previous(self, session: Session, ran: dict[str, set[tuple[str, str]]]) -> str | None:
        """The compare page against the latest earlier session that ran a scenario
        this one ran (``ran``: each session's scenarios)."""
        for other in self.index.ordered():
            if other.started < session.started and ran[session.key] & ran[other.key]:
                return (
                    f"/compare?base={quote(other.key, safe='')}&new={quote(session.key, safe='')}"
                )
        return None

    # ------------------------------------------------------------------ pages

    def index_page(self) -> Response:
        ran = self._ran()
        sessions = [self.summary(session, ran) for session in self.index.ordered()]
        return self._render(
            "index.html.j2",
            poll=None,
            always=True,
            title=self.title,
            sessions=sessions,
            roots=[shown for _, shown in self.index.roots],
            running=self.index.running,
        )

    def session_page(self, key: str, query: dict[str, str]) -> Response:
        from pytest_ooda.evaluate.render_text import money, seconds
        from pytest_ooda.evaluate.run_view import reason

        session = self.index.sessions.get(key)
        if session is None:
            return _not_found(f"no session {key}")
        summary = self.summary(session)
        wanted = query.get("scenario")
        chosen = [
            record
            for item in summary["stats"]
            if wanted is None or item.label == wanted
            for record in sorted(item.records, key=lambda record: (record.run, record.started_at))
        ]
        page = _page_number(query)
        shown = chosen[(page - 1) * RUNS_PER_PAGE : page * RUNS_PER_PAGE]
        links = ViewLinks(session)
        href = session_href(key) + (f"?scenario={quote(wanted, safe='')}" if wanted else "")
        rows = [
            {
                "record": record,
                "anchor": f"run-{record.id}",
                "href": links.run(record),
                "verdict": record.outcome,
                "reason": reason(record),
                "time": seconds(record.elapsed_s),
                "cost": money(record.cost),
            }
            for record in shown
        ]
        return self._render(
            "session.html.j2",
            poll=session if session.running else None,
            title=f"session {session.stamp}",
            s=summary,
            k=self.k,
            rows=rows,
            total=len(chosen),
            pages=_pages(len(chosen), RUNS_PER_PAGE, page, href),
            shown_scenario=wanted,
            all_runs_href=session_href(key) + "#runs",
        )

    def run_page(self, run_id: str, query: dict[str, str]) -> Response:
        from pytest_ooda.evaluate.pages import prompt_versions
        from pytest_ooda.evaluate.run_view import run_view

        found = self.index.find_run(run_id)
        if found is None:
            return _not_found(f"no run {run_id}")
        session, summary = found
        record = self.index.whole(session, summary)
        prompts = prompt_versions([record], 1)
        prompt = next(iter(prompts.values()), None)
        view = run_view(
            record,
            anchor="run",
            full=True,
            prompt_anchor=f"#{prompt['anchor']}" if prompt is not None else None,
        )
        view["left_out"] = None
        siblings = sorted(
            (item for item in session.records if item.label == record.label),
            key=lambda item: (item.run, item.started_at),
        )
        position = next(i for i, item in enumerate(siblings) if item.id == record.id)
        links = ViewLinks(session)
        variants = {item.variant for item in session.records if item.scenario == record.scenario}
        return self._render(
            "run.html.j2",
            poll=session if session.running else None,
            title=view["title"],
            run=view,
            prompt=prompt,
            session_href=session_href(session.key),
            session_stamp=session.stamp,
            cell_href=f"{session_href(session.key)}?scenario={quote(record.label, safe='')}#runs",
            previous=links.run(siblings[position - 1]) if position > 0 else None,
            next=links.run(siblings[position + 1]) if position + 1 < len(siblings) else None,
            outputs_href=(
                links.outputs(record.procedure, record.scenario) if len(variants) > 1 else None
            ),
        )

    def outputs_page(self, key: str, query: dict[str, str]) -> Response:
        from pytest_ooda.evaluate.outputs import output_columns

        session = self.index.sessions.get(key)
        wanted = query.get("scenario", "")
        if session is None:
            return _not_found(f"no session {key}")
        procedure, _, scenario = wanted.partition("/")
        records = [
            record
            for record in session.records
            if record.procedure == procedure and record.scenario == scenario
        ]
        if not records:
            return _not_found(f"no runs of {wanted} in session {key}")
        page = _page_number(query)
        columns, rows, total = output_columns(
            records,
            lambda record: self.index.whole(session, record),
            ViewLinks(session),
            page=page,
            size=OUTPUT_ROWS,
            compare=lambda a, b: (
                f"/compare?session={quote(key, safe='')}&a={quote(a, safe='')}"
                f"&b={quote(b, safe='')}&scenario={quote(wanted, safe='')}"
            ),
        )
        href = f"/outputs/{quote(key)}?scenario={quote(wanted, safe='')}"
        return self._render(
            "outputs.html.j2",
            poll=session if session.running else None,
            title=f"{wanted}: outputs side by side",
            label=wanted,
            columns=columns,
            rows=rows,
            pages=_pages(total, OUTPUT_ROWS, page, href),
            session_href=session_href(key),
            session_stamp=session.stamp,
        )

    def compare_page(self, query: dict[str, str]) -> Response:
        from pytest_ooda.evaluate.aggregate import drop_duplicates
        from pytest_ooda.evaluate.compare_pages import render_compare_html
        from pytest_ooda.evaluate.comparison import compare

        if "session" in query:
            session = self.index.sessions.get(query["session"])
            a, b = query.get("a"), query.get("b")
            if session is None or a is None or b is None:
                return _not_found("compare two variants: /compare?session=KEY&a=VARIANT&b=VARIANT")
            wanted = query.get("scenario")
            base = _variant_runs(session.records, a, wanted)
            new = _variant_runs(session.records, b, wanted)
            base_session = new_session = session
            labels = (f"variant {a}", f"variant {b}")
            crumbs = [("sessions", "/"), (session.stamp, session_href(session.key))]
        else:
            older = self.index.sessions.get(query.get("base", ""))
            newer = self.index.sessions.get(query.get("new", ""))
            if older is None or newer is None:
                return _not_found("compare two sessions: /compare?base=KEY&new=KEY")
            base_session, new_session = older, newer
            base = drop_duplicates(base_session.records)[0]
            new = drop_duplicates(new_session.records)[0]
            labels = (f"session {base_session.stamp}", f"session {new_session.stamp}")
            crumbs = [("sessions", "/")]
        detect = _rate(query.get("detect"))
        comparison = compare(base, new, k=self.k, detect=detect)
        html = render_compare_html(
            comparison,
            title=f"{labels[0]} against {labels[1]}",
            base_label=labels[0],
            new_label=labels[1],
            whole_base=lambda record: self.index.whole(base_session, record),
            whole_new=lambda record: self.index.whole(new_session, record),
            links=ViewLinks(new_session),
            csp=VIEW_CSP,
            crumbs=crumbs,
        )
        return _html(HTTPStatus.OK, html)

    def variants_page(self, key: str, query: dict[str, str]) -> Response:
        from pytest_ooda.evaluate.compare_pages import render_variants_html
        from pytest_ooda.evaluate.variant_comparison import compare_variants

        session = self.index.sessions.get(key)
        if session is None:
            return _not_found(f"no session {key}")
        comparison = compare_variants(session.records)
        html = render_variants_html(
            comparison,
            session.records,
            title=f"session {session.stamp}: variants compared",
            links=ViewLinks(session),
            csp=VIEW_CSP,
            crumbs=[("sessions", "/"), (session.stamp, session_href(key))],
        )
        return _html(HTTPStatus.OK, html)


def _variant_runs(records: list[RunRecord], variant: str, scenario: str | None) -> list[RunRecord]:
    """A variant's runs (``(none)``/``(default)``: those under none), as unnamed runs, so
    two variants compare scenario by scenario."""
    from pytest_ooda.evaluate.pages import DEFAULT_VARIANT
    from pytest_ooda.evaluate.variant_comparison import NO_VARIANT

    name = None if variant in (NO_VARIANT, DEFAULT_VARIANT) else variant
    return [
        replace(record, variant=None)
        for record in records
        if record.variant == name
        and (scenario is None or f"{record.procedure}/{record.scenario}" == scenario)
    ]


def _page_number(query: dict[str, str]) -> int:
    try:
        return max(1, int(query.get("page", "1")))
    except ValueError:
        return 1


def _rate(text: str | None) -> float | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and 0 < value < 1 else None


def make_server(viewer: Viewer, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server answering GET (and HEAD) with ``viewer``'s pages; anything else is
    refused (the viewer never changes a file)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        server_version = "ooda-view"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, response: Response, *, body: bool) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if body:
                self.wfile.write(response.body)

        def do_GET(self) -> None:
            self._send(viewer.respond(self.path), body=True)

        def do_HEAD(self) -> None:
            self._send(viewer.respond(self.path), body=False)

        def _refuse(self) -> None:
            self._send(
                Response(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", b"read-only\n"), body=True
            )

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server

"""``ooda view``'s pages: one view function a page, and :data:`ROUTES`, the table of
the URLs they answer.

Each page is at a URL that stays a good permalink:

- ``/`` — the sessions, newest first: verdict badge, scenarios × variants matrix, gates,
  an interrupted session with the command that would finish it;
- ``/session/KEY`` — one session (``KEY`` is its results file's path under the
  directory, without ``.jsonl``): the matrix, the per-scenario figures, the runs
  (``?scenario=procedure/scenario@variant`` for one cell's, ``&page=N``);
- ``/run/ID`` — one run by its id, transcript and judge included;
- ``/outputs/KEY?scenario=procedure/scenario`` — each variant's runs side by side;
- ``/compare?base=KEY&new=KEY`` (two sessions) or ``/compare?session=KEY&a=V&b=V`` (two
  variants); ``/variants/KEY`` — every pair of variants of a session;
- ``/history`` — every scenario across the sessions: stable-pass, flaky or stable-fail,
  and where a rate moved under an unchanged prompt;
- ``/ablation/KEY`` — an ``ooda ablate`` session's verdicts per fragment;
- ``/api/version`` — what a page polls to reload itself while a session runs;
- ``/static/NAME`` — the refresh script.

A view function takes the site (the index, ``k``, the title: :class:`Site`), the rest
of the path after its route's prefix (the ``KEY``; empty for a route without one) and
the query, and returns a :class:`Response`. A new page is a function and a row of
:data:`ROUTES`; the server (:mod:`.server`) only matches the path and calls it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from pytest_ooda.report import (
    DEFAULT_VARIANT,
    TEMPLATES,
    matrix,
    money,
    output_columns,
    prompt_versions,
    reason,
    render_ablation_html,
    render_compare_html,
    render_history_html,
    render_page,
    render_variants_html,
    run_view,
    scenario_view,
    seconds,
    session_verdict,
)
from pytest_ooda.stats import (
    FULL,
    NO_VARIANT,
    ablation,
    compare,
    compare_variants,
    drop_duplicates,
    history,
    place_of,
    summarize,
)
from pytest_ooda.view.index import resume_command

if TYPE_CHECKING:
    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import ScenarioStats
    from pytest_ooda.view.index import ResultsIndex, Session

__all__ = ["ROUTES", "VIEW_CSP", "Response", "Route", "Site", "not_found"]

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


class Site(Protocol):
    """What a page reads: the index of the results directories, the ``k`` of pass^k
    and the index page's title (:class:`~pytest_ooda.view.server.Viewer` has them)."""

    @property
    def index(self) -> ResultsIndex: ...
    @property
    def k(self) -> int: ...
    @property
    def title(self) -> str: ...


def _html(status: int, text: str) -> Response:
    return Response(status, "text/html; charset=utf-8", text.encode("utf-8"))


def not_found(what: str) -> Response:
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


def _ran(site: Site) -> dict[str, set[tuple[str, str]]]:
    """Each session's scenarios, by its key."""
    return {
        key: {(record.head.procedure, record.head.scenario) for record in session.records}
        for key, session in site.index.sessions.items()
    }


def session_summary(
    site: Site, session: Session, ran: dict[str, set[tuple[str, str]]] | None = None
) -> dict[str, Any]:
    """What the index and the session page say about a session (``ran``: each
    session's scenarios, worked out once per page)."""

    records, _ = drop_duplicates(session.records)
    stats = summarize(records, k=site.k)
    links = ViewLinks(session)
    gaps = site.index.gaps(session)
    verdict, text = session_verdict(stats, running=session.running, interrupted=bool(gaps))
    resume = None
    if gaps:
        missing = ", ".join(f"{gap.label} has {gap.have} of {gap.planned} runs" for gap in gaps)
        command = resume_command(site.index.series_records(session.series), session.results_dir)
        resume = {"text": missing, "command": command}
    later = site.index.continued_by(session)
    variants = {record.head.variant for record in records}
    return {
        "key": session.key,
        "href": session_href(session.key),
        "stamp": session.stamp,
        "series": session.series,
        "file": (Path(session.shown_root) / session.path.relative_to(session.root)).as_posix(),
        "started": session.started,
        "running": session.running,
        "runs": len(records),
        "scenarios": len({(record.head.procedure, record.head.scenario) for record in records}),
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
        "ablation_href": f"/ablation/{quote(session.key)}"
        if FULL in variants and any(name and place_of(name) for name in variants)
        else None,
        "compare_href": _previous(site, session, ran or _ran(site)),
        "error": session.error,
        "warnings": [str(warning) for warning in session.warnings],
    }


def _previous(site: Site, session: Session, ran: dict[str, set[tuple[str, str]]]) -> str | None:
    """The compare page against the latest earlier session that ran a scenario
    this one ran (``ran``: each session's scenarios)."""
    for other in site.index.ordered():
        if other.started < session.started and ran[session.key] & ran[other.key]:
            return f"/compare?base={quote(other.key, safe='')}&new={quote(session.key, safe='')}"
    return None


def _render(
    site: Site,
    template: str,
    *,
    poll: Session | None,
    always: bool = False,
    **context: Any,
) -> Response:
    """A page; ``poll``: the running session it shows (the page reloads itself while
    that session runs); ``always``: it keeps polling (a new session may start)."""

    url = "/api/version" if poll is None else f"/api/version?session={quote(poll.key, safe='')}"
    polling = (
        {"version": site.index.version, "url": url, "always": always}
        if poll is not None or always
        else None
    )
    return _html(HTTPStatus.OK, render_page(template, csp=VIEW_CSP, poll=polling, **context))


def version(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/api/version``: what a page polls to reload itself while a session runs."""
    wanted = query.get("session")
    session = site.index.sessions.get(wanted) if wanted else None
    running = session.running if session is not None else site.index.running
    body = json.dumps({"version": site.index.version, "running": running})
    return Response(HTTPStatus.OK, "application/json", body.encode("ascii"))


def static(site: Site, name: str, query: dict[str, str]) -> Response:
    """``/static/NAME``: the refresh script, from the template set."""
    found = STATIC.get(name)
    if found is None:
        return not_found(f"no file {name}")

    content_type, file = found
    return Response(HTTPStatus.OK, content_type, (TEMPLATES / file).read_bytes())


def index_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/``: the sessions, newest first."""
    ran = _ran(site)
    sessions = [session_summary(site, session, ran) for session in site.index.ordered()]
    return _render(
        site,
        "index.html.j2",
        poll=None,
        always=True,
        title=site.title,
        sessions=sessions,
        roots=[shown for _, shown in site.index.roots],
        running=site.index.running,
    )


def session_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/session/KEY``: one session, its figures and runs."""

    session = site.index.sessions.get(key)
    if session is None:
        return not_found(f"no session {key}")
    summary = session_summary(site, session)
    wanted = query.get("scenario")
    chosen = [
        record
        for item in summary["stats"]
        if wanted is None or item.label == wanted
        for record in sorted(item.records, key=lambda record: (record.head.run, record.started_at))
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
    return _render(
        site,
        "session.html.j2",
        poll=session if session.running else None,
        title=f"session {session.stamp}",
        s=summary,
        k=site.k,
        rows=rows,
        total=len(chosen),
        pages=_pages(len(chosen), RUNS_PER_PAGE, page, href),
        shown_scenario=wanted,
        all_runs_href=session_href(key) + "#runs",
    )


def run_page(site: Site, run_id: str, query: dict[str, str]) -> Response:
    """``/run/ID``: one run, transcript and judge included."""

    found = site.index.find_run(run_id)
    if found is None:
        return not_found(f"no run {run_id}")
    session, summary = found
    record = site.index.whole(session, summary)
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
        key=lambda item: (item.head.run, item.started_at),
    )
    position = next(i for i, item in enumerate(siblings) if item.id == record.id)
    links = ViewLinks(session)
    variants = {
        item.head.variant for item in session.records if item.head.scenario == record.head.scenario
    }
    return _render(
        site,
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
            links.outputs(record.head.procedure, record.head.scenario)
            if len(variants) > 1
            else None
        ),
    )


def outputs_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/outputs/KEY?scenario=…``: each variant's runs side by side."""

    session = site.index.sessions.get(key)
    wanted = query.get("scenario", "")
    if session is None:
        return not_found(f"no session {key}")
    procedure, _, scenario = wanted.partition("/")
    records = [
        record
        for record in session.records
        if record.head.procedure == procedure and record.head.scenario == scenario
    ]
    if not records:
        return not_found(f"no runs of {wanted} in session {key}")
    page = _page_number(query)
    columns, rows, total = output_columns(
        records,
        lambda record: site.index.whole(session, record),
        ViewLinks(session),
        page=page,
        size=OUTPUT_ROWS,
        compare=lambda a, b: (
            f"/compare?session={quote(key, safe='')}&a={quote(a, safe='')}"
            f"&b={quote(b, safe='')}&scenario={quote(wanted, safe='')}"
        ),
    )
    href = f"/outputs/{quote(key)}?scenario={quote(wanted, safe='')}"
    return _render(
        site,
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


def compare_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/compare``: two sessions, or two variants of one session."""

    if "session" in query:
        session = site.index.sessions.get(query["session"])
        a, b = query.get("a"), query.get("b")
        if session is None or a is None or b is None:
            return not_found("compare two variants: /compare?session=KEY&a=VARIANT&b=VARIANT")
        wanted = query.get("scenario")
        base = _variant_runs(session.records, a, wanted)
        new = _variant_runs(session.records, b, wanted)
        base_session = new_session = session
        labels = (f"variant {a}", f"variant {b}")
        crumbs = [("sessions", "/"), (session.stamp, session_href(session.key))]
    else:
        older = site.index.sessions.get(query.get("base", ""))
        newer = site.index.sessions.get(query.get("new", ""))
        if older is None or newer is None:
            return not_found("compare two sessions: /compare?base=KEY&new=KEY")
        base_session, new_session = older, newer
        base = drop_duplicates(base_session.records)[0]
        new = drop_duplicates(new_session.records)[0]
        labels = (f"session {base_session.stamp}", f"session {new_session.stamp}")
        crumbs = [("sessions", "/")]
    detect = _rate(query.get("detect"))
    comparison = compare(base, new, k=site.k, detect=detect)
    html = render_compare_html(
        comparison,
        title=f"{labels[0]} against {labels[1]}",
        base_label=labels[0],
        new_label=labels[1],
        whole_base=lambda record: site.index.whole(base_session, record),
        whole_new=lambda record: site.index.whole(new_session, record),
        links=ViewLinks(new_session),
        csp=VIEW_CSP,
        crumbs=crumbs,
    )
    return _html(HTTPStatus.OK, html)


def variants_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/variants/KEY``: every pair of a session's variants."""

    session = site.index.sessions.get(key)
    if session is None:
        return not_found(f"no session {key}")
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


def history_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/history``: every scenario across every session of the directories."""

    records = [record for session in site.index.ordered() for record in session.records]
    html = render_history_html(
        history(drop_duplicates(records)[0]),
        title="scenarios across sessions",
        csp=VIEW_CSP,
        crumbs=[("sessions", "/")],
    )
    return _html(HTTPStatus.OK, html)


def ablation_page(site: Site, key: str, query: dict[str, str]) -> Response:
    """``/ablation/KEY``: an ablation session's verdicts per fragment."""

    session = site.index.sessions.get(key)
    if session is None:
        return not_found(f"no session {key}")
    html = render_ablation_html(
        ablation(session.records),
        title=f"session {session.stamp}: ablation",
        csp=VIEW_CSP,
        crumbs=[("sessions", "/"), (session.stamp, session_href(key))],
    )
    return _html(HTTPStatus.OK, html)


def _variant_runs(records: list[RunRecord], variant: str, scenario: str | None) -> list[RunRecord]:
    """A variant's runs (``(none)``/``(default)``: those under none), as unnamed runs, so
    two variants compare scenario by scenario."""

    name = None if variant in (NO_VARIANT, DEFAULT_VARIANT) else variant
    return [
        replace(record, head=replace(record.head, variant=None))
        for record in records
        if record.head.variant == name
        and (scenario is None or f"{record.head.procedure}/{record.head.scenario}" == scenario)
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


#: A page: the site, the rest of the path after the route's prefix, the query.
View = Callable[[Site, str, dict[str, str]], Response]


@dataclass(frozen=True)
class Route:
    """A URL and the page that answers it: ``pattern`` is a path (``/compare``), or a
    prefix and ``{key}`` (``/session/{key}``), whose rest of the path is the page's
    key. ``reads_index``: the page reads the results (the index is brought up to date
    first, and held while the page is made)."""

    pattern: str
    view: View
    reads_index: bool = True

    def match(self, path: str) -> str | None:
        """The key ``path`` gives the page (``""`` for a route without one), or
        ``None`` when the route does not answer it."""
        prefix, keyed, _ = self.pattern.partition("{key}")
        if not keyed:
            return "" if path == prefix else None
        return path.removeprefix(prefix) if path.startswith(prefix) else None


#: Every page of the viewer, matched in order.
ROUTES: tuple[Route, ...] = (
    Route("/", index_page),
    Route("/index.html", index_page),
    Route("/api/version", version),
    Route("/session/{key}", session_page),
    Route("/run/{key}", run_page),
    Route("/outputs/{key}", outputs_page),
    Route("/variants/{key}", variants_page),
    Route("/history", history_page),
    Route("/ablation/{key}", ablation_page),
    Route("/compare", compare_page),
    Route("/static/{key}", static, reads_index=False),
)

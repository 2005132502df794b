"""The HTML renderer: Jinja2 templates (``templates/``, autoescaped, so an agent's
output can never become markup) for ``ooda report --html``, ``ooda compare --html`` and
every page of ``ooda view`` (:mod:`.viewer`) — one template set.

A static page is self-contained: inline CSS and SVG, no script, nothing fetched (a
Content-Security-Policy forbids it). Per scenario it shows the success rate with its
Wilson interval drawn as a bar, a histogram of iterations per run, time, tokens and
cost, how the runs ended, the aggregate expectations and each prompt version fragment by
fragment; with variants, the scenarios × variants matrix. Per run (:mod:`.run_view`) its
verdict first with the reason visible without a click, each iteration as the loop
decided it with the agent's output, tool calls and diffs, the verification commands and
the judge. Filters (verdict, scenario, variant) are radio buttons and CSS. A run's
permalink is ``#procedure/scenario/RUN``, its run number (with the series between when
merged sessions repeat a number).

A report of up to ``RUNS_PER_PAGE`` runs is one file. A larger one pages its runs: the
first file holds the figures and a table with a row (and permalink) per run, and the
runs' details go to ``NAME-2.html``, ``NAME-3.html``, … beside it. Transcripts are
shown up to ``TRANSCRIPT_BUDGET`` characters in all, runs that did not succeed first;
``ooda view`` shows every one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda import __version__
from pytest_ooda.report.pages import geometry, matrix, prompt_versions, scenario_view
from pytest_ooda.report.run_detail import run_view, transcript_size

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    import jinja2

    from pytest_ooda.results import RunRecord
    from pytest_ooda.stats import ScenarioStats

__all__ = [
    "RUNS_PER_PAGE",
    "STATIC_CSP",
    "TRANSCRIPT_BUDGET",
    "ReportPage",
    "render_html",
    "render_page",
    "report_files",
    "report_pages",
    "run_anchors",
]

TEMPLATES = Path(__file__).with_name("templates")
#: What a static page may load: its own inline styles and data: images, nothing else.
STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: Run details per file of a static report.
RUNS_PER_PAGE = 200
#: Characters of transcripts (outputs, tool calls, diffs) one report shows in full;
#: runs that do not fail are the first left out past it.
TRANSCRIPT_BUDGET = 24 * 1024 * 1024
#: Verdicts in the order filters and counts list them.
VERDICT_ORDER = ("success", "failure", "error")


@functools.cache
def environment() -> jinja2.Environment:
    """The one template environment of the process: Jinja2 compiles a template the
    first time an environment loads it and keeps it (checking the file is unchanged),
    so ``ooda view`` renders its thousandth page without compiling again (an environment
    a page compiled every template each time: ~0.3 s a page). Rendering from it is
    thread-safe."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(template: str, *, csp: str = STATIC_CSP, poll: Any = None, **context: Any) -> str:
    """``template`` rendered with what every page needs (``poll``: how a viewer page
    reloads itself while a session runs; ``None`` for a static page)."""
    return (
        environment()
        .get_template(template)
        .render(version=__version__, geometry=geometry(), csp=csp, poll=poll, **context)
    )


def run_anchors(records: Sequence[RunRecord]) -> dict[str, str]:
    """Each run's permalink by id: ``procedure/scenario/RUN`` (the scenario with its
    ``@variant``), or ``procedure/scenario/SERIES/RUN`` when merged sessions repeat a
    run number."""
    counts: dict[tuple[str, int], int] = {}
    for record in records:
        counts[(record.label, record.head.run)] = counts.get((record.label, record.head.run), 0) + 1
    return {
        record.id: (
            f"{record.label}/{record.head.run}"
            if counts[(record.label, record.head.run)] == 1
            else f"{record.label}/{record.series or record.session or record.id}/{record.head.run}"
        )
        for record in records
    }


@dataclass(frozen=True)
class ReportPage:
    """One file of a static report: its name and its HTML."""

    name: str
    html: str


class _StaticLinks:
    """Links inside a static report: run permalinks on the page holding the details."""

    def __init__(self, anchors: dict[str, str], pages: dict[str, str], here: str) -> None:
        self.anchors = anchors
        self.pages = pages
        self.here = here

    def run(self, record: RunRecord) -> str:
        page = self.pages.get(record.id, self.here)
        return f"{'' if page == self.here else page}#{self.anchors[record.id]}"

    def cell(self, stats: ScenarioStats) -> str | None:
        return None

    def outputs(self, procedure: str, scenario: str) -> str | None:
        return None


def _full_transcripts(
    records: Sequence[RunRecord], budget: int, size: Callable[[RunRecord], int]
) -> set[str]:
    """The ids of the runs whose transcripts fit the report's budget: runs that did not
    succeed first (they are what people open the report for), then in order."""
    ordered = sorted(range(len(records)), key=lambda i: (records[i].outcome == "success", i))
    chosen: set[str] = set()
    spent = 0
    for i in ordered:
        cost = size(records[i])
        if spent + cost > budget:
            continue
        spent += cost
        chosen.add(records[i].id)
    return chosen


def report_pages(
    stats: Sequence[ScenarioStats],
    *,
    k: int,
    title: str,
    name: str = "report.html",
    sources: Sequence[str] = (),
    generated: str = "",
    notes: Sequence[dict[str, str]] = (),
    ablations: Sequence[dict[str, Any]] = (),
    whole: Callable[[RunRecord], RunRecord] | None = None,
    size: Callable[[RunRecord], int] = transcript_size,
    transcript_budget: int = TRANSCRIPT_BUDGET,
    runs_per_page: int = RUNS_PER_PAGE,
) -> Iterator[ReportPage]:
    """The report's files, one at a time (a page is written before the next is
    rendered): ``name`` first, then its run pages when it has more runs than one page
    holds (:func:`report_files` names them all). ``whole`` reads a run's whole record
    when ``stats`` hold summaries (``read_results(..., summary=True)``); ``size`` is what
    a run's transcript costs the budget; ``notes`` are incomplete measurements
    (``text``, ``command``); ``ablations`` the ablations among the runs
    (``render_ablation.ablation_view``), shown under the summary."""
    load = whole or (lambda record: record)
    records = [record for item in stats for record in item.records]
    anchors = run_anchors(records)
    full = _full_transcripts(records, transcript_budget, size)
    inline = len(records) <= runs_per_page
    chunks, files, page_of = _paging(records, name, runs_per_page)
    names = sorted({record.head.variant for record in records if record.head.variant})
    variants = {variant: index for index, variant in enumerate(names, start=1)}
    links = _StaticLinks(anchors, page_of, name)
    views = []
    prompt_hrefs: dict[tuple[str, str], str] = {}
    for index, item in enumerate(stats, start=1):
        view = scenario_view(item, index, links)
        if inline:
            loaded = [load(record) for record in item.records]
        else:
            # One run per prompt version is read whole for its composed prompt.
            firsts: dict[str, RunRecord] = {}
            for record in item.records:
                firsts.setdefault(record.prompt_sha256 or "", record)
            loaded = [load(record) for record in firsts.values()]
        prompts = prompt_versions(loaded, index)
        view["prompts"] = list(prompts.values())
        for sha, prompt in prompts.items():
            prompt_hrefs[(item.label, sha)] = f"{'' if inline else name}#{prompt['anchor']}"
        if inline:
            view["runs"] = [
                _details(record, anchors, full, prompt_hrefs, variants) for record in loaded
            ]
        else:
            view["runs"] = [_row(record, anchors, links) for record in item.records]
        views.append(view)
    listed = [
        {"number": number, "label": f"runs {number - 1}", "href": file}
        for number, file in enumerate(files[1:], start=2)
    ]
    left_out = sum(1 for record in records if record.id not in full and size(record) > 0)
    first = render_page(
        "report.html.j2",
        verdict_order=VERDICT_ORDER,
        variants=list(variants.items()),
        left_out=left_out,
        transcript_budget_mib=transcript_budget // (1024 * 1024),
        title=title,
        k=k,
        generated=generated,
        sources=list(sources),
        runs=len(records),
        scenarios=views,
        matrix=matrix(stats, links),
        inline=inline,
        pages=listed,
        interrupted=list(notes),
        ablations=list(ablations),
    )
    yield ReportPage(name, first)
    for number, chunk in enumerate(chunks[1:] if inline else chunks, start=2):
        runs = []
        for record in chunk:
            runs.append(_details(load(record), anchors, full, prompt_hrefs, variants))
        html = render_page(
            "report_runs.html.j2",
            title=title,
            home=name,
            page=number,
            pages=listed,
            runs=runs,
        )
        yield ReportPage(files[number - 1], html)


def report_files(
    stats: Sequence[ScenarioStats], name: str, *, runs_per_page: int = RUNS_PER_PAGE
) -> list[str]:
    """The names of the files :func:`report_pages` writes for ``stats``."""
    records = [record for item in stats for record in item.records]
    return _paging(records, name, runs_per_page)[1]


def _paging(
    records: Sequence[RunRecord], name: str, size: int
) -> tuple[list[Sequence[RunRecord]], list[str], dict[str, str]]:
    """The runs in pages of ``size``, each page's file (the report's own first: all of
    them when they fit it), and the file holding each run's details."""
    if len(records) <= size:
        return [records], [name], dict.fromkeys((record.id for record in records), name)
    stem = name.removesuffix(".html")
    chunks = [records[start : start + size] for start in range(0, len(records), size)]
    files = [name, *(f"{stem}-{number}.html" for number in range(2, len(chunks) + 2))]
    page_of = {
        record.id: files[number] for number, chunk in enumerate(chunks, start=1) for record in chunk
    }
    return chunks, files, page_of


def _details(
    record: RunRecord,
    anchors: dict[str, str],
    full: set[str],
    prompt_hrefs: dict[tuple[str, str], str],
    variants: dict[str, int],
) -> dict[str, Any]:
    return {
        **run_view(
            record,
            anchor=anchors[record.id],
            full=record.id in full,
            prompt_anchor=prompt_hrefs.get((record.label, record.prompt_sha256 or "")),
        ),
        "variant_index": variants.get(record.head.variant or "", 0),
        "left_out": None,
    }


def _row(record: RunRecord, anchors: dict[str, str], links: _StaticLinks) -> dict[str, Any]:
    from pytest_ooda.report.render_text import money, seconds
    from pytest_ooda.report.run_detail import reason

    return {
        "record": record,
        "anchor": anchors[record.id],
        "href": links.run(record),
        "verdict": record.outcome,
        "reason": reason(record),
        "time": seconds(record.elapsed_s),
        "cost": money(record.cost),
    }


def render_html(
    stats: Sequence[ScenarioStats],
    *,
    k: int,
    title: str,
    sources: Sequence[str] = (),
    generated: str = "",
    transcript_budget: int = TRANSCRIPT_BUDGET,
) -> str:
    """The report's first file (the whole report when it fits one page)."""
    pages = report_pages(
        stats,
        k=k,
        title=title,
        sources=sources,
        generated=generated,
        transcript_budget=transcript_budget,
    )
    return next(pages).html

"""Render-time benchmark of pytest_ooda.gotemplate.

Measures, in one run:
  (a) our engine against the same content written as native Jinja2 templates (plain
      ``jinja2.Environment`` and ``SandboxedEnvironment``) on representative fragments;
  (b) our engine against Go 1.19's text/template (the oracle's own per-render median) on
      the same fragments and on every successful case of the conformance corpus.
Goal: at most 1.5x native Jinja2.

Usage: python benchmarks/bench_gotemplate.py [--reps N] [--no-go]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "gotemplate-oracle"))

from quick import parse  # noqa: E402

from pytest_ooda.gotemplate import render  # noqa: E402
from pytest_ooda.gotemplate.yamlv3 import load_params  # noqa: E402

PARAMS = """\
issue: 1234
repo: example/widgets
branch: feature/ooda-loop
author: Ada
tests: pytest -q
strict: true
retries: 3
ratio: 0.75
files: [src/a.py, src/b.py, src/c.py, tests/test_a.py, tests/test_b.py, docs/index.md,
        README.md, pyproject.toml, src/d.py, src/e.py]
labels: {bug: 3, docs: 1, enhancement: 7, triage: 2}
owner: {name: Grace, team: {name: compilers, lead: Barbara}}
empty: []
"""

PROSE = (
    "## Observe\n\nRead the repository's AGENTS.md and the open issues. Summarise what\n"
    "changed since the last iteration and which tests fail. Keep notes short.\n\n"
) * 6

# (name, Go template, equivalent hand-written Jinja2 template)
CASES: list[tuple[str, str, str]] = [
    ("prose", PROSE, PROSE),
    (
        "substitutions",
        "Issue {{.issue}} in {{.repo}} on {{.branch}} by {{.author}}; run {{.tests}}; "
        "retries {{.retries}}, ratio {{.ratio}}, strict {{.strict}}.\n",
        "Issue {{ issue }} in {{ repo }} on {{ branch }} by {{ author }}; run {{ tests }}; "
        "retries {{ retries }}, ratio {{ ratio }}, strict {{ strict|lower }}.\n",
    ),
    (
        "conditionals",
        "{{if .strict}}Strict mode: fail on warnings.{{else}}Lenient.{{end}}\n"
        "{{if .empty}}has items{{else if .files}}{{len .files}} files{{end}}\n",
        "{% if strict %}Strict mode: fail on warnings.{% else %}Lenient.{% endif %}\n"
        "{% if empty %}has items{% elif files %}{{ files|length }} files{% endif %}\n",
    ),
    (
        "range-list",
        "{{range $i, $f := .files}}{{$i}}. {{$f}}\n{{end}}",
        "{% for f in files %}{{ loop.index0 }}. {{ f }}\n{% endfor %}",
    ),
    (
        "range-map",
        "{{range $k, $v := .labels}}- {{$k}}: {{$v}}\n{{end}}",
        "{% for k, v in labels|dictsort %}- {{ k }}: {{ v }}\n{% endfor %}",
    ),
    (
        "nested-fields",
        "{{.owner.name}} leads {{.owner.team.name}} with {{.owner.team.lead}}.\n",
        "{{ owner.name }} leads {{ owner.team.name }} with {{ owner.team.lead }}.\n",
    ),
    (
        "printf",
        '{{printf "%-20s|%5d|%.2f" .repo .issue .ratio}}\n',
        '{{ "%-20s|%5d|%.2f"|format(repo, issue, ratio) }}\n',
    ),
    (
        "with",
        "{{with .owner}}Owner {{.name}} ({{.team.name}}){{else}}nobody{{end}}\n",
        "{% with o = owner %}{% if o %}Owner {{ o.name }} ({{ o.team.name }})"
        "{% else %}nobody{% endif %}{% endwith %}\n",
    ),
    (
        "define-template",
        '{{define "item"}}* {{.}}\n{{end}}{{range .files}}{{template "item" .}}{{end}}',
        "{% macro item(x) %}* {{ x }}\n{% endmacro %}{% for f in files %}{{ item(f) }}{% endfor %}",
    ),
    (
        "fragment",
        PROSE[:200]
        + "\nIssue: {{.issue}} ({{.repo}})\n{{if .strict -}}\nTreat warnings as errors.\n"
        "{{- end}}\nFiles to inspect:\n{{range .files}}  - {{.}}\n{{end}}"
        "{{with .owner}}Escalate to {{.name}}.{{end}}\n" + PROSE[:300],
        PROSE[:200]
        + "\nIssue: {{ issue }} ({{ repo }})\n{% if strict -%}\nTreat warnings as errors.\n"
        "{%- endif %}\nFiles to inspect:\n{% for f in files %}  - {{ f }}\n{% endfor %}"
        "{% if owner %}Escalate to {{ owner.name }}.{% endif %}\n" + PROSE[:300],
    ),
]


def per_render_ns(fn: Any, reps: int) -> float:
    """Median over 7 rounds of the mean time of one call (nanoseconds)."""
    return interleaved([fn], reps)[0]


def interleaved(fns: list[Any], reps: int, rounds: int = 9) -> list[float]:
    """Per-call medians of several functions timed in alternating rounds, so that load
    from other processes affects each of them alike (nanoseconds)."""
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter_ns()
            for _ in range(reps):
                fn()
            samples[i].append((time.perf_counter_ns() - start) / reps)
    return [statistics.median(s) for s in samples]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--no-go", action="store_true")
    opts = parse(ap, reps=3, no_go=True)

    params = load_params(PARAMS)
    plain = jinja2.Environment(autoescape=False, keep_trailing_newline=True)
    sandbox = SandboxedEnvironment(autoescape=False, keep_trailing_newline=True)

    go_ns: dict[str, float] = {}
    corpus_go: dict[str, float] = {}
    corpus: list[dict[str, Any]] = []
    import oracle

    have_go = oracle.go_available() and not opts.no_go
    goldens = json.loads((ROOT / "tests/conformance/goldens.json").read_text(encoding="utf-8"))
    corpus = [c for c in goldens if c["kind"] == "ok"][: 20 if opts.quick else None]
    if have_go:
        bench_cases = [{"id": n, "template": g, "params": PARAMS} for n, g, _ in CASES]
        for res in oracle.run(bench_cases, bench=2000):
            go_ns[res["id"]] = float(res["median_ns"])
        cases = [{"id": c["id"], "template": c["template"], "params": c["params"]} for c in corpus]
        for res in oracle.run(cases, bench=200):
            if res.get("median_ns"):
                corpus_go[res["id"]] = float(res["median_ns"])

    print(
        f"{'case':<16} {'ours µs':>9} {'jinja µs':>9} {'sandbox µs':>10} "
        f"{'x jinja':>8} {'x sandbox':>9} {'go µs':>7} {'x go':>6}"
    )
    r_plain, r_sandbox, r_go = [], [], []
    for name, go_src, jinja_src in CASES:
        expected = plain.from_string(jinja_src).render(params)
        got = render(go_src, params)
        if got != expected:
            print(f"{name}: outputs differ:\n{got!r}\n{expected!r}")
            return 1
        tp = plain.from_string(jinja_src)
        ts = sandbox.from_string(jinja_src)
        t_ours, t_plain, t_sandbox = interleaved(
            [
                lambda s=go_src: render(s, params),
                lambda t=tp: t.render(params),
                lambda t=ts: t.render(params),
            ],
            opts.reps,
        )
        r_plain.append(t_ours / t_plain)
        r_sandbox.append(t_ours / t_sandbox)
        go = go_ns.get(name)
        if go:
            r_go.append(t_ours / go)
        print(
            f"{name:<16} {t_ours / 1e3:9.2f} {t_plain / 1e3:9.2f} {t_sandbox / 1e3:10.2f} "
            f"{t_ours / t_plain:8.2f} {t_ours / t_sandbox:9.2f} "
            + (f"{go / 1e3:7.2f} {t_ours / go:6.1f}" if go else "")
        )
    print(f"\ngeometric mean ratio vs native Jinja2 (Environment):        {geomean(r_plain):.2f}x")
    print(
        f"geometric mean ratio vs native Jinja2 (SandboxedEnvironment): {geomean(r_sandbox):.2f}x"
    )
    if r_go:
        print(f"geometric mean ratio vs Go text/template:                     {geomean(r_go):.1f}x")

    ours = []
    for case in corpus:
        p = load_params(case["params"]) or {}
        t = per_render_ns(lambda c=case, p=p: render(c["template"], p), max(opts.reps // 10, 20))
        ours.append((case["id"], t))
    med_ours = statistics.median(t for _, t in ours)
    print(f"\ncorpus: {len(ours)} successful cases, median render {med_ours / 1e3:.2f} µs (ours)")
    if corpus_go:
        ratios = [t / corpus_go[i] for i, t in ours if i in corpus_go]
        med_go = statistics.median(corpus_go.values())
        print(
            f"corpus: median render {med_go / 1e3:.2f} µs (Go); "
            f"median per-case ratio {statistics.median(ratios):.1f}x, "
            f"geomean {geomean(ratios):.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

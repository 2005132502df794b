"""What a live run loads, in a fresh interpreter: importing ``pytest_ooda.live``, and a
plan run on a worker (``executors.run_attempt``, the real loop and a real agent
subprocess), load the results layer alone of ``results ─> stats ─> report ─> view``:
neither the renderers nor the viewer, nor Jinja2 (whose only other user, the prompt
template engine, is not asked for a procedure written in plain text). The import graph's
own rule is ``tests/unit/test_import_graph.py``'s; this is what actually runs."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: What a run must not load.
ABOVE_RESULTS = ("pytest_ooda.stats", "pytest_ooda.report", "pytest_ooda.view", "jinja2")

REPORT = f"""
import json, sys
prefixes = {ABOVE_RESULTS!r}
print(json.dumps(sorted(m for m in sys.modules if m.startswith(prefixes))))
"""

WORKER = """
import contextlib, os, sys
from pathlib import Path

root = Path(sys.argv[1])
(root / "prompts").mkdir(parents=True)
(root / "scenarios/greet/ws").mkdir(parents=True)
(root / "ooda-config.yml").write_text(
    "procedures:\\n  greet:\\n    observe:\\n      - path: prompts/observe.md\\n"
    "    orient:\\n      - content: Orient.\\n    decide:\\n      - content: Decide.\\n"
    "    act:\\n      - content: 'Say hello, then <promise>SUCCESS</promise>.'\\n"
)
(root / "prompts/observe.md").write_text("Look around.\\n")
(root / "agent.py").write_text(
    "import sys\\nsys.stdin.read()\\nopen('hello.txt', 'w').write('hi')\\n"
    "print('hello <promise>SUCCESS</promise>')\\n"
)
(root / "scenarios/greet/ws/README").write_text("the workspace\\n")
(root / "scenarios/greet/s.yml").write_text(
    "procedure: greet\\nmax_iterations: 1\\nworkspace: ws\\n"
    "expect:\\n  files: {hello.txt: {exists: true}}\\niterations: []\\n"
)

from pytest_ooda.executors import Ran, job_for, pack_source, run_attempt
from pytest_ooda.live import plan_run
from pytest_ooda.scenario import load_for
from pytest_ooda.settings import session_settings


class Ledger:
    def begin(self, ticket, where):
        return None

    @contextlib.contextmanager
    def hold(self, agent, limit, ticket):
        yield 0.0

    def where(self):
        return "here"


session = session_settings(root, ai_cmd=f"{sys.executable} {root / 'agent.py'}")
scenario = load_for("greet", root / "scenarios/greet/s.yml")
plan = plan_run(session, "greet", scenario, collected=root / "ooda-config.yml")
answer = run_attempt("t", job_for(plan), pack_source(root), Ledger())
assert isinstance(answer, Ran), answer
assert answer.value.record.outcome == "success", answer.value.record
"""


def _loaded(code: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_importing_live_loads_no_layer_above_results() -> None:
    assert _loaded("import pytest_ooda.live, pytest_ooda.results\n") == []


def test_a_plan_run_on_a_worker_loads_no_layer_above_results(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "OODA_CACHE_DIR": str(tmp_path / "cache")}
    assert _loaded(WORKER, str(tmp_path / "project"), env=env) == []


def test_the_check_sees_the_layers_a_viewer_loads() -> None:
    # The other side: the same check names the layers the viewer does load (and not
    # Jinja2, which a page imports when it is rendered).
    loaded = _loaded("import pytest_ooda.view\n")
    assert {"pytest_ooda.stats", "pytest_ooda.report", "pytest_ooda.view"} <= set(loaded)
    assert "jinja2" not in loaded

#!/usr/bin/env python3
"""The pytest-ooda GitHub Action's script (``action.yml`` runs it; standard library
only, beside the installed ``ooda`` and ``pytest``).

- ``sessions``: which scenarios the pull request touched (``ooda changed BASE``); when
  any, a live session of them on the pull request's head (``pytest -m live
  --ooda-changed=BASE``) and one on its base, in a git worktree of the base commit
  (``--ooda-changed=HEAD``: the same scenarios, from the other side); then the comment's
  Markdown and the HTML report (``ooda report --pr``), each scenario's history read from
  the base session and the earlier results ``--history`` names (globs, one a line; kept
  in ``history.json`` for the comment step). Step outputs: ``touched``, ``regressed``,
  ``report``, ``comment``.
- ``comment``: the Markdown again with the report's link, posted as ONE comment on the
  pull request: the comment this action posted before (found by its hidden marker) is
  edited, else a new one is made. Step output: ``comment-url``.

The GitHub REST API is reached at ``$GITHUB_API_URL`` with ``$GITHUB_TOKEN``; the pull
request is the event's (``$GITHUB_EVENT_PATH``), the repository ``$GITHUB_REPOSITORY``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

#: The comment's first line: how this action finds its own comment again (the same
#: string ``ooda report --pr`` starts the Markdown with).
MARKER = "<!-- pytest-ooda:pr-comment -->"
#: The ``ooda`` command of the Python running this script (where pytest-ooda is).
OODA = [sys.executable, "-m", "pytest_ooda"]
#: ``ooda report --pr``'s exit code when a scenario regressed significantly.
REGRESSED = 1


def say(text: str) -> None:
    print(f"ooda-action: {text}", file=sys.stderr, flush=True)


def output(name: str, value: str) -> None:
    """A step output (``$GITHUB_OUTPUT``), and a line in the log."""
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"{name}={value}\n")
    say(f"{name}={value}")


def run(argv: list[str], *, cwd: Path, ok: tuple[int, ...] = (0,)) -> int:
    """Run ``argv`` in ``cwd``, its output to the log; a code outside ``ok`` ends the
    step with it."""
    say("$ " + shlex.join(argv) + f"   (in {cwd})")
    code = subprocess.run(argv, cwd=cwd, check=False).returncode
    if code not in ok:
        say(f"exit code {code}")
        sys.exit(code or 1)
    return code


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def history_paths(given: str, *, cwd: Path) -> list[str]:
    """The earlier results ``given`` names (globs, one a line or space-separated,
    relative to ``cwd``); one that matches nothing is said and left out (a first run has
    no history yet)."""
    found: list[str] = []
    for pattern in shlex.split(given or ""):
        matched = sorted(glob.glob(pattern, root_dir=cwd, recursive=True))
        if not matched:
            say(f"history: nothing at {pattern} (the history is the base session alone)")
        found += [str((cwd / path).resolve()) for path in matched]
    return found


def sessions(args: argparse.Namespace) -> int:
    here = Path.cwd()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    history = history_paths(args.history, cwd=here)
    (out / "history.json").write_text(json.dumps(history), encoding="utf-8")
    base = git("rev-parse", "--verify", f"{args.base}^{{commit}}", cwd=here)
    head = git("rev-parse", "HEAD", cwd=here)
    changed = subprocess.run(
        [*OODA, "changed", base, "--format", "json"],
        cwd=here,
        capture_output=True,
        text=True,
        check=False,
    )
    if changed.returncode != 0:
        say(changed.stderr.strip())
        return changed.returncode
    (out / "changed.json").write_text(changed.stdout, encoding="utf-8")
    touched = [item for item in json.loads(changed.stdout)["scenarios"] if item["touched"]]
    output("touched", str(len(touched)))
    for item in touched:
        say(f"touched: {item['label']}: {'; '.join(item['reasons'])}")
    extra = shlex.split(args.pytest_args or "")
    if args.budget:
        extra.append(f"--ooda-budget={args.budget}")
    live = [sys.executable, "-m", "pytest", "-m", "live", "-p", "no:cacheprovider", *extra]
    # A live session exits 1 when a run failed or a gate missed: that is what is measured.
    if touched:
        run([*live, f"--ooda-changed={base}", f"--ooda-results={out / 'new'}"], cwd=here, ok=(0, 1))
        tree = out / "base-tree"
        run(["git", "worktree", "add", "--detach", str(tree), base], cwd=here)
        try:
            run(
                [*live, f"--ooda-changed={head}", f"--ooda-results={out / 'base'}"],
                cwd=tree,
                ok=(0, 1),
            )
        finally:
            run(["git", "worktree", "remove", "--force", str(tree)], cwd=here)
    for side in ("base", "new"):
        (out / side).mkdir(exist_ok=True)
    code = report(out, url=None)
    output("report", str(out / "report.html"))
    output("comment", str(out / "comment.md"))
    output("regressed", "true" if code == REGRESSED else "false")
    return 0


def report(out: Path, *, url: str | None) -> int:
    """``ooda report --pr`` over the two sides, with the history ``sessions`` found: the
    comment's Markdown (and the HTML report); its exit code (1: a scenario regressed)."""
    argv = [*OODA, "report", "--pr", str(out / "base"), str(out / "new")]
    argv += ["--output", str(out / "comment.md"), "--html", str(out / "report.html")]
    if (out / "changed.json").exists():
        # The selection: the comment names why each scenario was touched, counts the
        # untouched ones, and says so when none was (the two sides are then empty).
        argv += ["--changed", str(out / "changed.json")]
    kept = out / "history.json"
    for path in json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else ():
        argv += ["--history", str(path)]
    if url:
        argv += ["--report-url", url]
    return run(argv, cwd=Path.cwd(), ok=(0, REGRESSED))


class GitHub:
    """The few REST calls the comment needs."""

    def __init__(self, api: str, repository: str, token: str) -> None:
        self.api = api.rstrip("/")
        self.repository = repository
        self.token = token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(
            f"{self.api}{path}",
            data=data,
            method=method,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
                "User-Agent": "pytest-ooda-action",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")[:500]
            raise SystemExit(f"ooda-action: {method} {path}: HTTP {error.code}: {detail}") from None

    def own_comment(self, number: int) -> dict[str, Any] | None:
        """The comment on pull request ``number`` that starts with the marker."""
        page = 1
        while True:
            found = self.call(
                "GET",
                f"/repos/{self.repository}/issues/{number}/comments?per_page=100&page={page}",
            )
            for comment in found:
                if str(comment.get("body") or "").startswith(MARKER):
                    return dict(comment)
            if len(found) < 100:
                return None
            page += 1


def pull_request_number() -> int:
    event = json.loads(Path(os.environ["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    number = (event.get("pull_request") or {}).get("number") or event.get("number")
    if not isinstance(number, int):
        raise SystemExit("ooda-action: this event is no pull request (no pull_request.number)")
    return number


def comment(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve()
    if args.report_url:
        report(out, url=args.report_url)
    body = (out / "comment.md").read_text(encoding="utf-8")
    if not body.startswith(MARKER):
        body = f"{MARKER}\n{body}"
    github = GitHub(
        os.environ.get("GITHUB_API_URL", "https://api.github.com"),
        os.environ["GITHUB_REPOSITORY"],
        os.environ["GITHUB_TOKEN"],
    )
    number = pull_request_number()
    existing = github.own_comment(number)
    if existing is None:
        made = github.call(
            "POST", f"/repos/{github.repository}/issues/{number}/comments", {"body": body}
        )
        say(f"commented on pull request #{number}")
    else:
        made = github.call(
            "PATCH",
            f"/repos/{github.repository}/issues/comments/{existing['id']}",
            {"body": body},
        )
        say(f"updated the comment on pull request #{number}")
    output("comment-url", str(made.get("html_url") or ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ooda_pr.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("sessions", help="run the touched scenarios on both sides")
    first.add_argument("--base", required=True, help="the pull request's base revision")
    first.add_argument("--out", required=True, help="where the results and reports go")
    first.add_argument("--pytest-args", default="", help="more pytest arguments, one string")
    first.add_argument("--budget", default="", help="each session's budget in US dollars")
    first.add_argument("--history", default="", help="earlier results for the history (globs)")
    first.set_defaults(func=sessions)
    second = commands.add_parser("comment", help="post or update the one comment")
    second.add_argument("--out", required=True, help="where `sessions` wrote")
    second.add_argument("--report-url", default="", help="the uploaded HTML report")
    second.set_defaults(func=comment)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

"""``ooda help [TOPIC]``: the documentation shipped with the package, so a message can
say ``ooda help agents`` to a user who installed a wheel and has no ``docs/`` folder.

The topics are the pages of ``docs/`` a user needs (not the contributors' map of the
source, ``architecture``), and ``quickstart``: the README's quick start. A link to
another page is printed as the ``ooda help`` command that shows it, since the reader
has the command, not the files; a passage between ``<!-- repository only -->`` and
``<!-- end repository only -->`` (how the project itself tests a feature, which names
files of its repository) is left out."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK, write_prompt
from pytest_ooda.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def docs_dir() -> Path:
    """The ``docs/`` folder: the checkout's, or the copy inside the wheel."""
    from pytest_ooda.fragments import builtin_root

    return builtin_root() / "docs"


#: Pages written for people changing pytest-ooda itself: they name the repository's
#: own files (its tests, tools, CI script), which an installed package does not have.
CONTRIBUTOR_PAGES = frozenset({"architecture"})

QUICKSTART = "quickstart"
_QUICKSTART_HEADING = "## Quick start in your own repository"


def topics() -> dict[str, Path]:
    """Every topic by name: the user's documentation pages (file name without ``.md``)
    and ``quickstart``, read from the README."""
    folder = docs_dir()
    if not folder.is_dir():
        return {}
    pages = {
        path.stem: path
        for path in sorted(folder.glob("*.md"))
        if path.stem not in CONTRIBUTOR_PAGES
    }
    readme = folder.parent / "README.md"
    if readme.is_file():
        pages[QUICKSTART] = readme
    return dict(sorted(pages.items()))


def topic_text(name: str, path: Path) -> str:
    """What ``ooda help NAME`` prints: the page, links to other pages as commands."""
    text = path.read_text(encoding="utf-8")
    if name == QUICKSTART:
        text = _quickstart(text)
    return _PAGE_LINK.sub(_as_command, _REPOSITORY_ONLY.sub("", text))


def _quickstart(readme: str) -> str:
    """The README's quick-start section, as a page of its own."""
    start = readme.find(_QUICKSTART_HEADING)
    if start < 0:
        return readme
    body = readme[start + len(_QUICKSTART_HEADING) :]
    end = body.find("\n## ")
    body = body if end < 0 else body[: end + 1]
    return "# Quick start" + body


# A passage for readers of the repository, with the blank line after it.
_REPOSITORY_ONLY = re.compile(
    r"<!-- repository only -->.*?<!-- end repository only -->(?:\n\n?)?", re.DOTALL
)

# `[text](page.md#anchor)`, or from the README with the folder: a link to a documentation
# page (the folder is written as any one word, so this line names no path).
_PAGE_LINK = re.compile(r"\[([^\]\n]+)\]\((?:\w+/)?([a-z0-9-]+)\.md(?:#[^)\s]*)?\)")


def _as_command(match: re.Match[str]) -> str:
    text, page = match.group(1), match.group(2)
    command = f"`ooda help {page}`"
    if text.strip("`").rpartition("/")[2] == page + ".md":  # the link's text is the file
        return command
    return f"{text} ({command})"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "help",
        help="print a documentation page (ooda help agents)",
        description="Print one of the documentation pages shipped with pytest-ooda; "
        "without a topic, list them.",
    )
    parser.add_argument("topic", nargs="?", help="the page, e.g. agents, evaluating, loop")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    pages = topics()
    if args.topic is None:
        print("topics (ooda help TOPIC):")
        for name, path in pages.items():
            title = topic_text(name, path).partition("\n")[0].lstrip("# ").strip()
            print(f"  {name:<18} {title}")
        return EXIT_OK
    page = pages.get(args.topic)
    if page is None:
        from pytest_ooda._util import did_you_mean

        raise UsageError(
            f"no help topic {args.topic!r}",
            hint=did_you_mean(args.topic, pages, label="topics") or None,
        )
    write_prompt(topic_text(args.topic, page))
    return EXIT_OK

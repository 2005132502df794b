"""``ooda help [TOPIC]``: the documentation shipped with the package, so a message can
say ``ooda help agents`` to a user who installed a wheel and has no ``docs/`` folder."""

from __future__ import annotations

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


def topics() -> dict[str, Path]:
    """Every documentation page by topic name (its file name without ``.md``)."""
    folder = docs_dir()
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.md"))}


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
            title = path.read_text(encoding="utf-8").partition("\n")[0].lstrip("# ").strip()
            print(f"  {name:<18} {title}")
        return EXIT_OK
    page = pages.get(args.topic)
    if page is None:
        from pytest_ooda._util import did_you_mean

        raise UsageError(
            f"no help topic {args.topic!r}",
            hint=did_you_mean(args.topic, pages, label="topics") or None,
        )
    write_prompt(page.read_text(encoding="utf-8"))
    return EXIT_OK

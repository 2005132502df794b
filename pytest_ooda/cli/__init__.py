"""The ``ooda`` command: :func:`main` is the console script and ``python -m pytest_ooda``.

:mod:`.app` builds the parser from ``COMMANDS``; each subcommand is one module
(``init``, ``list``, ``show``, ``run``, ``lint``, ``report``, ``compare``, ``judge``,
``help``) with ``add_parser(subparsers)`` and ``command(args)``, imported when named.
"""

from __future__ import annotations

from pytest_ooda.cli.app import COMMANDS, build_parser, main

__all__ = [
    "COMMANDS",
    "build_parser",
    "main",
]

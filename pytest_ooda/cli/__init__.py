"""The ``ooda`` command; see :mod:`.app`. The console script is
``pytest_ooda._entry:main``, which answers a repeated ``show``/``list`` from the result
cache before it calls :func:`main`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.cli.app import COMMANDS as COMMANDS, build_parser as build_parser, main as main
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

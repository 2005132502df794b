"""``ooda view``: the sessions of results directories, read as they grow, served as
pages over HTTP.

:mod:`.index` (:class:`ResultsIndex`: the sessions of results directories, running
told from ended by the log's ``flock``, incomplete measurements and their
``--ooda-resume`` command), :mod:`.routes` (one view function a page and the route
table of their URLs), :mod:`.access` (who may read the pages: the Host header, the
token off loopback) and :mod:`.server` (:class:`Viewer`, which matches a request to its
route, and :func:`make_server`, the ``http.server`` it runs in, on a bounded pool of
threads).

The top of the reading side (``results ─> stats ─> report ─> view``): it renders with
``report/``'s templates and nothing below imports it.
"""

from __future__ import annotations

from pytest_ooda.view.access import Access, exposure_warning, is_loopback
from pytest_ooda.view.index import ResultsIndex, unfinished
from pytest_ooda.view.server import Viewer, make_server

__all__ = [
    "Access",
    "ResultsIndex",
    "Viewer",
    "exposure_warning",
    "is_loopback",
    "make_server",
    "unfinished",
]

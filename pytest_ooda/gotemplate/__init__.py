"""Go ``text/template`` for fragments: parse, compile to sandboxed Jinja2, render like Go 1.19.

The contract: :func:`render` and :func:`check` (in :mod:`.engine`) run a template as Go
would; :func:`referenced_params`, :func:`first_use_line`, :func:`uses_whole_dot`,
:func:`branches` and :func:`statement_lines` (in :mod:`.analysis`) answer questions
about it from its parse trees; a :class:`RenderTrace` records which lines produced
output and which :class:`Branch` arms ran (for fragment coverage). The Go ports behind
them: :mod:`.lexer`, :mod:`.parser`, :mod:`.compiler`, :mod:`.runtime`, :mod:`.gofmt`.
"""

from __future__ import annotations

from pytest_ooda.gotemplate.analysis import (
    NO_VALUE,
    NoValue,
    branches,
    first_use_line,
    no_value_reads,
    referenced_params,
    statement_lines,
    uses_whole_dot,
)
from pytest_ooda.gotemplate.budget import Limits, default_limits
from pytest_ooda.gotemplate.engine import (
    Branch,
    RenderTrace,
    check,
    render,
)
from pytest_ooda.gotemplate.gofmt import GoKey
from pytest_ooda.gotemplate.yamlv3 import resolve_plain

__all__ = [
    "NO_VALUE",
    "Branch",
    "GoKey",
    "Limits",
    "NoValue",
    "RenderTrace",
    "branches",
    "check",
    "default_limits",
    "first_use_line",
    "no_value_reads",
    "referenced_params",
    "render",
    "resolve_plain",
    "statement_lines",
    "uses_whole_dot",
]

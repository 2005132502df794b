"""Go ``text/template`` for fragments: parse, compile to sandboxed Jinja2, render like Go 1.19.

The contract: :func:`render` and :func:`check` (in :mod:`.engine`) run a template as Go
would; :func:`referenced_params`, :func:`first_use_line`, :func:`uses_whole_dot`,
:func:`branches` and :func:`statement_lines` (in :mod:`.analysis`) answer questions
about it from its parse trees; a :class:`RenderTrace` records which lines produced
output and which :class:`Branch` arms ran (for fragment coverage). The Go ports behind
them: :mod:`.lexer`, :mod:`.parser`, :mod:`.compiler`, :mod:`.runtime`, :mod:`.gofmt`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.gotemplate.analysis import (
        NO_VALUE as NO_VALUE,
        NoValue as NoValue,
        branches as branches,
        first_use_line as first_use_line,
        no_value_reads as no_value_reads,
        referenced_params as referenced_params,
        statement_lines as statement_lines,
        uses_whole_dot as uses_whole_dot,
    )
    from pytest_ooda.gotemplate.budget import Limits as Limits, default_limits as default_limits
    from pytest_ooda.gotemplate.engine import (
        Branch as Branch,
        RenderTrace as RenderTrace,
        check as check,
        render as render,
    )
    from pytest_ooda.gotemplate.gofmt import GoKey as GoKey
    from pytest_ooda.gotemplate.yamlv3 import resolve_plain as resolve_plain
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

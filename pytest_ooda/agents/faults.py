"""What an agent's failure MEANS, as a :class:`Fault`: the infrastructure's kind
(``rate-limit``, ``overloaded``, ``server-error``, ``connection``, ``auth``, …), the
detail, and the evidence it rests on — the agent's own words (``"agent"``: its
``API Error: 529`` line, its ``Not logged in``) or something the harness observed
itself (``"harness"``: an HTTP status it received, an exit before any output).

Each agent module says which of its messages mean what (:meth:`Agent.fault`); whether
a fault counts as the infrastructure's is the outcome policy's decision, not this
module's. The generic readings here — an HTTP status, the words a message uses — are
shared by the agents whose messages name them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda._types import Evidence

if TYPE_CHECKING:
    from pytest_ooda._types import InfraErrorKind

__all__ = [
    "Evidence",
    "Fault",
    "infra_reason",
    "kind_of_status",
    "message_fault",
]


@dataclass(frozen=True)
class Fault:
    """One classified failure: its kind, the detail, and the evidence."""

    kind: InfraErrorKind
    detail: str
    evidence: Evidence = "agent"

    @property
    def reason(self) -> str:
        """``kind: detail`` as results and reports show it."""
        return infra_reason(self.kind, self.detail)


def kind_of_status(status: int) -> InfraErrorKind | None:
    """The kind of an HTTP status the provider is to blame for, else ``None``: a
    refused credential (401, 403) is ``auth``."""
    if status == 429:
        return "rate-limit"
    if status in (529, 503):
        return "overloaded"
    if status in (401, 403):
        return "auth"
    if 500 <= status <= 599:
        return "server-error"
    return None


def infra_reason(kind: InfraErrorKind, detail: str) -> str:
    """The reason as results and reports show it: ``rate-limit: HTTP 429 …``."""
    detail = " ".join(detail.split())
    if len(detail) > 300:
        detail = detail[:299] + "…"
    return f"{kind}: {detail}" if detail else kind


#: A status named in an agent's error message (``last status: 429 Too Many Requests``,
#: ``unexpected status 503 Service Unavailable``, ``[API Error: 429 …]``).
_STATUS_IN_TEXT = re.compile(r"\b(?:status|HTTP|API Error)[ :]*(\d{3})\b", re.IGNORECASE)
_WORDS: tuple[tuple[re.Pattern[str], InfraErrorKind], ...] = (
    (re.compile(r"too many requests|rate.?limit|quota exceeded", re.IGNORECASE), "rate-limit"),
    (re.compile(r"overloaded", re.IGNORECASE), "overloaded"),
    (
        re.compile(
            r"unauthori[sz]ed|invalid (?:x-)?api[ _-]?key|incorrect api key|"
            r"api key not valid|authentication (?:failed|error)|permission denied by the api|"
            r"missing (?:an )?api key|not logged in",
            re.IGNORECASE,
        ),
        "auth",
    ),
    (
        re.compile(
            r"stream disconnected|connection (?:error|refused|reset|closed)|"
            r"error sending request|network error|fetch failed",
            re.IGNORECASE,
        ),
        "connection",
    ),
    (
        re.compile(r"internal server error|service unavailable|bad gateway", re.IGNORECASE),
        "server-error",
    ),
)


def message_fault(text: str) -> Fault | None:
    """The fault an agent's error message names — an HTTP status the provider is to
    blame for, or words such as "rate limit", "unauthorized" — else ``None``."""
    status = _STATUS_IN_TEXT.search(text)
    if status is not None:
        kind = kind_of_status(int(status.group(1)))
        if kind is not None:
            return Fault(kind, text)
    for pattern, kind in _WORDS:
        if pattern.search(text):
            return Fault(kind, text)
    return None

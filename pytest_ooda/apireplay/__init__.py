"""Agent-level record and replay: a loopback proxy between an agent CLI and its model
API that records the traffic to a cassette beside the scenario and answers from it
again, so the real agent runs offline, deterministically (docs/agent-replay.md).

:mod:`.canonical` owns the canonical form of a request (what is normalised, how it is
split into parts), :mod:`.sse` reading and writing server-sent events, :mod:`.cassette`
the file and the in-order matching, :mod:`.divergence` the report of a request the
cassette cannot answer, :mod:`.proxy` the server itself, :mod:`.canary` an upgrade
canary's replay (what a new agent version sends otherwise), :mod:`.access` how a run's
agent reaches it (in a sandbox too: :mod:`.relay`, :mod:`.netns`).
"""

from __future__ import annotations

from pytest_ooda.apireplay.access import Access, reach, sandbox_for_api
from pytest_ooda.apireplay.canary import CanaryProxy, Change, Sent, what_changed
from pytest_ooda.apireplay.canonical import (
    Canonical,
    Normaliser,
    canonical_request,
)
from pytest_ooda.apireplay.cassette import (
    CASSETTE_SUFFIX,
    Cassette,
    Exchange,
    cassette_path,
    read_cassette,
    write_cassette,
)
from pytest_ooda.apireplay.divergence import Divergence
from pytest_ooda.apireplay.proxy import (
    ApiProxy,
    upstreams_from_env,
)

__all__ = [
    "CASSETTE_SUFFIX",
    "Access",
    "ApiProxy",
    "CanaryProxy",
    "Canonical",
    "Cassette",
    "Change",
    "Divergence",
    "Exchange",
    "Normaliser",
    "Sent",
    "canonical_request",
    "cassette_path",
    "reach",
    "read_cassette",
    "sandbox_for_api",
    "upstreams_from_env",
    "what_changed",
    "write_cassette",
]

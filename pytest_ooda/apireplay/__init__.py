"""Agent-level record and replay: a loopback proxy between an agent CLI and its model
API that records the traffic to a cassette beside the scenario and answers from it
again, so the real agent runs offline, deterministically (docs/agent-replay.md).

:mod:`.canonical` owns the canonical form of a request (what is normalised, how it is
split into parts), :mod:`.sse` reading and writing server-sent events, :mod:`.cassette`
the file and the in-order matching, :mod:`.divergence` the report of a request the
cassette cannot answer, and :mod:`.proxy` the server itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pytest_ooda.apireplay.canonical import (
        Canonical as Canonical,
        Normaliser as Normaliser,
        canonical_request as canonical_request,
    )
    from pytest_ooda.apireplay.cassette import (
        CASSETTE_SUFFIX as CASSETTE_SUFFIX,
        Cassette as Cassette,
        Exchange as Exchange,
        cassette_path as cassette_path,
        read_cassette as read_cassette,
        write_cassette as write_cassette,
    )
    from pytest_ooda.apireplay.divergence import Divergence as Divergence
    from pytest_ooda.apireplay.proxy import (
        ApiProxy as ApiProxy,
        upstreams_from_env as upstreams_from_env,
    )
else:
    from pytest_ooda._exports import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

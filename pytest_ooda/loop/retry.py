"""Retrying an iteration the infrastructure spoiled: exponential back-off with jitter, a
cap, and the API's own ``Retry-After`` honoured (see ``RetrySettings``)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ooda.config import RetrySettings

__all__ = ["backoff", "retryable"]


def backoff(
    settings: RetrySettings,
    retry: int,
    *,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before ``retry`` (1-based): ``delay·2^(retry−1)`` capped at
    ``max_delay``, times a random factor in [0.5, 1] so that workers hitting the same
    limit do not come back in step; never less than ``retry_after``."""
    if retry < 1:
        raise ValueError(f"retry must be >= 1, got {retry}")
    base = min(settings.max_delay, settings.delay * 2 ** (retry - 1))
    wait: float = base * (rng or random).uniform(0.5, 1.0)
    if retry_after is not None:
        wait = max(wait, retry_after)
    return wait


def retryable(reason: str) -> bool:
    """Whether an infrastructure error of this reason may go away on another try."""
    from pytest_ooda.backends import RETRYABLE, kind_of

    return kind_of(reason) in RETRYABLE

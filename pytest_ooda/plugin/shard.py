"""``--ooda-shard K/N``: this session runs share K of N of the live items (a stable
split by node id, for CI matrices). Registered only when the option is given."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_ooda.plugin import SESSION
from pytest_ooda.settings import SHARD


def _natural(nodeid: str) -> list[Any]:
    """``live[x#10]`` after ``live[x#9]``: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", nodeid)]


class Shard:
    """Registered with ``--ooda-shard``: splits the live items after every other
    selection (``-k``, ``-m``, ``--lf``) has been made, so all shards split the same
    list."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        select_shard(config, items)


def select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep share K of N of the live items: the live items in node-id order, dealt out
    round-robin, so every share gets runs of every scenario and the shares differ by at
    most one item. Every machine given the same checkout and options computes the same
    split. Other items are not split."""
    shard = config.stash[SESSION][SHARD]
    if shard is None:
        return
    index, count = shard
    live = sorted(
        (item for item in items if item.get_closest_marker("live") is not None),
        key=lambda item: _natural(item.nodeid),
    )
    dropped = {id(item) for position, item in enumerate(live) if position % count != index - 1}
    if not dropped:
        return
    config.hook.pytest_deselected(items=[item for item in items if id(item) in dropped])
    items[:] = [item for item in items if id(item) not in dropped]

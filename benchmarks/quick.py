"""``--quick``, which every benchmark takes: tiny sizes and one round, a few seconds, so
``tests/integration/benchmarks/`` runs each script on every CI run and a change of the
library (a record's schema, a renamed function) cannot break one unnoticed. Its
figures mean nothing and no goal is judged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

HELP = (
    "tiny sizes and one round, in seconds: checks that the script still runs "
    "(tests/integration/benchmarks/); its figures mean nothing"
)


def parse(parser: argparse.ArgumentParser, **tiny: Any) -> argparse.Namespace:
    """``parser``'s arguments with ``--quick`` added; under ``--quick`` each option named
    in ``tiny`` takes its tiny value."""
    parser.add_argument("--quick", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.quick:
        for name, value in tiny.items():
            setattr(args, name, value)
    return args

"""``python -m pytest_ooda``: the same as the ``ooda`` command."""

from __future__ import annotations

import sys

from pytest_ooda.cli import main

if __name__ == "__main__":
    sys.exit(main())

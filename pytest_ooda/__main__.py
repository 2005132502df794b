"""``python -m pytest_ooda``: the same as the ``ooda`` command (result cache included)."""

from __future__ import annotations

import sys

from pytest_ooda._entry import main

if __name__ == "__main__":
    sys.exit(main())

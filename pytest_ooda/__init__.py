"""pytest-ooda: compose, run and test OODA prompt procedures for AI coding agents."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

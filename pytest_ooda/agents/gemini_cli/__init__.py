"""Gemini CLI (``gemini --output-format stream-json|json``): the agent
(:class:`GeminiAgent`), its two output readers (:class:`GeminiStream`,
:class:`GeminiJsonStream`), what its error messages mean (:func:`gemini_fault`), its
credentials, the Gemini API it calls, and what it loads (``loaded.py``)."""

from __future__ import annotations

from pytest_ooda.agents.gemini_cli.agent import (
    GeminiAgent,
    parse_gemini_json,
    parse_gemini_stream_json,
)
from pytest_ooda.agents.gemini_cli.stream import GeminiJsonStream, GeminiStream, gemini_fault

__all__ = [
    "GeminiAgent",
    "GeminiJsonStream",
    "GeminiStream",
    "gemini_fault",
    "parse_gemini_json",
    "parse_gemini_stream_json",
]

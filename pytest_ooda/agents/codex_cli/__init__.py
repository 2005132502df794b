"""Codex CLI (``codex exec --json``): the agent (:class:`CodexAgent`), its JSON-lines
stream (:class:`CodexStream`), what its error events mean, its credentials and the
OpenAI Responses API it calls."""

from __future__ import annotations

from pytest_ooda.agents.codex_cli.agent import CodexAgent, CodexStream, parse_codex_json

__all__ = ["CodexAgent", "CodexStream", "parse_codex_json"]

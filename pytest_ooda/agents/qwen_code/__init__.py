"""Qwen Code (``qwen --output-format stream-json``): the agent (:class:`QwenAgent`), its
output reader (:class:`QwenStream`), what its error messages mean (:func:`qwen_fault`),
its credentials, the OpenAI-compatible chat-completions API it calls, and where it reads
its configuration."""

from __future__ import annotations

from pytest_ooda.agents.qwen_code.agent import QwenAgent, parse_qwen_stream_json
from pytest_ooda.agents.qwen_code.stream import QwenStream, qwen_fault

__all__ = ["QwenAgent", "QwenStream", "parse_qwen_stream_json", "qwen_fault"]

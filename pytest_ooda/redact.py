"""Secret redaction applied to everything pytest-ooda writes to disk (scenario recordings).

Two sources of secrets: the values of environment variables whose names say they are
secret (KEY, TOKEN, SECRET, PASSWORD), and strings shaped like well-known API keys or
bearer tokens, whether or not they came from the environment.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["REDACTED", "Redactor", "redact"]

REDACTED = "<redacted>"
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
# Shorter values ("1", "yes", "us" for KEYBOARD_LAYOUT) would redact ordinary words.
MIN_SECRET_LENGTH = 6

_PATTERNS = (
    # Anthropic/OpenAI style: sk-..., sk-ant-api03-..., sk-proj-...
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    # GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    # Slack, AWS access key ids, Google API keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
)
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{8,}")


class Redactor:
    """Replaces secrets with ``<redacted>``; built once per write from an environment."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        source = os.environ if env is None else env
        values = {
            value
            for name, value in source.items()
            if any(part in name.upper() for part in SECRET_NAME_PARTS)
            and len(value) >= MIN_SECRET_LENGTH
        }
        # Longest first so a secret that contains another is replaced whole.
        ordered = sorted(values, key=len, reverse=True)
        self._env_pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None

    def __call__(self, text: str) -> str:
        if self._env_pattern is not None:
            text = self._env_pattern.sub(REDACTED, text)
        text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        for pattern in _PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Redact ``text`` using ``env`` (``os.environ`` by default)."""
    return Redactor(env)(text)

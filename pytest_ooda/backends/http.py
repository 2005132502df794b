"""The ``http`` backend: one chat-completion request per iteration over ``requests``.

Two wire formats: the Anthropic Messages API (``provider: anthropic``) and
OpenAI-compatible chat completions (``provider: openai``, which also covers local
servers speaking that dialect). An HTTP error or a timeout is a failed iteration whose
record carries the status and an excerpt of the body; a rate limit (429, with its
``Retry-After``), an overloaded or failing server (5xx) and a connection that cannot be
made are the infrastructure's fault (``infra_error``), retried by the loop. Only a setup
mistake (unknown provider, missing API key) is a ``BackendError``.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.backends import BackendResult, StreamCallback, Usage
from pytest_ooda.backends.infra import infra_reason, kind_of_status, parse_retry_after
from pytest_ooda.errors import BackendError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    import requests

    from pytest_ooda.config import ApiSettings

__all__ = ["PROVIDERS", "HttpBackend"]

BODY_EXCERPT = 500
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class _Provider:
    base_url: str
    path: str
    key_env: str


PROVIDERS: Mapping[str, _Provider] = {
    "anthropic": _Provider("https://api.anthropic.com", "/v1/messages", "ANTHROPIC_API_KEY"),
    "openai": _Provider("https://api.openai.com/v1", "/chat/completions", "OPENAI_API_KEY"),
}


def _excerpt(text: str, limit: int = BODY_EXCERPT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


class HttpBackend:
    """Sends the prompt as a single user message and returns the reply text as output."""

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        max_tokens: int = 4096,
        timeout: float = 600.0,
        price_input_per_mtok: float | None = None,
        price_output_per_mtok: float | None = None,
        env: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
    ) -> None:
        if provider not in PROVIDERS:
            raise BackendError(
                f"unknown ai_api provider {provider!r}",
                hint=f"expected one of: {', '.join(sorted(PROVIDERS))}",
            )
        spec = PROVIDERS[provider]
        self.provider = provider
        self.model = model
        self.base_url = (base_url or spec.base_url).rstrip("/")
        path = spec.path
        if provider == "anthropic" and self.base_url.endswith("/v1"):
            # OpenAI-style base URLs end in /v1; written that way for Anthropic it would
            # ask for /v1/v1/messages and get a 404 every iteration.
            path = path.removeprefix("/v1")
        self.url = self.base_url + path
        self.api_key_env = api_key_env or spec.key_env
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.price_input_per_mtok = price_input_per_mtok
        self.price_output_per_mtok = price_output_per_mtok
        self.env = env
        if session is None:
            # Imported here: a process that never makes an HTTP request never pays for it.
            import requests

            session = requests.Session()
        self.session = session

    @classmethod
    def from_settings(
        cls,
        settings: ApiSettings,
        *,
        env: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
    ) -> HttpBackend:
        return cls(
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            max_tokens=settings.max_tokens,
            timeout=settings.timeout,
            price_input_per_mtok=settings.price_input_per_mtok,
            price_output_per_mtok=settings.price_output_per_mtok,
            env=env,
            session=session,
        )

    def __repr__(self) -> str:
        return f"HttpBackend(provider={self.provider!r}, model={self.model!r}, url={self.url!r})"

    def check(self) -> str:
        """Return the API key, or raise ``BackendError`` naming the variable to set."""
        source = os.environ if self.env is None else self.env
        key = source.get(self.api_key_env, "")
        if not key:
            raise BackendError(
                f"the {self.provider} API key is not set: environment variable "
                f"{self.api_key_env} is empty or missing",
                hint="export it, or set ai_api.api_key_env to the variable that holds the key",
            )
        return key

    def _request(self, prompt: str, key: str) -> tuple[dict[str, str], dict[str, Any]]:
        messages = [{"role": "user", "content": prompt}]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
        }
        if self.provider == "anthropic":
            headers = {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
        else:
            headers = {"Authorization": f"Bearer {key}"}
        headers["content-type"] = "application/json"
        return headers, body

    def _parse(self, data: Any) -> tuple[str, Usage]:
        if not isinstance(data, dict):
            raise ValueError("response is not a JSON object")
        usage = data.get("usage") or {}
        if self.provider == "anthropic":
            blocks = data["content"]
            text = "".join(
                b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            )
            tokens_in = int(usage.get("input_tokens", 0))
            tokens_out = int(usage.get("output_tokens", 0))
        else:
            message = data["choices"][0]["message"]
            text = message.get("content") or ""
            tokens_in = int(usage.get("prompt_tokens", 0))
            tokens_out = int(usage.get("completion_tokens", 0))
        return text, Usage(tokens_in, tokens_out, self.cost(tokens_in, tokens_out))

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """Cost in the configured currency, or ``None`` when no price is configured."""
        if self.price_input_per_mtok is None and self.price_output_per_mtok is None:
            return None
        return (
            tokens_in * (self.price_input_per_mtok or 0.0)
            + tokens_out * (self.price_output_per_mtok or 0.0)
        ) / 1_000_000

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: StreamCallback | None,
    ) -> BackendResult:
        key = self.check()
        headers, body = self._request(prompt, key)
        limit = self.timeout if timeout is None else min(self.timeout, timeout)
        started = time.monotonic()

        def failed(
            error: str,
            *,
            timed_out: bool = False,
            output: str = "",
            infra: str | None = None,
            retry_after: float | None = None,
        ) -> BackendResult:
            return BackendResult(
                output=output,
                exit_code=1,
                duration=time.monotonic() - started,
                timed_out=timed_out,
                error=error,
                infra_error=infra,
                # The harness's own request: it saw the status or the failed connection.
                infra_evidence="harness" if infra is not None else None,
                retry_after=retry_after,
            )

        import requests

        try:
            response = self.session.post(self.url, json=body, headers=headers, timeout=limit)
        except requests.Timeout:
            # Not the infrastructure's fault for sure: the iteration's own time limit
            # may be what ran out.
            return failed(f"request to {self.url} timed out after {limit:g}s", timed_out=True)
        except requests.RequestException as exc:
            text = f"request to {self.url} failed: {_connection_problem(exc)}"
            return failed(text, infra=infra_reason("connection", text))
        if not response.ok:
            excerpt = _excerpt(response.text)
            text = f"HTTP {response.status_code} {response.reason}: {excerpt}"
            if response.status_code in (404, 405):
                # Nearly always a base_url missing (or doubling) a /v1 segment.
                text += f" (requested {self.url}; check ai_api.base_url)"
            kind = kind_of_status(response.status_code)
            return failed(
                text,
                infra=infra_reason(kind, text) if kind is not None else None,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        try:
            text, usage = self._parse(response.json())
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return failed(f"unexpected response from {self.url} ({exc}): {_excerpt(response.text)}")
        data = text.encode("utf-8")
        truncated = len(data) > max_output
        if stream is not None:
            stream(data)
        kept = data[len(data) - max_output :] if truncated else data
        return BackendResult(
            output=kept.decode("utf-8", errors="replace"),
            exit_code=0,
            duration=time.monotonic() - started,
            truncated=truncated,
            dropped_bytes=len(data) - len(kept),
            total_bytes=len(data),
            usage=usage,
        )


_ERRNO_TEXT = re.compile(r"\[Errno -?\d+\] ([^'\"()]+)")


def _connection_problem(exc: requests.RequestException) -> str:
    """The OS-level cause (``Connection refused``) rather than urllib3's nested reprs,
    which repeat the URL three times and run to several hundred characters."""
    text = str(exc)
    match = _ERRNO_TEXT.search(text)
    if match:
        return match.group(1).strip()
    return text if len(text) <= 300 else text[:300] + "…"

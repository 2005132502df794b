"""The objects behind the plugin's public fixtures (``ooda_runner``, ``ooda_script``,
``ooda_workspace``, ``ooda_http_ai``).

The fixtures themselves are declared in :mod:`pytest_ooda.plugin`; users override them
in a ``conftest.py`` by defining a fixture of the same name.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from pytest_ooda.errors import AgentWarning, BackendError, OodaError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from types import TracebackType

    import pytest
    from requests import PreparedRequest

    from pytest_ooda._types import AiOutput
    from pytest_ooda.backends import Backend, ReplayBackend, ScriptItem
    from pytest_ooda.config import Config
    from pytest_ooda.loop import LoopResult

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _raised_at_caller(
    *kinds: type[Exception],
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Report ``kinds`` (a user's mistake) at the line of the test that made it.

    The exception keeps its message but loses the frames inside the plugin and the
    library, and pytest hides the wrapper (``__tracebackhide__``): a typo in a procedure
    name reads as one ``E ConfigError: unknown procedure …`` under the user's own line.
    """
    caught = kinds or (OodaError,)

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(function)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            __tracebackhide__ = True
            try:
                return function(*args, **kwargs)
            except caught as error:
                raise error.with_traceback(None) from None

        return wrapper

    return decorate


class WorkspaceFactory:
    """``ooda_workspace(src=None, *, git=True)`` → a fresh temp copy of ``src``.

    ``src`` is relative to the requesting test file's directory.
    """

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, *, base: Path) -> None:
        self._factory = tmp_path_factory
        self._base = base

    @_raised_at_caller()
    def __call__(self, src: str | Path | None = None, *, git: bool = True) -> Path:
        # The workspace layer, loaded by the test that asks for one.
        from pytest_ooda.workspace import copy_workspace, git_init

        target = self._factory.mktemp("ooda-workspace")
        source = None if src is None else (self._base / src)
        copy_workspace(source, target)
        if git:
            git_init(target)
        return target


# --------------------------------------------------------------------------- runner


class Runner:
    """The real loop runner, bound to a config and the session's AI options (command,
    output format, budget)."""

    def __init__(
        self,
        config: Config,
        *,
        ai_cmd: str | None = None,
        ai_cmd_alias: str | None = None,
        workdir: Path | None = None,
        ai_output: AiOutput | None = None,
        max_cost: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.config = config
        self.ai_cmd = ai_cmd
        self.ai_cmd_alias = ai_cmd_alias
        self.workdir = workdir
        self.ai_output = ai_output
        self.max_cost = max_cost
        self.max_tokens = max_tokens

    @_raised_at_caller()
    def run(
        self,
        procedure: str,
        *,
        ai: Backend | None = None,
        max_iterations: int | None = None,
        unlimited: bool = False,
        context: Sequence[str] = (),
        workdir: str | Path | None = None,
        failure_threshold: int | None = None,
        **options: Any,
    ) -> LoopResult:
        """Run ``procedure`` with backend ``ai`` (default: the configured AI command).

        Extra keyword arguments go to :func:`pytest_ooda.loop.run_procedure`; a
        ``max_cost``/``max_tokens`` given here applies with the session's (the smaller
        wins). Tools the agent was denied are reported as an ``AgentWarning``.
        """
        from pytest_ooda.loop import run_procedure, tightest

        options.setdefault("ai_output", self.ai_output if ai is None else None)
        options["max_cost"] = tightest(options.get("max_cost"), self.max_cost)
        options["max_tokens"] = tightest(options.get("max_tokens"), self.max_tokens)
        result = run_procedure(
            self.config,
            procedure,
            backend=ai,
            max_iterations=max_iterations,
            unlimited=unlimited,
            context=context,
            workdir=workdir if workdir is not None else self.workdir,
            ai_cmd=self.ai_cmd if ai is None else None,
            ai_cmd_alias=self.ai_cmd_alias if ai is None else None,
            failure_threshold=failure_threshold,
            handle_signals=False,
            **options,
        )
        from pytest_ooda.live import agent_warnings

        for text in agent_warnings(result):
            warnings.warn(AgentWarning(f"procedure {procedure}: {text}"), stacklevel=3)
        return result


class ScriptFactory:
    """``ooda_script([...])`` → a replay backend serving the given steps in order."""

    @_raised_at_caller(TypeError)
    def __call__(self, items: Sequence[ScriptItem], *, name: str = "script") -> ReplayBackend:
        from pytest_ooda.backends import script

        return script(items, name=name)


# --------------------------------------------------------------------------- HTTP stub


@dataclass(frozen=True)
class RecordedRequest:
    """One request the HTTP backend made to the stub."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        messages = self.body.get("messages") or [{}]
        content = messages[-1].get("content", "")
        return content if isinstance(content, str) else json.dumps(content)


class HttpAIStub:
    """Scripted replies for the ``http`` backend through ``responses``.

    ``reply()`` queues one answer (and its token usage) for an endpoint; ``fail()``
    queues an HTTP error. Replies are served in order; a request with nothing queued
    gets a 500 whose body says so. ``requests`` lists what was sent.
    """

    def __init__(self) -> None:
        # Imported here: every pytest session loads the plugin, few use this fixture.
        import responses

        self._post = responses.POST
        self.mock = responses.RequestsMock(assert_all_requests_are_fired=False)
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str, deque[tuple[int, dict[str, Any] | str]]] = {}

    def __enter__(self) -> HttpAIStub:
        self.mock.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.mock.stop()
        self.mock.reset()

    @_raised_at_caller()
    def url_for(self, provider: str, base_url: str | None = None) -> str:
        from pytest_ooda.backends import PROVIDERS

        if provider not in PROVIDERS:
            raise BackendError(
                f"unknown provider {provider!r}", hint=f"expected one of {sorted(PROVIDERS)}"
            )
        spec = PROVIDERS[provider]
        return (base_url or spec.base_url).rstrip("/") + spec.path

    def _queue(self, url: str) -> deque[tuple[int, dict[str, Any] | str]]:
        queue = self._queues.get(url)
        if queue is None:
            queue = self._queues[url] = deque()
            self.mock.add_callback(self._post, url, callback=self._serve)
        return queue

    @_raised_at_caller()
    def reply(
        self,
        text: str,
        *,
        provider: str = "anthropic",
        base_url: str | None = None,
        input_tokens: int = 10,
        output_tokens: int = 20,
    ) -> HttpAIStub:
        """Queue a successful reply whose text is ``text``."""
        if provider == "anthropic":
            body: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
            }
        else:
            body = {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens},
            }
        self._queue(self.url_for(provider, base_url)).append((200, body))
        return self

    @_raised_at_caller()
    def fail(
        self,
        status: int,
        body: str = "",
        *,
        provider: str = "anthropic",
        base_url: str | None = None,
    ) -> HttpAIStub:
        """Queue an HTTP error response."""
        self._queue(self.url_for(provider, base_url)).append((status, body))
        return self

    @property
    def prompts(self) -> list[str]:
        return [request.prompt for request in self.requests]

    def _serve(self, request: PreparedRequest) -> tuple[int, dict[str, str], str]:
        raw = request.body or b"{}"
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        try:
            body = json.loads(text)
        except ValueError:
            body = {"raw": text}
        url = str(request.url)
        self.requests.append(RecordedRequest(url, dict(request.headers), body))
        queue = self._queues.get(url)
        if not queue:
            return 500, {}, json.dumps({"error": f"ooda_http_ai: no scripted reply left for {url}"})
        status, payload = queue.popleft()
        content = payload if isinstance(payload, str) else json.dumps(payload)
        return status, {"content-type": "application/json"}, content

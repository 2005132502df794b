"""Codex CLI (``codex exec --json``): its JSON-lines events (threads, turns, items:
agent messages, commands, file changes, MCP and web-search calls, token usage), what
its error events mean, its credentials, the OpenAI Responses API it calls, and where
it reads its configuration (``~/.codex/config.toml``, ``AGENTS.md``)."""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.base import Agent, ConfigSource, ModelApi, OutputFormat
from pytest_ooda.agents.faults import Fault, message_fault
from pytest_ooda.agents.report import AgentReport, ToolCall, tool_arguments
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, AgentStream, as_int, as_mapping
from pytest_ooda.agents.text import (
    SUMMARY_WIDTH,
    ToolTextBudget,
    input_text,
    shown_lines,
    summarize,
)
from pytest_ooda.replay_rules import ReplayRule

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["CodexAgent", "CodexStream", "parse_codex_json"]

JSON = "codex-json"
#: What Codex's exec tool reports that differs every run (0.171): a random chunk id and
#: the wall time, in JSON and in words.
_REPLAY_RULES = (
    ReplayRule(r'"chunk_id":"[0-9a-f]+"', '"chunk_id":"<ooda:id>"', "both", "codex: chunk ids"),
    ReplayRule(
        r'"wall_time_seconds":[0-9.eE+-]+', '"wall_time_seconds":0', "both", "codex: wall times"
    ),
    ReplayRule(
        r"Wall time \d+(?:\.\d+)? seconds", "Wall time <ooda:duration>", "both", "codex: wall"
    ),
)
_HINT = "does the command run `codex exec --json`?"


class CodexStream(AgentStream):
    """``codex exec --json``: JSON lines of thread, turn and item events."""

    kind = JSON
    flags_hint = _HINT

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched, redact=redact)
        self._texts: deque[str] = deque(maxlen=20)
        self._calls: list[ToolCall] = []
        self._usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
        self._turns = 0
        self._failed: str | None = None
        self._infra: str | None = None

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "turn.completed":
            self._turns += 1
            for key in self._usage:
                self._usage[key] += as_int(as_mapping(event.get("usage")).get(key)) or 0
            return None
        if kind in ("turn.failed", "error"):
            detail = event.get("error") if kind == "turn.failed" else event
            message = detail.get("message") if isinstance(detail, dict) else None
            self._failed = f"{JSON}: {message or kind}"
            if isinstance(message, str):
                fault = message_fault(message)
                self._infra = fault.reason if fault is not None else self._infra
            return f"✗ error: {message or kind}"
        if kind == "item.completed":
            found = _codex_item(as_mapping(event.get("item")), self.budget)
            if isinstance(found, str):
                self._texts.append(found)
                return found
            if found is not None:
                self._calls.append(found)
                if not self.watched:
                    return None
                mark = "✗" if found.ok is False else "→"
                if found.arguments is not None:
                    text = self._clean(input_text(found.arguments))
                    return shown_lines(f"{mark} {found.name}", text)
                summary = self._clean(found.summary)
                return f"{mark} {found.name}: {summary}" if summary else None
        return None

    def report(self) -> AgentReport:
        completed = self._turns > 0
        error = self._failed or self._error
        if not completed and error is None:
            error = self._missing("no turn.completed event")
        return AgentReport(
            text="\n".join(self._texts),
            input_tokens=self._usage["input_tokens"] if completed else None,
            output_tokens=self._usage["output_tokens"] if completed else None,
            cache_read_tokens=self._usage["cached_input_tokens"] if completed else None,
            turns=self._turns if completed else None,
            tool_calls=tuple(self._calls),
            error=error,
            # A turn that completed after an error event (a retry that worked) is fine.
            infra_error=None if completed else (self._infra or self._foreign_infra()),
            events=self._events,
        )


def _codex_item(item: dict[str, Any], budget: ToolTextBudget) -> ToolCall | str | None:
    """A completed Codex item: the agent's text, a tool call, or nothing of interest
    (its texts kept as far as the run's ``budget`` goes)."""
    item_type = item.get("type")
    failed = item.get("status") == "failed"
    if item_type == "agent_message":
        return item.get("text") if isinstance(item.get("text"), str) else None
    if item_type == "command_execution":
        code = as_int(item.get("exit_code"))
        failed = failed or (code is not None and code != 0)
        summary = summarize("shell", {"command": item.get("command")})
        text, arguments, kept = budget.input(item.get("command"))
        output = item.get("aggregated_output")
        result = budget.text(output) if kept else None
        return ToolCall(
            "shell",
            summary,
            ok=not failed,
            error=f"exit {code}" if failed else None,
            input=text,
            result=result,
            arguments=arguments,
            texts_kept=kept and (result is not None or output is None),
        )
    if item_type == "file_change":
        changes = [as_mapping(change) for change in item.get("changes") or ()]
        paths = ", ".join(str(change.get("path", "")) for change in changes)
        text = budget.text(changes or None)
        kept = text is not None or not changes
        return ToolCall(
            "file_change", paths[:SUMMARY_WIDTH], ok=not failed, input=text, texts_kept=kept
        )
    if item_type == "mcp_tool_call":
        return ToolCall(f"{item.get('server', '?')}.{item.get('tool', '?')}", ok=not failed)
    if item_type == "web_search":
        query = {"query": item.get("query")}
        return ToolCall("web_search", summarize("", query), arguments=tool_arguments(query))
    return None


def parse_codex_json(text: str) -> AgentReport:
    """``codex exec --json``: a finished invocation's whole output."""
    stream = CodexStream()
    for line in text.splitlines():
        stream.feed(line)
    return stream.report()


class CodexAgent(Agent):
    """Codex CLI; see the module docstring."""

    name = "codex"
    display = "Codex"
    programs = ("codex",)
    formats = (
        OutputFormat(
            JSON,
            lambda **options: CodexStream(**options),
            reports_tools=True,
            reports_tokens=True,
            hint=_HINT,
        ),
    )
    model_apis = (
        ModelApi(
            "openai",
            base_url_env="OPENAI_BASE_URL",
            upstream="https://api.openai.com/v1",
            key_env="OPENAI_API_KEY",
            url_suffix="/v1",
            run_id_fields=("client_metadata",),
            replay_rules=_REPLAY_RULES,
        ),
    )
    credentials = ("OPENAI_API_KEY", "CODEX_API_KEY")
    credential_files = (".codex/auth.json",)
    shell_tools = ("shell",)
    unattended_flags = (
        "--dangerously-bypass-approvals-and-sandbox",
        "--full-auto",
        "--yolo",
    )
    config_env = ("CODEX_HOME",)
    init_lines = """\
  # Codex: `-` reads the prompt on stdin; workspace-write lets it edit files.
  ai_cmd: "codex exec --json --sandbox workspace-write -"
  ai_output: codex-json
"""

    def format_of(self, argv: Sequence[str]) -> str | None:
        return JSON if "exec" in argv and "--json" in argv else None

    def pointed_at(self, argv: Sequence[str], urls: Mapping[str, str]) -> tuple[str, ...]:
        """Codex reads no base-URL variable (0.171): a model provider of its own, given
        with ``-c`` before the subcommand, beats the one its config names."""
        url = urls.get("openai")
        if url is None or not argv:
            return tuple(argv)
        provider = (
            f'model_providers.ooda-proxy={{name="pytest-ooda proxy", base_url="{url}", '
            'env_key="OPENAI_API_KEY", wire_api="responses"}'
        )
        return (argv[0], "-c", 'model_provider="ooda-proxy"', "-c", provider, *argv[1:])

    def fault(self, text: str) -> Fault | None:
        lines = [line for line in text.strip().splitlines()[-5:] if line.strip()]
        for line in reversed(lines):
            found = message_fault(line)
            if found is not None:
                return found
        return None

    def config_sources(
        self, home: Path, workspace: Path, env: Mapping[str, str] | None = None
    ) -> tuple[ConfigSource, ...]:
        moved = (os.environ if env is None else env).get("CODEX_HOME")
        user = Path(moved) if moved else home / ".codex"
        return (
            ConfigSource("settings", user / "config.toml"),
            ConfigSource("instructions", user / "AGENTS.md"),
            ConfigSource("prompts", user / "prompts"),
            ConfigSource("skills", user / "skills"),
            ConfigSource("instructions", workspace / "AGENTS.md", "project"),
            ConfigSource("settings", workspace / ".codex" / "config.toml", "project"),
        )

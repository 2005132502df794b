"""Claude Code (``claude -p``), the agent pytest-ooda was built around: its
``--output-format json`` and ``stream-json --verbose`` output, what its messages mean
(``API Error: 529 …``, ``Not logged in``), its refusal to skip permission prompts as
root without ``IS_SANDBOX=1``, its credentials, the Anthropic Messages API it calls,
and where it reads its configuration. Tested against the real CLI (2.1.197) driven by
an offline stand-in of the API (docs/agents.md).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ooda.agents.base import Agent, ConfigSource, ModelApi, OutputFormat
from pytest_ooda.agents.claude_code.fired import FiredWatch
from pytest_ooda.agents.claude_code.loaded import configuration
from pytest_ooda.agents.faults import Fault, infra_reason, kind_of_status
from pytest_ooda.agents.message_stream import MessageStream
from pytest_ooda.agents.report import AgentReport, ToolCall, tool_arguments
from pytest_ooda.agents.stream import DEFAULT_MAX_LINE, as_int, as_mapping
from pytest_ooda.agents.text import (
    ToolTextBudget,
    one_line,
    summarize,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.agents.activation import Activation
    from pytest_ooda.agents.fingerprint import Configuration

__all__ = ["ClaudeAgent", "ClaudeStream", "api_error_fault", "parse_claude_json"]

JSON = "claude-json"
STREAM_JSON = "claude-stream-json"
_HINTS = {
    JSON: "does the command have --output-format json?",
    STREAM_JSON: "does the command have --output-format stream-json --verbose?",
}

#: What Claude Code prints (exit 1) when --dangerously-skip-permissions or
#: --permission-mode bypassPermissions is used as root outside a sandbox.
ROOT_REFUSAL = "cannot be used with root/sudo privileges"
ROOT_REFUSAL_HINT = (
    "Claude Code refuses to skip permission prompts as root unless IS_SANDBOX is exactly "
    "1 (true or yes do not count); set IS_SANDBOX=1 in the environment when this runs in "
    "a container or CI sandbox (or run it in a sandbox, or as another user)"
)
#: The one value of ``IS_SANDBOX`` Claude Code accepts.
IS_SANDBOX = "1"

#: Claude Code's text for an API failure it gave up retrying:
#: ``API Error: 529 {...}`` / ``API Error: Connection error.``
_API_ERROR = re.compile(r"^\s*API Error:\s*(?:(\d{3})\b|(Connection error|Request timed out))")
#: Its words for credentials it does not have or the API refused (2.1.197).
_AUTH = re.compile(
    r"^\s*(?:Not logged in|Invalid API key|OAuth token has expired|"
    r"Your organization does not have access|Credit balance is too low)",
    re.IGNORECASE,
)


def api_error_fault(text: str) -> Fault | None:
    """The fault when ``text`` ends with Claude Code's report of an API failure or of
    credentials it lacks (its last words before exiting non-zero); ``None`` otherwise."""
    for line in reversed(text.strip().splitlines()[-5:]):
        if _AUTH.match(line):
            return Fault("auth", line.strip())
        match = _API_ERROR.match(line)
        if match is None:
            continue
        if match.group(1):
            kind = kind_of_status(int(match.group(1)))
            return Fault(kind, line.strip()) if kind is not None else None
        return Fault("connection", line.strip())
    return None


def _claude_result(event: dict[str, Any]) -> dict[str, Any]:
    """The report fields of a Claude Code ``result`` event."""
    usage = as_mapping(event.get("usage"))
    denials = tuple(
        ToolCall(
            str(item.get("tool_name", "?")),
            summarize(str(item.get("tool_name", "")), item.get("tool_input")),
            ok=False,
            error="permission denied",
            id=item.get("tool_use_id"),
            arguments=tool_arguments(item.get("tool_input")),
        )
        for item in event.get("permission_denials") or ()
        if isinstance(item, dict)
    )
    cost = event.get("total_cost_usd")
    model_usage = event.get("modelUsage")
    result = event.get("result")
    text = result if isinstance(result, str) else ""
    return {
        "text": text,
        "input_tokens": as_int(usage.get("input_tokens")),
        "output_tokens": as_int(usage.get("output_tokens")),
        "cache_read_tokens": as_int(usage.get("cache_read_input_tokens")),
        "cache_creation_tokens": as_int(usage.get("cache_creation_input_tokens")),
        "cost_usd": float(cost) if isinstance(cost, int | float) else None,
        "turns": as_int(event.get("num_turns")),
        "duration_ms": as_int(event.get("duration_ms")),
        "model": next(iter(model_usage), None) if isinstance(model_usage, dict) else None,
        "is_error": bool(event.get("is_error")),
        "permission_denials": denials,
        "infra_error": _claude_infra(event, text) if event.get("is_error") else None,
    }


def _claude_infra(event: dict[str, Any], text: str) -> str | None:
    """An error result blames the API when Claude Code says so: its
    ``api_error_status`` (429, 529, 5xx, 401/403) or its own words (``API Error: …``,
    ``Not logged in``, ``Invalid API key``)."""
    status = as_int(event.get("api_error_status"))
    if status is not None:
        kind = kind_of_status(status)
        if kind is not None:
            return infra_reason(kind, text or f"API status {status}")
        return None
    fault = api_error_fault(text)
    return fault.reason if fault is not None else None


class ClaudeStream(MessageStream):
    """``claude -p --output-format stream-json --verbose`` (or ``json``, whose one line is
    the ``result`` event alone): :meth:`feed` returns a readable line for a person
    watching (assistant text, ``→ Bash: pytest -q``, ``✗ Write: denied``) and
    :meth:`report` the result."""

    def __init__(
        self,
        kind: str = STREAM_JSON,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        budget: ToolTextBudget | None = None,
        watched: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(max_line=max_line, budget=budget, watched=watched, redact=redact)
        self.kind = kind
        self.flags_hint = _HINTS[kind]
        self._result: dict[str, Any] | None = None
        self._fired = FiredWatch()
        self._model: str | None = None

    def _event(self, event: dict[str, Any]) -> str | None:
        kind = event.get("type")
        self._fired.event(event)
        if kind == "system" and isinstance(event.get("model"), str):
            self._model = event["model"]
        elif kind == "assistant":
            return self._assistant(as_mapping(event.get("message")))
        elif kind == "user":
            return self._tool_results(as_mapping(event.get("message")))
        elif kind == "result":
            self._result = _claude_result(event)
            closing = _result_line(self._result)
            if self._result["is_error"] and self._texts and self._texts[-1] == self._result["text"]:
                closing = "✗ the agent CLI reported that error"  # its text was just shown
            if self.kind == JSON and self._result["text"]:
                # json mode prints nothing before its result: show the final text too.
                return f"{self._result['text']}\n{closing}"
            return closing
        return None

    def _text_fault(self, text: str) -> Fault | None:
        return api_error_fault(text)

    def activations(self, prompt: str) -> tuple[Activation, ...]:
        return self._fired.activations(prompt, self._result["text"] if self._result else "")

    def _refusal(self, line: str) -> str | None:
        return ROOT_REFUSAL_HINT if ROOT_REFUSAL in line else None

    def report(self) -> AgentReport:
        calls = self._tool_calls()
        if self._result is None:
            what = (
                "no result event"
                if self.kind == JSON
                else ("the stream ended without a result event")
            )
            return AgentReport(
                text="\n".join(self._texts),
                model=self._model,
                tool_calls=calls,
                error=self._error or self._missing(what),
                infra_error=self._foreign_infra(),
                events=self._events,
            )
        fields = {**self._result, "tool_calls": calls, "error": self._error}
        fields["model"] = fields["model"] or self._model
        return AgentReport(**fields, events=self._events)


def _result_line(fields: dict[str, Any]) -> str:
    """The closing line shown live: turns, tokens and cost, or the error."""
    if fields.get("is_error"):
        return f"✗ error: {one_line(fields.get('text') or '', 300)}"
    parts = []
    if fields.get("turns") is not None:
        parts.append(f"{fields['turns']} turns")
    tokens = sum(
        fields.get(key) or 0
        for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    )
    if tokens:
        parts.append(f"{tokens} tokens")
    if fields.get("cost_usd") is not None:
        parts.append(f"${fields['cost_usd']:.4f}")
    return "✓ done" + (": " + " · ".join(parts) if parts else "")


def parse_claude_json(text: str) -> AgentReport:
    """``claude -p --output-format json``: one ``result`` object."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        return AgentReport(text=text, error=f"{JSON}: not JSON ({exc.msg} at {exc.pos})")
    except (ValueError, RecursionError):
        return AgentReport(text=text, error=f"{JSON}: the output nests too deep to be read")
    if not isinstance(event, dict) or event.get("type") != "result":
        return AgentReport(text=text, error=f"{JSON}: no result object in the output")
    return AgentReport(**_claude_result(event), events=1)


def _skips_permissions(argv: Sequence[str]) -> bool:
    if "--dangerously-skip-permissions" in argv:
        return True
    return Agent.option_value(argv, "--permission-mode") == "bypassPermissions"


class ClaudeAgent(Agent):
    """Claude Code; see the module docstring."""

    name = "claude"
    display = "Claude Code"
    programs = ("claude",)
    alias = "claude"
    default_command = "claude -p --dangerously-skip-permissions"
    alias_format = STREAM_JSON
    formats = (
        OutputFormat(
            JSON,
            lambda **options: ClaudeStream(JSON, **options),
            flags=("--output-format", "json"),
            reports_cost=True,
            reports_tokens=True,
            hint=_HINTS[JSON],
        ),
        OutputFormat(
            STREAM_JSON,
            lambda **options: ClaudeStream(STREAM_JSON, **options),
            flags=("--output-format", "stream-json", "--verbose"),
            reports_tools=True,
            reports_cost=True,
            reports_tokens=True,
            hint=_HINTS[STREAM_JSON],
        ),
    )
    model_apis = (
        ModelApi(
            "anthropic",
            base_url_env="ANTHROPIC_BASE_URL",
            upstream="https://api.anthropic.com",
            key_env="ANTHROPIC_API_KEY",
            other_credentials=("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
            error_shape="type-error",
        ),
    )
    credentials = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
    credential_files = (".claude/.credentials.json",)
    shell_tools = ("Bash",)
    unattended_flags = ("--dangerously-skip-permissions", "bypassPermissions")
    config_env = ("CLAUDE_CONFIG_DIR",)
    image_needs_bash = True
    init_lines = """\
  # Claude Code, read as stream-json (cost, tokens, tool calls). As root it runs
  # unattended only with IS_SANDBOX=1 in the environment (or inside a sandbox).
  ai_cmd_alias: claude
"""

    def format_of(self, argv: Sequence[str]) -> str | None:
        value = self.option_value(argv, "--output-format")
        if value is None:
            return None
        if value == "json":
            return JSON
        return STREAM_JSON if value == "stream-json" else "text"

    def unattended(self, argv: Sequence[str]) -> bool:
        return _skips_permissions(argv)

    def fault(self, text: str) -> Fault | None:
        return api_error_fault(text)

    def refusal(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        euid: int | None,
        sandbox: str | None,
    ) -> str | None:
        """As root, ``--dangerously-skip-permissions`` (or ``--permission-mode
        bypassPermissions``) needs ``IS_SANDBOX=1`` — exactly ``1`` (2.1.197) — or the
        CLI exits 1 on every iteration."""
        if not _skips_permissions(argv) or euid != 0:
            return None
        seen = env.get("IS_SANDBOX")
        if seen == IS_SANDBOX:
            return None
        refused = (
            "Claude Code refuses --dangerously-skip-permissions (or --permission-mode "
            "bypassPermissions) as root and would exit 1 on every iteration"
        )
        if seen is not None:
            where = f"the {sandbox} sandbox's env: gives" if sandbox else "the environment has"
            return (
                f"{refused}: {where} IS_SANDBOX={seen!r}, but Claude Code accepts only "
                f"IS_SANDBOX={IS_SANDBOX} (not true, yes or anything else): set it to "
                f"{IS_SANDBOX}"
            )
        if sandbox is not None:
            return (
                f"{refused}: the {sandbox} sandbox is the isolation, so say so to it with "
                "env: [IS_SANDBOX=1] in its sandbox: settings"
            )
        return (
            f"{refused}: set IS_SANDBOX=1 in the environment when this runs in a container "
            "or CI sandbox, run it in a sandbox (`ooda help sandbox`), or as another user"
        )

    def config_sources(
        self, home: Path, workspace: Path, env: Mapping[str, str] | None = None
    ) -> tuple[ConfigSource, ...]:
        moved = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
        user = Path(moved) if moved else home / ".claude"
        return (
            ConfigSource("settings", user / "settings.json"),
            ConfigSource("instructions", user / "CLAUDE.md"),
            ConfigSource("skills", user / "skills"),
            ConfigSource("commands", user / "commands"),
            ConfigSource("agents", user / "agents"),
            ConfigSource("plugins", user / "plugins"),
            ConfigSource("mcp", home / ".claude.json"),
            ConfigSource("settings", workspace / ".claude" / "settings.json", "project"),
            ConfigSource("settings", workspace / ".claude" / "settings.local.json", "project"),
            ConfigSource("instructions", workspace / "CLAUDE.md", "project"),
            ConfigSource("instructions", workspace / "CLAUDE.local.md", "project"),
            ConfigSource("skills", workspace / ".claude" / "skills", "project"),
            ConfigSource("commands", workspace / ".claude" / "commands", "project"),
            ConfigSource("agents", workspace / ".claude" / "agents", "project"),
            ConfigSource("mcp", workspace / ".mcp.json", "project"),
        )

    def configuration(
        self,
        argv: Sequence[str],
        *,
        home: Path,
        workspace: Path,
        env: Mapping[str, str] | None = None,
    ) -> Configuration:
        """What it loads, named as it names it (``claude_code/loaded.py``)."""
        return configuration(argv, home=home, workspace=workspace, env=env)

"""Qwen Code (``@qwen-code/qwen-code``, measured against 0.24.4): the agent
(:class:`QwenAgent`) — which command lines it claims, its machine-readable output
(``--output-format stream-json``: tool calls and tokens, no cost), what its error
messages mean, its credentials, the model API it calls and where it reads its
configuration.

It is a fork of Gemini CLI that speaks OpenAI's chat-completions API (``POST
{OPENAI_BASE_URL}/chat/completions``, streamed) with ``OPENAI_API_KEY``, once its
settings (``~/.qwen/settings.json``: ``{"security": {"auth": {"selectedType":
"openai"}}}``) or ``--auth-type openai`` select that way of logging in; the model is
``OPENAI_MODEL`` or ``--model``. Run unattended it needs ``--yolo`` (or
``--approval-mode yolo``). It reads the prompt on stdin when stdin is not a terminal."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.agents.base import Agent, ConfigSource, ModelApi, OutputFormat
from pytest_ooda.agents.qwen_code.stream import HINT, STREAM_JSON, QwenStream, qwen_fault
from pytest_ooda.replay_rules import ReplayRule

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pytest_ooda.agents.faults import Fault

__all__ = ["QwenAgent", "parse_qwen_stream_json"]

_OUTPUT_OPTIONS = ("--output-format", "-o")
#: What its shell tool reports that differs every run: the process group it ran in.
_REPLAY_RULES = (
    ReplayRule(
        r"Process Group PGID: \d+", "Process Group PGID: <n>", "tool_results", "qwen: PGIDs"
    ),
)
#: Where an administrator configures Qwen Code on Linux.
SYSTEM_SETTINGS = Path("/etc/qwen-code/settings.json")


def parse_qwen_stream_json(text: str) -> QwenStream:
    """``qwen --output-format stream-json``: a finished invocation's whole output, read
    (its :meth:`~QwenStream.report` is the result)."""
    stream = QwenStream()
    for line in text.splitlines():
        stream.feed(line)
    return stream


class QwenAgent(Agent):
    """Qwen Code; see the module docstring."""

    name = "qwen"
    display = "Qwen Code"
    programs = ("qwen",)
    formats = (
        OutputFormat(
            STREAM_JSON,
            lambda **options: QwenStream(**options),
            flags=("--output-format", "stream-json"),
            reports_tools=True,
            reports_tokens=True,
            hint=HINT,
        ),
    )
    model_apis = (
        ModelApi(
            "openai",
            base_url_env="OPENAI_BASE_URL",
            upstream="https://api.openai.com/v1",
            key_env="OPENAI_API_KEY",
            url_suffix="/v1",
            replay_rules=_REPLAY_RULES,
        ),
    )
    credentials = ("OPENAI_API_KEY",)
    credential_files = (".qwen/oauth_creds.json",)
    shell_tools = ("run_shell_command",)
    unattended_flags = ("--yolo", "-y")
    config_env = ("QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH", "QWEN_CODE_SYSTEM_DEFAULTS_PATH")
    image_needs_bash = True
    init_lines = """\
  # Qwen Code reads the prompt on stdin; --yolo lets it write files and run commands.
  # With an OpenAI-compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL)
  # it needs ~/.qwen/settings.json to say {"security": {"auth": {"selectedType": "openai"}}}.
  ai_cmd: "qwen --output-format stream-json --yolo"
  ai_output: qwen-stream-json
"""

    def format_of(self, argv: Sequence[str]) -> str | None:
        value = next((v for v in (self.option_value(argv, o) for o in _OUTPUT_OPTIONS) if v), None)
        return STREAM_JSON if value == "stream-json" else None

    def unattended(self, argv: Sequence[str]) -> bool:
        return super().unattended(argv) or self.option_value(argv, "--approval-mode") == "yolo"

    def fault(self, text: str) -> Fault | None:
        lines = [line for line in text.strip().splitlines()[-8:] if line.strip()]
        for line in reversed(lines):
            found = qwen_fault(line)
            if found is not None:
                return found
        return None

    def config_sources(
        self, home: Path, workspace: Path, env: Mapping[str, str] | None = None
    ) -> tuple[ConfigSource, ...]:
        """``$QWEN_HOME`` (else ``~/.qwen``) and the workspace's ``.qwen``: settings
        (with their MCP servers), ``QWEN.md`` and ``AGENTS.md``, commands, skills,
        subagents; the user's extensions; the machine's settings."""
        source = os.environ if env is None else env
        user = Path(source["QWEN_HOME"]) if source.get("QWEN_HOME") else home / ".qwen"
        system = Path(source.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or SYSTEM_SETTINGS)
        project = workspace / ".qwen"
        return (
            ConfigSource("settings", system, "system"),
            ConfigSource("settings", user / "settings.json"),
            ConfigSource("mcp", user / "settings.json"),
            ConfigSource("instructions", user / "QWEN.md"),
            ConfigSource("instructions", user / "AGENTS.md"),
            ConfigSource("commands", user / "commands"),
            ConfigSource("skills", user / "skills"),
            ConfigSource("agents", user / "agents"),
            ConfigSource("plugins", user / "extensions"),
            ConfigSource("settings", project / "settings.json", "project"),
            ConfigSource("mcp", project / "settings.json", "project"),
            ConfigSource("instructions", workspace / "QWEN.md", "project"),
            ConfigSource("instructions", workspace / "AGENTS.md", "project"),
            ConfigSource("commands", project / "commands", "project"),
            ConfigSource("skills", project / "skills", "project"),
            ConfigSource("agents", project / "agents", "project"),
        )

"""Gemini CLI (``@google/gemini-cli``, measured against 0.61): the agent
(:class:`GeminiAgent`) — which command lines it claims, its two machine-readable output
formats (``--output-format stream-json``: tool calls and tokens; ``--output-format
json``: tokens), what its error messages mean, its credentials, the Gemini API it calls
(``GOOGLE_GEMINI_BASE_URL``: a first ``generateContent`` call of its model router, then
``streamGenerateContent`` for every turn) and where it reads its configuration
(``loaded.py``).

Run unattended it needs ``--yolo`` (or ``--approval-mode yolo``): otherwise a
non-interactive run refuses every tool that writes or runs something. It reads the
prompt on stdin when stdin is not a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ooda.agents.base import Agent, ModelApi, OutputFormat
from pytest_ooda.agents.gemini_cli.loaded import configuration
from pytest_ooda.agents.gemini_cli.stream import (
    HINTS,
    JSON,
    STREAM_JSON,
    GeminiJsonStream,
    GeminiStream,
    gemini_fault,
)
from pytest_ooda.replay_rules import ReplayRule

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from pytest_ooda.agents.faults import Fault
    from pytest_ooda.agents.fingerprint import Configuration

__all__ = ["GeminiAgent", "parse_gemini_json", "parse_gemini_stream_json"]

_OUTPUT_OPTIONS = ("--output-format", "-o")
#: What Gemini CLI tells its model that differs from run to run (0.61): the project's
#: temporary directory, ``~/.gemini/tmp/NAME`` where NAME is the workspace's name, with
#: ``-1``, ``-2`` … once another directory of that name has had one; and the id it gives
#: a function call the API sent without one, ``NAME_<milliseconds since 1970>_<index>``;
#: the process group its shell tool reports; and the day it tells the model it is, in
#: the user's locale ("Monday, December 7, 2026"), so a cassette replays tomorrow.
_REPLAY_RULES = (
    ReplayRule(
        r"(\.gemini/tmp/)[^/\s\"'`]+", r"\1<ooda:project>", "both", "gemini: project temp dir"
    ),
    ReplayRule(r"^(\w+?)_\d{12,}_(\d+)$", r"\1_<ooda:time>_\2", "both", "gemini: call ids"),
    ReplayRule(r"(Process Group PGID: )\d+", r"\1<ooda:pid>", "both", "gemini: shell pids"),
    ReplayRule(
        r"(Today's date is )[^\n]*?( \(formatted according to the user's locale\))",
        r"\1<ooda:date>\2",
        "both",
        "gemini: today's date",
    ),
)


def parse_gemini_stream_json(text: str) -> GeminiStream:
    """``gemini --output-format stream-json``: a finished invocation's whole output,
    read (its :meth:`~GeminiStream.report` is the result)."""
    stream = GeminiStream()
    for line in text.splitlines():
        stream.feed(line)
    return stream


def parse_gemini_json(text: str) -> GeminiJsonStream:
    """``gemini --output-format json``: a finished invocation's whole output, read."""
    stream = GeminiJsonStream()
    for line in text.splitlines():
        stream.feed(line)
    return stream


class GeminiAgent(Agent):
    """Gemini CLI; see the module docstring."""

    name = "gemini"
    display = "Gemini CLI"
    programs = ("gemini",)
    formats = (
        OutputFormat(
            STREAM_JSON,
            lambda **options: GeminiStream(**options),
            flags=("--output-format", "stream-json"),
            reports_tools=True,
            reports_tokens=True,
            hint=HINTS[STREAM_JSON],
        ),
        OutputFormat(
            JSON,
            lambda **options: GeminiJsonStream(**options),
            flags=("--output-format", "json"),
            reports_tokens=True,
            hint=HINTS[JSON],
        ),
    )
    model_apis = (
        ModelApi(
            "gemini",
            base_url_env="GOOGLE_GEMINI_BASE_URL",
            upstream="https://generativelanguage.googleapis.com",
            key_env="GEMINI_API_KEY",
            other_credentials=("GOOGLE_API_KEY",),
            credential_headers=("x-goog-api-key", "authorization"),
            replay_rules=_REPLAY_RULES,
        ),
    )
    credentials = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    credential_files = (".gemini/oauth_creds.json",)
    shell_tools = ("run_shell_command",)
    unattended_flags = ("--yolo", "-y")
    config_env = (
        "GEMINI_CLI_HOME",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    )
    image_needs_bash = True
    init_lines = """\
  # Gemini CLI reads the prompt on stdin; --yolo lets it write files and run commands.
  # With an API key it needs ~/.gemini/settings.json to say
  # {"security": {"auth": {"selectedType": "gemini-api-key"}}}.
  ai_cmd: "gemini --output-format stream-json --yolo"
  ai_output: gemini-stream-json
"""

    def format_of(self, argv: Sequence[str]) -> str | None:
        value = next((v for v in (self.option_value(argv, o) for o in _OUTPUT_OPTIONS) if v), None)
        if value == "json":
            return JSON
        return STREAM_JSON if value == "stream-json" else None

    def unattended(self, argv: Sequence[str]) -> bool:
        return super().unattended(argv) or self.option_value(argv, "--approval-mode") == "yolo"

    def fault(self, text: str) -> Fault | None:
        lines = [line for line in text.strip().splitlines()[-8:] if line.strip()]
        for line in reversed(lines):
            found = gemini_fault(line)
            if found is not None:
                return found
        return None

    def configuration(
        self,
        argv: Sequence[str],
        *,
        home: Path,
        workspace: Path,
        env: Mapping[str, str] | None = None,
    ) -> Configuration:
        """What it loads, named as it names it (``gemini_cli/loaded.py``)."""
        return configuration(argv, home=home, workspace=workspace, env=env)

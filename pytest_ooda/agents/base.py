"""The agent interface: everything pytest-ooda knows about one agent CLI, asked of the
agent instead of decided by its name anywhere else.

An :class:`Agent` says which command lines it claims (:meth:`Agent.claims`), its alias
and default command line, its output formats (:class:`OutputFormat`: a name, the
stream reader, the flags that ask for it, whether it lists tool calls and cost), what
its failures mean (:meth:`Agent.fault`: rate limit, overload, refused credentials, in
its own words), when it refuses to start (:meth:`Agent.refusal`), the credentials and
base-URL variables it needs (:attr:`Agent.credentials`, :meth:`Agent.missing_credentials`),
what an offline image needs for it, its model APIs for record and replay
(:class:`ModelApi`), its ``ooda init`` lines, and — for a fingerprint of a run — its
version as the CLI reports it (:meth:`Agent.version`) and the configuration it loads
and from where (:meth:`Agent.config_sources`).

Built-in agents are one module each in this package; others register a subclass under
the ``pytest_ooda.agents`` entry-point group (docs/agents.md, "Adding an agent").
"""

from __future__ import annotations

import json
import os
import subprocess
from abc import ABC
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda.agents.faults import Fault
    from pytest_ooda.agents.fingerprint import Configuration
    from pytest_ooda.agents.stream import AgentStream
    from pytest_ooda.replay_rules import ReplayRule

__all__ = ["Agent", "ConfigSource", "ModelApi", "OutputFormat"]


@dataclass(frozen=True)
class OutputFormat:
    """One way an agent CLI prints an invocation (an ``ai_output`` value).

    ``reader`` makes the stream reader, called with the keywords ``max_line``, ``budget``
    (the run's ``ToolTextBudget``) and ``watched`` (``None``: plain text, read as it
    is); ``flags``
    are what a built-in alias adds to the command to ask for it; ``hint`` what the
    command line needs when it printed nothing of the format."""

    name: str
    reader: Callable[..., AgentStream] | None = None
    flags: tuple[str, ...] = ()
    reports_tools: bool = False
    reports_cost: bool = False
    reports_tokens: bool = False
    hint: str = ""


@dataclass(frozen=True)
class ModelApi:
    """A model API an agent CLI calls, as the record-and-replay proxy needs it.

    ``name`` is the proxy's route (``http://127.0.0.1:PORT/<name>``) and the head of a
    cassette's ``endpoint``; the CLI reads its base URL from ``base_url_env`` and adds
    its own paths to it, so the proxy's URL ends in ``url_suffix`` (``/v1`` where the
    CLI expects one); ``upstream`` is the provider's URL when the environment gives no
    base URL. ``key_env`` is the key a replay gives a placeholder for when neither it nor
    one of ``other_credentials`` is set; ``credential_headers`` are never stored.
    ``streaming`` names the response stream (``sse``); ``error_shape`` how an error
    body looks (``"type-error"``: ``{"type": "error", "error": {…}}``, else
    ``{"error": {…}}``)."""

    name: str
    base_url_env: str
    upstream: str
    key_env: str
    url_suffix: str = ""
    other_credentials: tuple[str, ...] = ()
    credential_headers: tuple[str, ...] = ("authorization", "x-api-key")
    streaming: str = "sse"
    error_shape: str = "error-object"
    #: Top-level request fields that identify one invocation (ids, start times): a
    #: replay matches them as ``<ooda:run-id>``.
    run_id_fields: tuple[str, ...] = ()
    #: What varies in the agent's own tool output from run to run (a random id, a wall
    #: time), normalised before a request is matched, as ``replay_normalise:`` rules.
    replay_rules: tuple[ReplayRule, ...] = ()

    def error_body(self, message: str) -> bytes:
        """An error response body in the API's own shape, so the CLI shows ``message``."""
        detail = {"type": "invalid_request_error", "message": message}
        if self.error_shape == "type-error":
            return json.dumps({"type": "error", "error": detail}).encode()
        return json.dumps({"error": {**detail, "code": 400}}).encode()


@dataclass(frozen=True)
class ConfigSource:
    """A place an agent reads configuration from: what it is (``settings``, ``skills``,
    ``instructions``, ``mcp``, ``hooks``, ``plugins``, ``commands``, ``agents``), the
    path, and whether it is the user's (home) or the project's (workspace)."""

    what: str
    path: Path
    scope: str = "user"


class Agent(ABC):
    """One agent CLI; see the module docstring. Subclasses set the class attributes and
    override what differs from the defaults (a plain-text command that claims nothing)."""

    #: The agent's name: the registry key, ``ooda init --agent NAME``.
    name: ClassVar[str]
    #: How people call it (``Claude Code``), in messages.
    display: ClassVar[str] = ""
    #: The program names (``basename(argv[0])``) it claims.
    programs: ClassVar[tuple[str, ...]] = ()
    #: Its built-in alias (``ai_cmd_alias: NAME``) and that alias's command line.
    alias: ClassVar[str | None] = None
    default_command: ClassVar[str | None] = None
    #: Its output formats.
    formats: ClassVar[tuple[OutputFormat, ...]] = ()
    #: The format its alias is read in when nothing says (``None``: ``text``).
    alias_format: ClassVar[str | None] = None
    #: The model APIs it calls (for record and replay through the API proxy).
    model_apis: ClassVar[tuple[ModelApi, ...]] = ()
    #: Variables any one of which lets it authenticate (an API key, a token).
    credentials: ClassVar[tuple[str, ...]] = ()
    #: Files under its ``HOME`` that hold a login instead (``.codex/auth.json``).
    credential_files: ClassVar[tuple[str, ...]] = ()
    #: The names of its shell tool (whose summary is the command line it ran).
    shell_tools: ClassVar[tuple[str, ...]] = ()
    #: Words on its command line that switch its permission checks off.
    unattended_flags: ClassVar[tuple[str, ...]] = ()
    #: Variables that move where it reads its configuration (``CODEX_HOME``).
    config_env: ClassVar[tuple[str, ...]] = ()
    #: The ``loop:`` lines ``ooda init --agent NAME`` writes (indented two spaces).
    init_lines: ClassVar[str] = ""
    #: What ``ooda init`` adds to the ``pytest -m live`` command it suggests.
    init_run_options: ClassVar[str] = ""
    #: Whether an offline image of it needs ``bash`` (its shell tool refuses ``sh``).
    image_needs_bash: ClassVar[bool] = False

    # -- which commands -------------------------------------------------------------

    def claims(self, argv: Sequence[str]) -> bool:
        """Whether the command line ``argv`` runs this agent."""
        return bool(argv) and PurePath(argv[0]).name in self.programs

    def format_of(self, argv: Sequence[str]) -> str | None:
        """The output format its own flags on ``argv`` ask for (``None``: they say
        nothing, or it has no machine-readable format)."""
        return None

    def format_named(self, name: str) -> OutputFormat | None:
        return next((fmt for fmt in self.formats if fmt.name == name), None)

    def pointed_at(self, argv: Sequence[str], urls: Mapping[str, str]) -> tuple[str, ...]:
        """``argv`` with the agent pointed at ``urls`` (model API name -> base URL, the
        record-and-replay proxy's) where its base-URL variable does not do it (an agent
        that reads its provider from a config file); by default ``argv`` unchanged."""
        return tuple(argv)

    def unattended(self, argv: Sequence[str]) -> bool:
        """Whether ``argv`` runs it with its permission checks off."""
        words = set(argv)
        return any(flag in words for flag in self.unattended_flags)

    # -- what its failures mean ---------------------------------------------------

    def fault(self, text: str) -> Fault | None:
        """What the agent's own last words ``text`` (a failed invocation's output) say
        went wrong, when it is the infrastructure's (rate limit, overload, refused
        credentials); ``None`` for anything else."""
        return None

    def refusal(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        euid: int | None,
        sandbox: str | None,
    ) -> str | None:
        """Why it would refuse to start with ``argv`` where it runs (``env`` and
        ``euid`` as it will have them there; ``sandbox`` the kind, ``None`` for none),
        else ``None``."""
        return None

    def missing_credentials(
        self, env: Mapping[str, str], home_files: Sequence[str] = ()
    ) -> str | None:
        """Why it cannot authenticate with the environment ``env`` and the home files
        ``home_files`` (paths relative to ``HOME``) a sandbox gives it — naming the
        variables it reads — else ``None``. An agent with no ``credentials`` needs none."""
        if not self.credentials and not self.credential_files:
            return None
        if any(env.get(name) for name in self.credentials):
            return None
        listed = {os.path.normpath(path.removeprefix("~/")) for path in home_files}
        if any(os.path.normpath(path) in listed for path in self.credential_files):
            return None
        if any(
            any(os.path.normpath(path).startswith(parent + os.sep) for parent in listed)
            for path in self.credential_files
        ):
            return None
        ways = " or ".join(self.credentials)
        if self.credential_files:
            files = ", ".join(f"~/{path}" for path in self.credential_files)
            ways += f" (or its login in home_files: {files})"
        return f"{self.display or self.name} has no credentials: set {ways}"

    # -- fingerprint ------------------------------------------------------------

    def version_argv(self, argv: Sequence[str]) -> tuple[str, ...]:
        """The command that prints its version."""
        return (argv[0], "--version")

    def version(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        launch: Callable[[Sequence[str]], tuple[Sequence[str], Mapping[str, str] | None]]
        | None = None,
    ) -> str | None:
        """Its version as the CLI reports it (the first line of ``--version``), ``None``
        when it does not say (not installed, no such flag, no answer in 20 seconds).
        ``launch`` turns the version command into the command line and environment that
        run it where the agent runs (inside a sandbox: another installation may be
        there). Asked once per process and command by a run's fingerprint
        (:func:`pytest_ooda.agents.agent_version`)."""
        words: Sequence[str] = self.version_argv(argv)
        if launch is not None:
            words, env = launch(words)
        try:
            done = subprocess.run(
                list(words),
                capture_output=True,
                text=True,
                timeout=20,
                env=None if env is None else dict(env),
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        return lines[0] if done.returncode == 0 and lines else None

    def config_sources(
        self, home: Path, workspace: Path, env: Mapping[str, str] | None = None
    ) -> tuple[ConfigSource, ...]:
        """Where it reads configuration from with ``home`` as ``HOME`` in ``workspace``
        (settings, instructions such as ``AGENTS.md``, skills, MCP servers, hooks …),
        whether they exist or not: a fingerprint hashes what is there."""
        return ()

    def configuration(
        self,
        argv: Sequence[str],
        *,
        home: Path,
        workspace: Path,
        env: Mapping[str, str] | None = None,
    ) -> Configuration:
        """What it loads when ``argv`` runs with ``home`` as ``HOME`` in ``workspace``,
        for a run's fingerprint: the sha256 of its effective settings (the command line
        and its settings files) and each skill, slash command, subagent, MCP server,
        hook, plugin and instructions file by name and content hash. By default read
        from :meth:`config_sources`; an agent that names what it loads itself (its hooks,
        its plugins' skills) says so here."""
        from pytest_ooda.agents.fingerprint import from_sources

        return from_sources(self.config_sources(home, workspace, env), argv)

    # -- helpers for subclasses -----------------------------------------------------

    @classmethod
    def option_value(cls, argv: Sequence[str], option: str) -> str | None:
        """The value of ``option`` on ``argv`` (``--opt value`` or ``--opt=value``)."""
        for index, word in enumerate(argv):
            if word == option and index + 1 < len(argv):
                return argv[index + 1]
            if word.startswith(option + "="):
                return word.partition("=")[2]
        return None

    def __repr__(self) -> str:
        return f"<agent {self.name}>"

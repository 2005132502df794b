"""The config file schema: keys, defaults, environment variables and value checks."""

from __future__ import annotations

import math
import re
import shlex
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda._types import (
    ITERATION_MODES,
    LOG_LEVELS,
    LOG_TIMESTAMP_FORMATS,
    PHASES,
    PROMPT_FORMATS,
    SEVERITY_LEVELS,
)
from pytest_ooda._util import did_you_mean, display_path
from pytest_ooda.agents import builtin_aliases, output_format, output_formats
from pytest_ooda.errors import ConfigError, TemplateError
from pytest_ooda.yamlnodes import (
    ANY_ITEM,
    ANY_KEY,
    Mark,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from pytest_ooda.config.model import FragmentAction
    from pytest_ooda.sandbox import SandboxSpec


# Fragment parameters are typed as Go's yaml.v3 types them (``yes`` stays a string, ``1e3``
# is a float, dates are times) so templates render as in the Go implementation; the rest
# of a config keeps YAML 1.1 typing (``off`` in ``lint:``, ``yes`` for booleans).
GO_TYPED_PARAMETERS = ("procedures", ANY_KEY, frozenset(PHASES), ANY_ITEM, "parameters")
CONFIG_FILENAME = "ooda-config.yml"
#: rooda's name for the same file: found when there is no ``ooda-config.yml``, and read
#: leniently (unknown keys are located warnings, as rooda ignores them).
ROODA_CONFIG_FILENAME = "rooda-config.yml"
#: Keys whose empty string means "not set", as in rooda (its docs write ``ai_cmd: ""``;
#: an empty ``display`` keeps the built-in's).
EMPTY_MEANS_UNSET = frozenset(
    {
        "ai_cmd",
        "ai_cmd_alias",
        "display",
        "summary",
        "description",
        "iteration_mode",
        "log_level",
        "log_timestamp_format",
    }
)
#: ``loop:`` keys rooda reads ``0`` of as "not set" (Go's zero value); in a
#: rooda-config.yml we do too, with a warning, instead of refusing the file.
ZERO_MEANS_UNSET_IN_ROODA = frozenset({"max_output_buffer", "failure_threshold"})

#: Each built-in agent's alias and its command line (``pytest_ooda.agents``): how the
#: alias's output is read, and the flags that ask for it, are the agent's to say.
BUILTIN_ALIASES: Mapping[str, str] = builtin_aliases()

LINT_SEVERITIES = SEVERITY_LEVELS
API_PROVIDERS = ("anthropic", "openai")

TOP_LEVEL_KEYS = ("loop", "ai_cmd_aliases", "procedures", "lint", "redact", "replay_normalise")
REDACT_KEYS = ("patterns", "env")
LOOP_KEYS = (
    "iteration_mode",
    "default_max_iterations",
    "iteration_timeout",
    "max_output_buffer",
    "failure_threshold",
    "log_level",
    "show_ai_output",
    "ai_cmd",
    "ai_cmd_alias",
    "ai_api",
    "ai_output",
    "max_cost",
    "max_tokens",
    "log_timestamp_format",
    "prompt_format",
    "sandbox",
    "retry",
)
PROCEDURE_KEYS = (
    "display",
    "summary",
    "description",
    *PHASES,
    "iteration_mode",
    "default_max_iterations",
    "iteration_timeout",
    "max_output_buffer",
    "ai_cmd",
    "ai_cmd_alias",
    "ai_api",
    "ai_output",
    "max_cost",
    "max_tokens",
    "prompt_format",
    "sandbox",
    "retry",
)
FRAGMENT_KEYS = ("content", "path", "parameters")
API_KEYS = (
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "max_tokens",
    "timeout",
    "price_input_per_mtok",
    "price_output_per_mtok",
)

LOOP_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "iteration_mode": "max-iterations",
        "default_max_iterations": 5,
        "iteration_timeout": None,
        "max_output_buffer": 10_485_760,
        "failure_threshold": 3,
        "log_level": "info",
        "show_ai_output": False,
        "ai_cmd": None,
        "ai_cmd_alias": None,
        "ai_api": None,
        # None: read as the command's own flags say (see run_settings), else text.
        "ai_output": None,
        "max_cost": None,
        "max_tokens": None,
        "log_timestamp_format": LOG_TIMESTAMP_FORMATS[0],
        "prompt_format": PROMPT_FORMATS[0],
        # None: no sandbox (`none`), with a once-per-session note for unattended agents.
        "sandbox": None,
        "retry": None,
    }
)

ENV_VARS: Mapping[str, str] = MappingProxyType(
    {
        "OODA_LOOP_AI_CMD": "ai_cmd",
        "OODA_LOOP_AI_CMD_ALIAS": "ai_cmd_alias",
        "OODA_LOOP_ITERATION_MODE": "iteration_mode",
        "OODA_LOOP_DEFAULT_MAX_ITERATIONS": "default_max_iterations",
        "OODA_LOOP_ITERATION_TIMEOUT": "iteration_timeout",
        "OODA_LOOP_MAX_OUTPUT_BUFFER": "max_output_buffer",
        "OODA_LOOP_FAILURE_THRESHOLD": "failure_threshold",
        "OODA_LOOP_LOG_LEVEL": "log_level",
        "OODA_LOOP_SHOW_AI_OUTPUT": "show_ai_output",
        "OODA_LOOP_AI_OUTPUT": "ai_output",
        "OODA_LOOP_MAX_COST": "max_cost",
        "OODA_LOOP_MAX_TOKENS": "max_tokens",
        "OODA_LOOP_LOG_TIMESTAMP_FORMAT": "log_timestamp_format",
        "OODA_LOOP_PROMPT_FORMAT": "prompt_format",
        # Named as the issue and docs spell it: the sandbox is a run setting users set
        # per CI job, like a kind name on the command line.
        "OODA_SANDBOX": "sandbox",
    }
)


def rooda_variable(name: str) -> str:
    """rooda's name for one of our environment variables (``OODA_X`` -> ``ROODA_X``),
    read when ours is not set."""
    return "R" + name


# YAML 1.1 reads unquoted yes/no/on/off/true/false and numbers as non-strings.
_PROCEDURE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LINT_RULE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


class _Invalid(Exception):
    """A value failed a validator; ``expected`` says what was wanted. A validator that
    knows more than what it expected says the ``problem`` itself (``unknown sandbox kind
    'podman'``), with a ``hint`` such as "did you mean"."""

    def __init__(
        self, expected: str, *, problem: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(expected)
        self.expected = expected
        self.problem = problem
        self.hint = hint

    def stated(self, got: str) -> str:
        """The problem, or ``expected …, got …``."""
        return self.problem or f"expected {self.expected}, got {got}"


def _check_choice(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str) or value not in choices:
            hint = did_you_mean(value, choices) if isinstance(value, str) else ""
            raise _Invalid("one of " + ", ".join(choices), hint=hint or None)
        return value

    return check


def _check_output(value: Any) -> Any:
    """An ``ai_output``: the name of a format some agent registers."""
    try:
        if isinstance(value, str):
            output_format(value)
            return value
    except ConfigError:
        pass
    raise _Invalid("one of " + ", ".join(output_formats()))


def _check_positive_int(value: Any) -> Any:
    # bool is a subclass of int in Python; YAML `true` is not a count.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Invalid("an integer >= 1")
    return value


def _check_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise _Invalid("a boolean (true or false)")
    return value


def _check_command(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("a non-empty command string")
    try:
        shlex.split(value)
    except ValueError as exc:
        # Caught at load time rather than when a run starts, like every other mistake.
        raise _Invalid(f"a command line with balanced quotes ({exc})") from None
    return value


def _check_cost(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise _Invalid("an amount in US dollars > 0")
    return float(value)


RETRY_KEYS = ("attempts", "delay", "max_delay", "count_agent_reported_errors")


def check_retry(value: Any) -> Any:
    """``retry: {attempts: 2, delay: 1, max_delay: 60, count_agent_reported_errors:
    as_failures}``, or ``retry: 3`` for the attempts alone (0 turns retrying off)."""
    from pytest_ooda._types import AGENT_REPORTED_COUNTS
    from pytest_ooda.config.model import RetrySettings

    expected = (
        "a mapping {attempts: N, delay: SECONDS, max_delay: SECONDS, "
        "count_agent_reported_errors: as_failures|as_errors} or a number of attempts"
    )
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise _Invalid("a number of attempts >= 0")
        return RetrySettings(attempts=value)
    if not hasattr(value, "items"):
        raise _Invalid(expected)
    unknown = [str(key) for key in value if key not in RETRY_KEYS]
    if unknown:
        raise _Invalid(f"{expected} (unknown key {unknown[0]!r})")
    attempts = value.get("attempts", RetrySettings.attempts)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        raise _Invalid("retry.attempts to be an integer >= 0")
    delays = {}
    for key in ("delay", "max_delay"):
        amount = value.get(key, getattr(RetrySettings, key))
        if (
            isinstance(amount, bool)
            or not isinstance(amount, int | float)
            or not math.isfinite(amount)
            or amount < 0
        ):
            raise _Invalid(f"retry.{key} to be a number of seconds >= 0")
        delays[key] = float(amount)
    counted = value.get("count_agent_reported_errors", "as_failures")
    if counted not in AGENT_REPORTED_COUNTS:
        raise _Invalid(
            "retry.count_agent_reported_errors to be one of " + ", ".join(AGENT_REPORTED_COUNTS)
        )
    return RetrySettings(attempts=attempts, agent_reported=counted, **delays)


def _check_alias_name(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("an alias name (a non-empty string)")
    return value


def check_sandbox(value: Any, base_dir: Path | None = None) -> SandboxSpec:
    """A ``sandbox:`` value (a kind name, or a mapping with ``kind:`` and its options)."""
    from pytest_ooda.sandbox import OptionError, parse_spec

    try:
        return parse_spec(value, base_dir=base_dir)
    except OptionError as exc:
        where = f"{exc.key}: " if exc.key else ""
        problem = f"{where}{exc.message}"
        raise _Invalid(exc.one_line(), problem=problem, hint=exc.hint) from None


def _check_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise _Invalid("a string (quote it)")
    return value


_LOOP_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "iteration_mode": _check_choice(ITERATION_MODES),
        "default_max_iterations": _check_positive_int,
        "iteration_timeout": _check_positive_int,
        "max_output_buffer": _check_positive_int,
        "failure_threshold": _check_positive_int,
        "log_level": _check_choice(LOG_LEVELS),
        "show_ai_output": _check_bool,
        "ai_cmd": _check_command,
        "ai_cmd_alias": _check_alias_name,
        "ai_output": _check_output,
        "max_cost": _check_cost,
        "max_tokens": _check_positive_int,
        "log_timestamp_format": _check_choice(LOG_TIMESTAMP_FORMATS),
        "prompt_format": _check_choice(PROMPT_FORMATS),
        "sandbox": check_sandbox,
        "retry": check_retry,
    }
)

_PROCEDURE_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "display": _check_text,
        "summary": _check_text,
        "description": _check_text,
        "iteration_mode": _check_choice(ITERATION_MODES),
        "default_max_iterations": _check_positive_int,
        "iteration_timeout": _check_positive_int,
        "max_output_buffer": _check_positive_int,
        "ai_cmd": _check_command,
        "ai_cmd_alias": _check_alias_name,
        "ai_output": _check_output,
        "max_cost": _check_cost,
        "max_tokens": _check_positive_int,
        "prompt_format": _check_choice(PROMPT_FORMATS),
        "sandbox": check_sandbox,
        "retry": check_retry,
    }
)


def _parse_env_value(key: str, text: str) -> Any:
    check = _LOOP_CHECKS[key]
    if check is _check_positive_int:
        if not re.fullmatch(r"\s*\+?[0-9]+\s*", text):
            raise _Invalid("an integer >= 1")
        return check(int(text))
    if check is _check_bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise _Invalid("a boolean (true/false, 1/0, yes/no)")
    if check is _check_cost:
        try:
            amount = float(text)
        except ValueError:
            raise _Invalid("an amount in US dollars > 0") from None
        return check(amount)
    return check(text.strip() if key != "ai_cmd" else text)


def _check_url(value: Any) -> Any:
    if not isinstance(value, str) or not re.match(r"https?://[^\s/]+", value):
        raise _Invalid("an http:// or https:// URL")
    return value


def _check_env_name(value: Any) -> Any:
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise _Invalid("an environment variable name (e.g. ANTHROPIC_API_KEY)")
    return value


def _check_positive_number(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise _Invalid("a number of seconds > 0")
    return value


def _check_price(value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise _Invalid("a price per million tokens >= 0")
    return value


def located_template_error(
    exc: TemplateError, action: FragmentAction, where: str, display: str | None, mark: Mark
) -> TemplateError:
    """Re-raise a template error at the config location of the fragment that owns it."""
    label = "parse" if exc.kind == "parse" else "execution"
    message = exc.message
    prefix = f"template {label} error: "
    if not message.startswith(prefix):
        message = prefix + message
    hint: str | None
    if exc.template_line is not None:
        if action.file is not None:
            hint = f"in {display_path(action.file)}:{exc.template_line}"
        else:
            hint = f"in line {exc.template_line} of the inline content"
    else:
        hint = exc.hint
    return TemplateError(
        f"{where}: {message}",
        kind=exc.kind,
        template_line=exc.template_line,
        template_file=action.file,
        file=display,
        line=mark.line,
        column=mark.column,
        hint=hint,
    )


_API_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "provider": _check_choice(API_PROVIDERS),
        "model": _check_command,
        "base_url": _check_url,
        "api_key_env": _check_env_name,
        "max_tokens": _check_positive_int,
        "timeout": _check_positive_number,
        "price_input_per_mtok": _check_price,
        "price_output_per_mtok": _check_price,
    }
)


def check_api_value(key: str, value: Any) -> Any:
    """One ``ai_api`` key's value checked as the config file's are (for ``ai_api``
    blocks outside a config file, e.g. a scenario's judge); ``ValueError`` saying what
    was expected."""
    try:
        return _API_CHECKS[key](value)
    except _Invalid as exc:
        raise ValueError(exc.expected) from None

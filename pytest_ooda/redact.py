"""Secret redaction applied to everything pytest-ooda writes (recordings, live-run
reports): outputs, prompts, file contents and file names.

Three sources, applied in this order:

1. the values of environment variables whose names say they are secret (``*KEY*``,
   ``*TOKEN*``, ``*SECRET*``, ``*PASS*``, ``*CREDENTIAL*``, ``*DSN*``, and ``PWD``,
   ``PAT``, ``AUTH`` as a name part, e.g. ``DB_PWD``, ``GH_PAT``), plus names a config's
   ``redact.env`` lists;
2. our own patterns for what detectors miss or cut short: private key blocks, passwords
   in URLs, ``Authorization:`` and ``Bearer`` values, prefixed API tokens of any length
   (``sk-``, ``sk_live_``, ``hf_``, ``npm_``, ``glpat-``, ``ghp_`` …), AWS secret keys
   named as such, and a config's ``redact.patterns``;
3. unquoted assignments whose name says secret, as ``.env`` files, shell scripts and YAML
   write them (``DB_PASSWORD=…``, ``export API_TOKEN=…``, ``client_secret: …``),
   ``.netrc`` passwords, Docker ``config.json`` auths, the ``data:`` values of a
   Kubernetes ``Secret``, and ``Password=…;`` in connection strings. An assignment is
   taken only when it is the whole line and its value one word that is not a reference
   (``$VAR``, ``settings.SECRET``, a call), so code and prose stay as they are;
4. Yelp's detect-secrets: every regex-based plugin (AWS, Slack, Stripe, JWT, GitHub,
   GitLab, npm, SendGrid, Twilio, Discord, PyPI …), the keyword plugin
   (``password = "…"``) and the base64 high-entropy plugin. Left out on purpose: the
   public-IP plugin (addresses are not secrets) and the hex high-entropy plugin (it
   would take every quoted git SHA and checksum in an agent's output).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["REDACTED", "Redactor", "StreamRedactor", "is_secret_key", "is_secret_name", "redact"]

REDACTED = "<redacted>"
# Shorter values ("1", "yes", "us" for KEYBOARD_LAYOUT) would redact ordinary words.
MIN_SECRET_LENGTH = 6
#: A name containing one of these is a secret's name.
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "DSN")
#: ... and so is a name with one of these as a whole ``_``-separated part.
SECRET_NAME_WORDS = frozenset({"PWD", "PAT", "AUTH"})
#: Names that match the rules above but hold no secret.
NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KEYMAP"})

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)")
_AUTH_HEADER = re.compile(
    r"(?i)(\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token|digest)?\s*)"
    r"([^\s\"',;]{6,})"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})")
_AWS_SECRET = re.compile(
    r"(?i)(aws[_-]?secret[_-]?(?:access[_-]?)?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{30,})"
)
_OWN_TOKENS = (
    # Anthropic/OpenAI style: sk-..., sk-ant-api03-..., sk-proj-...
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    # Stripe live/test secret and restricted keys, any length
    re.compile(r"\b[rs]k_(?:live|test)_[0-9a-zA-Z]{10,}"),
    # GitHub: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    # GitLab personal/deploy tokens, Hugging Face, npm
    re.compile(r"\bgl(?:pat|dt|ft|rt|soat)-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{36,}"),
    # Slack tokens and webhooks, AWS access key ids (incl. ASIA session ids), Google keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+"),
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    # JSON web tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
)
# `NAME=value` / `name: value` as a whole line (optionally `export`ed, with a trailing
# `# comment`, `;` or `,`): group 1 is the name, group 2 the value.
_ASSIGNMENT = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+|-[ \t]+)?[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*[:=][ \t]*"
    r"([^\s\"'`,;(){}\[\]<>$]{6,})[ \t]*[,;]?[ \t]*(?:#.*)?$"
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: A name with one of these parts (split at ``_ . -`` and camelCase) names a secret…
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "credential",
        "credentials",
        "auth",
        "apikey",
        "passphrase",
        "authtoken",
        "secretkey",
        "accesskey",
        "privatekey",
    }
)
#: … or a part ending in one of these (``PGPASSWORD``, ``BOTTOKEN``) …
_SECRET_ENDINGS = ("password", "passwd", "secret", "token")
#: … and so does one with one of these pairs of adjacent parts.
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("access", "key"), ("private", "key"), ("client", "secret")}
)
_DOTTED_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
_NOT_VALUES = frozenset({"none", "null", "true", "false", "redacted", "changeme_not_set"})
# .netrc: `machine h login u password p` on one line, or `password p` alone on a line.
_NETRC = re.compile(
    r"(?im)^[ \t]*(?:(?:machine|default)\b[^\n]*?[ \t])?(?:password|passwd)[ \t]+(\S+)[ \t]*$"
)
_NETRC_INLINE = re.compile(r"(?im)^[ \t]*machine[ \t]+\S+[^\n]*?[ \t]password[ \t]+(\S+)")
# Docker's config.json (`"auth": "dXNlcjpwYXNz"`) and other JSON credentials by key.
_JSON_AUTH = re.compile(
    r"(?i)\"(auth|identitytoken|registrytoken|password|secret|token|access_token)\"[ \t]*:"
    r"[ \t]*\"([^\"\s]{4,})\""
)
# `Password=…;` / `Pwd=…` in ADO.NET / ODBC / JDBC connection strings.
_CONNECTION_PASSWORD = re.compile(
    r"(?i)(?:;[ \t]*(?:password|pwd)[ \t]*=[ \t]*([^;\"'\s()\[\]{}]+)"
    r"|\b(?:password|pwd)[ \t]*=[ \t]*([^;\"'\s()\[\]{}]+)(?=;))"
)
_K8S_SECRET = re.compile(r"(?m)^[ \t]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*$")
_K8S_DATA = re.compile(r"^([ \t]*)(?:data|stringData):[ \t]*$")
_K8S_ITEM = re.compile(r"^([ \t]+)([^\s:#][^:]*):[ \t]*(\S.*?)[ \t]*$")
_KEYWORD_HINT = re.compile(r"(?i)pass|pwd|secret|key|token|auth|cred|api|private")
_QUOTED_RUN = re.compile(r"[\"'][A-Za-z0-9+/=_-]{20,}")
_DETECT_SECRETS_SKIPPED = frozenset({"Public IP (ipv4)", "Hex High Entropy String", "Private Key"})


def is_secret_key(name: str) -> bool:
    """Whether a config key or variable named ``name`` (any case style) holds a secret:
    ``DB_PASSWORD``, ``clientSecret``, ``api-key``, ``_authToken``; not ``max_tokens``,
    ``sort_key`` or ``author``."""
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if any(part in _SECRET_WORDS or part.endswith(_SECRET_ENDINGS) for part in parts):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts))


def _assignment(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    if (
        not is_secret_key(name)
        or value.lower() in _NOT_VALUES
        or value == REDACTED
        or _DOTTED_REFERENCE.match(value)
    ):
        return match.group(0)
    start, end = match.span(2)
    text = match.group(0)
    return text[: start - match.start()] + REDACTED + text[end - match.start() :]


def _group_redacted(match: re.Match[str]) -> str:
    """The match with its last group that matched replaced (any length: the pattern
    says it is a secret)."""
    group = max(i for i in range(1, match.re.groups + 1) if match.group(i) is not None)
    start, end = match.span(group)
    text = match.group(0)
    if match.group(group) == REDACTED:
        return text
    return text[: start - match.start()] + REDACTED + text[end - match.start() :]


def _k8s_secret_data(text: str) -> str:
    """Every value under ``data:`` / ``stringData:`` of a Kubernetes ``Secret`` (the
    values are base64 or plain secrets, whatever their keys are called)."""
    if not _K8S_SECRET.search(text):
        return text
    lines = text.split("\n")
    indent: int | None = None
    for index, line in enumerate(lines):
        opened = _K8S_DATA.match(line)
        if opened:
            indent = len(opened.group(1))
            continue
        if indent is None:
            continue
        item = _K8S_ITEM.match(line)
        if item and len(item.group(1)) > indent:
            start, end = item.span(3)
            if item.group(3) not in ("|", ">", "|-", ">-"):
                lines[index] = line[:start] + REDACTED + line[end:]
            continue
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            indent = None
    return "\n".join(lines)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES:
        return False
    if any(part in upper for part in SECRET_NAME_PARTS):
        return True
    return any(word in SECRET_NAME_WORDS for word in upper.split("_"))


@functools.lru_cache(maxsize=1)
def _detectors() -> tuple[
    tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], tuple[Any, ...]
]:
    """detect-secrets' regex denylists — those applied to whole texts, and the
    ``name = value`` ones (slow, keyword-led) applied to lines naming a secret-ish word —
    and its line-based plugins (keyword, base64 entropy), built once."""
    # detect-secrets turns on logging.captureWarnings when imported, which would send
    # every later warning (a pytest session's included) to the log instead of where it
    # was going; the previous handler is put back.
    showwarning = warnings.showwarning
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
        from detect_secrets.plugins.keyword import KeywordDetector
    finally:
        warnings.showwarning = showwarning

    whole: list[re.Pattern[str]] = []
    keyed: list[re.Pattern[str]] = []
    plugins: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for secret_type, plugin_class in plugins.items():
        if secret_type in _DETECT_SECRETS_SKIPPED:
            continue
        if issubclass(plugin_class, RegexBasedDetector):
            for pattern in plugin_class().denylist:
                (keyed if pattern.pattern.startswith("(?:(?<=\\W)") else whole).append(pattern)
    return tuple(whole), tuple(keyed), (KeywordDetector(), Base64HighEntropyString())


def _redact_match(match: re.Match[str]) -> str:
    """The match with its secret replaced: a long enough capture group when the pattern
    has one (the password in ``://user:pw@``), else the whole match."""
    for index in range(match.re.groups, 0, -1):
        group = match.group(index)
        if group is not None and len(group) >= MIN_SECRET_LENGTH:
            start, end = match.span(index)
            whole_start = match.start()
            text = match.group(0)
            return text[: start - whole_start] + REDACTED + text[end - whole_start :]
    return REDACTED


class Redactor:
    """Replaces secrets with ``<redacted>``; built once per write from an environment.

    ``extra_patterns`` (regular expressions) and ``extra_env_names`` come from a config's
    ``redact:`` section.
    """

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        extra_patterns: Iterable[str] = (),
        extra_env_names: Iterable[str] = (),
    ) -> None:
        source = os.environ if env is None else env
        named = set(extra_env_names)
        values = {
            value
            for name, value in source.items()
            if (name in named or is_secret_name(name)) and len(value) >= MIN_SECRET_LENGTH
        }
        # Longest first so a secret that contains another is replaced whole.
        ordered = sorted(values, key=len, reverse=True)
        self._env_pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self._extra = tuple(re.compile(pattern) for pattern in extra_patterns)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self._env_pattern is not None:
            text = self._env_pattern.sub(REDACTED, text)
        text = _PRIVATE_KEY.sub(REDACTED, text)
        for pattern in (_URL_PASSWORD, _AUTH_HEADER, _BEARER, _AWS_SECRET):
            text = pattern.sub(_redact_match, text)
        for pattern in (*_OWN_TOKENS, *self._extra):
            text = pattern.sub(_redact_match, text)
        text = self._unquoted(text)
        return self._detect_secrets(text)

    @staticmethod
    def _unquoted(text: str) -> str:
        """Secrets the detectors only see quoted: see the module docstring, point 3."""
        text = _ASSIGNMENT.sub(_assignment, text)
        for pattern in (_NETRC, _NETRC_INLINE, _JSON_AUTH, _CONNECTION_PASSWORD):
            text = pattern.sub(_group_redacted, text)
        return _k8s_secret_data(text)

    def _detect_secrets(self, text: str) -> str:
        whole, keyed, (keyword, entropy) = _detectors()
        for pattern in whole:
            text = pattern.sub(_redact_match, text)
        found: set[str] = set()
        lines = text.split("\n")
        for index, line in enumerate(lines):
            # Each plugin only where it can fire (they cost ~50 us a line): the keyword
            # plugin and keyword-led patterns on lines naming a secret-ish word, the
            # entropy plugin on quoted runs of 20+ base64 characters.
            plugins = []
            if _KEYWORD_HINT.search(line):
                for pattern in keyed:
                    line = pattern.sub(_redact_match, line)
                lines[index] = line
                plugins.append(keyword)
            if _QUOTED_RUN.search(line):
                plugins.append(entropy)
            for plugin in plugins:
                for secret in plugin.analyze_line(filename="recording", line=line):
                    value = secret.secret_value
                    if value and len(value) >= MIN_SECRET_LENGTH and value != REDACTED:
                        found.add(value)
        text = "\n".join(lines)
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def path(self, name: str) -> str:
        """A file name (``/``-separated) with every secret component redacted."""
        return "/".join(self(part) for part in name.split("/"))


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Redact ``text`` using ``env`` (``os.environ`` by default)."""
    return Redactor(env)(text)


_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# A line inside a key block: base64, or a PEM header (``Proc-Type: …``, ``DEK-Info: …``).
_KEY_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]*|[A-Za-z-]+:[^\n]*)[ \t]*\Z")


class StreamRedactor:
    """Redacts output shown live (``pytest -s``, ``ooda run --verbose``) as it arrives:
    ``write`` gets each complete line once it is redacted, never a part of a line.

    Each line is redacted on its own, but for two rules that need the lines above: a
    private key block is held from its ``BEGIN`` line and shown as one ``<redacted>``
    line at its ``END`` (or at the first line that is no line of a key, or when the
    stream ends), and below a Kubernetes Secret's ``kind: Secret`` (within ``context``
    lines, until the next ``---``, ``apiVersion:`` or ``kind:``) a line is redacted with
    the document so far, so its ``data:`` values are found. A secret split over other
    lines is not recognised here (the recording, redacted whole, may be).
    :meth:`flush` shows a last line that has no newline yet (at an iteration's end)."""

    def __init__(
        self, redactor: Redactor, write: Callable[[bytes], None], *, context: int = 200
    ) -> None:
        self.redactor = redactor
        self.write = write
        self.context = context
        self._partial = b""
        self._document: list[str] | None = None
        self._in_key = False

    def __call__(self, chunk: bytes) -> None:
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            self._line(line.decode("utf-8", "replace"), "\n")

    def flush(self) -> None:
        """Show the last line even though it has no newline yet."""
        if self._partial:
            partial, self._partial = self._partial, b""
            self._line(partial.decode("utf-8", "replace"), "")
        if self._in_key:
            self._in_key = False
            self.write((REDACTED + "\n").encode())

    close = flush

    def _line(self, line: str, end: str) -> None:
        if self._in_key:
            if _KEY_END.search(line):
                self._in_key = False
                self.write((REDACTED + end).encode())
                return
            if _KEY_BODY.match(line):
                return
            # Not a line of a key (the block was cut short): the key ends here.
            self._in_key = False
            self.write((REDACTED + "\n").encode())
        if _KEY_BEGIN.search(line) and not _KEY_END.search(line):
            self._in_key = True
            return
        if (
            line.strip() == "---"
            or line.startswith(("apiVersion:", "kind:"))
            or (self._document is not None and len(self._document) >= self.context)
        ):
            # Another object (or too far down): the Secret's document is over.
            self._document = None
        if _K8S_SECRET.match(line):
            self._document = []
        shown = self._redacted(line)
        if self._document is not None:
            self._document.append(line)
        self.write((shown + end).encode("utf-8", "replace"))

    def _redacted(self, line: str) -> str:
        if not self._document:
            return self.redactor(line)
        whole = self.redactor("\n".join([*self._document, line])).split("\n")
        # Every rule but the key block's (handled above) keeps the lines as they are.
        return whole[-1] if len(whole) == len(self._document) + 1 else self.redactor(line)

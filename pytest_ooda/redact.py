"""Secret redaction applied to everything pytest-ooda writes (recordings, live-run
reports): outputs, prompts, file contents and file names.

Three sources, applied in this order:

1. the values of environment variables whose names say they are secret (``*KEY*``,
   ``*TOKEN*``, ``*SECRET*``, ``*PASS*``, ``*CREDENTIAL*``, ``*DSN*``, and ``PWD``,
   ``PAT``, ``AUTH`` as a name part, e.g. ``DB_PWD``, ``GH_PAT``), plus names a config's
   ``redact.env`` lists;
2. the shapes of keys and tokens: private key blocks, passwords in URLs,
   ``Authorization:`` and ``Bearer`` values, prefixed API tokens of any length (``sk-``,
   ``sk_live_``, ``hf_``, ``npm_``, ``glpat-``, ``ghp_`` …), AWS secret keys named as
   such, other services' credentials by their published formats (Azure storage keys,
   Mailchimp, PyPI, SendGrid, Twilio, Telegram, Discord, Square, Artifactory,
   SoftLayer), and a config's ``redact.patterns``;
3. unquoted assignments whose name says secret, as ``.env`` files, shell scripts and YAML
   write them (``DB_PASSWORD=…``, ``export API_TOKEN=…``, ``client_secret: …``),
   ``.netrc`` passwords, Docker ``config.json`` auths, the ``data:`` values of a
   Kubernetes ``Secret``, and ``Password=…;`` in connection strings. An assignment is
   taken only when it is the whole line and its value one word that is not a reference
   (``$VAR``, ``settings.SECRET``, a call), so code and prose stay as they are;
4. quoted values: a quoted string assigned to a name that says secret, in any
   language's syntax (``password = "…"``, ``"api_key": "…"``, ``token := '…'``), and a
   quoted run of 20+ base64 characters random enough to be a key (more than 4.5 bits of
   Shannon entropy a character, the threshold of Yelp's detect-secrets, whose detectors
   these rules replace). A value found so is redacted wherever else it appears too.
   Left out on purpose: IP addresses (not secrets) and quoted hex strings (every git SHA
   and checksum in an agent's output would go).

Every rule is a compiled pattern of this module, made once when it is imported.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "REDACTED",
    "Redactor",
    "StreamRedactor",
    "is_secret_key",
    "is_secret_name",
    "redact",
    "redact_value",
]

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
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^\s:/@]+:)([^\s@/]+)(@)")
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
    # Azure storage account keys (``AccountKey=`` in a connection string, 88 base64)
    re.compile(r"(?i)\bAccountKey=([A-Za-z0-9+/]{40,}={0,2})"),
    # Mailchimp API keys: 32 characters and the data centre (``-us12``)
    re.compile(r"\b[0-9a-z]{32}-us[0-9]{1,2}\b"),
    # PyPI and TestPyPI upload tokens (macaroons, ``pypi-AgE…``)
    re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{40,}"),
    # SendGrid API keys: ``SG.`` and two base64url parts
    re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    # Twilio account SIDs and API key SIDs
    re.compile(r"\b(?:AC|SK)[0-9a-z]{32}\b"),
    # Telegram bot tokens: the bot's number, a colon, 35 characters
    re.compile(r"\b[0-9]{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    # Discord bot tokens: three base64url parts, the first the bot's id
    re.compile(r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}"),
    # Square access tokens and OAuth secrets
    re.compile(r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    # Artifactory API keys, and its encrypted passwords (mixed case and digits)
    re.compile(r"(?<![A-Za-z0-9])AKCp[A-Za-z0-9]{10,}"),
    re.compile(
        r"(?<![A-Za-z0-9])AP[0-9A-F](?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{8,}"
    ),
    # SoftLayer API keys in its SOAP URLs
    re.compile(r"(?i)\bapi\.softlayer\.com/soap/v3(?:\.1)?/([a-z0-9]{64})\b"),
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
# A quoted value assigned to a name (``name = "v"``, ``"name": "v"``, ``name := 'v'``,
# ``name => "v"``): group 1 the name, groups 2-4 the value in its quotes. The name
# starts where no name character precedes it, so a long run of them is tried once.
_QUOTED_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.$-])([A-Za-z_$][A-Za-z0-9_.-]*)[\"'`]?[ \t]*(?::=|=>|===|==|!=|[:=])[ \t]*"
    r"(?:\"([^\"\n]*)\"|'([^'\n]*)'|`([^`\n]*)`)"
)
# A value that refers to a secret rather than holding one: ``$VAR``, ``${VAR}``,
# ``{{ secret }}``, ``%(password)s``, a name (``"AWS_SECRET_ACCESS_KEY"``,
# ``"aws_access_key_id"``: words joined by ``_``).
_REFERENCE = re.compile(r"\A\$|\$\{|\{\{|%\(|\A[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\Z")
# A quoted run of base64 characters (standard and URL-safe alphabets).
_QUOTED_BASE64 = re.compile(r"([\"'])([A-Za-z0-9+/=_-]{20,})\1")
#: Bits of Shannon entropy a character above which a quoted base64 run is a key.
BASE64_ENTROPY = 4.5


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


#: A quoted value's name ending in one of these words holds a secret …
_QUOTED_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "secret",
        "passphrase",
        "credential",
        "credentials",
        "apikey",
        "authtoken",
        "secretkey",
        "accesskey",
        "privatekey",
    }
)
#: … and so does one ending in one of these pairs of words.
_QUOTED_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("auth", "key"),
        ("client", "key"),
        ("service", "key"),
        ("account", "key"),
        ("db", "key"),
        ("db", "pass"),
        ("key", "pass"),
        ("auth", "token"),
        ("access", "token"),
        ("refresh", "token"),
        ("api", "token"),
        ("session", "token"),
        ("bearer", "token"),
    }
)


def _ends_secret(name: str) -> bool:
    """Whether ``name`` ends in words that say secret (``db_password``, ``apiKey``,
    ``client_secret``, ``$auth_token``): a stricter test than :func:`is_secret_key`,
    for quoted values in code, which assigns and compares quoted strings to names such
    as ``pass_rule``, ``token`` or ``auth`` all the time."""
    if name.upper() in NOT_SECRET_NAMES:
        return False
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if not parts:
        return False
    last = parts[-1]
    if last in _QUOTED_SECRET_WORDS or last.endswith(("password", "passwd", "secret")):
        return True
    return len(parts) > 1 and (parts[-2], last) in _QUOTED_SECRET_PAIRS


def is_secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES:
        return False
    if any(part in upper for part in SECRET_NAME_PARTS):
        return True
    return any(word in SECRET_NAME_WORDS for word in upper.split("_"))


def _entropy(text: str) -> float:
    """Shannon entropy of ``text``, in bits a character."""
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


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
        return self._quoted(text)

    @staticmethod
    def _unquoted(text: str) -> str:
        """Secrets the detectors only see quoted: see the module docstring, point 3."""
        text = _ASSIGNMENT.sub(_assignment, text)
        for pattern in (_NETRC, _NETRC_INLINE, _JSON_AUTH, _CONNECTION_PASSWORD):
            text = pattern.sub(_group_redacted, text)
        return _k8s_secret_data(text)

    @staticmethod
    def _quoted(text: str) -> str:
        """Quoted values: see the module docstring, point 4. Each value found is
        redacted wherever it appears."""
        found: set[str] = set()
        for match in _QUOTED_ASSIGNMENT.finditer(text):
            value = match.group(2) or match.group(3) or match.group(4) or ""
            if (
                len(value) >= MIN_SECRET_LENGTH
                and value != REDACTED
                and value.lower() not in _NOT_VALUES
                and not _REFERENCE.search(value)
                and _ends_secret(match.group(1))
            ):
                found.add(value)
        for match in _QUOTED_BASE64.finditer(text):
            if _entropy(match.group(2)) > BASE64_ENTROPY:
                found.add(match.group(2))
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def path(self, name: str) -> str:
        """A file name (``/``-separated) with every secret component redacted."""
        return "/".join(self(part) for part in name.split("/"))


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Redact ``text`` using ``env`` (``os.environ`` by default)."""
    return Redactor(env)(text)


#: How deep :func:`redact_value` walks: what is nested deeper (no API nests a tenth as
#: deep; a hostile value might) is left out, said in its place.
MAX_VALUE_DEPTH = 200
DEEPER_THAN_BOUND = f"<nested deeper than {MAX_VALUE_DEPTH} levels: left out>"


def redact_value(value: Any, redact: Callable[[str], str], *, depth: int = 0) -> Any:
    """``value`` (decoded JSON: strings, numbers, lists, objects) with ``redact`` applied
    to every string on its own, keys included — the one rule of every sink: a value is
    redacted as the decoded text it is, before anything encodes or lays it out, so a
    line rule (``export API_TOKEN=…`` alone on its line) sees the line.

    A string that is itself JSON — a tool call's arguments as the APIs send them
    (Anthropic's ``partial_json``, OpenAI's ``arguments``), where a multi-line command is
    one string with ``\\n`` escapes — is decoded, redacted value by value, and encoded
    again, when the redaction changed anything; else it is kept byte for byte."""
    if isinstance(value, str):
        return _redacted_string(value, redact, depth)
    if depth >= MAX_VALUE_DEPTH:
        return DEEPER_THAN_BOUND
    if isinstance(value, dict):
        return {
            redact(str(key)): redact_value(item, redact, depth=depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_value(item, redact, depth=depth + 1) for item in value]
    return value


def _redacted_string(text: str, redact: Callable[[str], str], depth: int) -> str:
    """A string, redacted as the JSON it holds when it holds an object or a list."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] + stripped[-1] not in ("{}", "[]"):
        return redact(text)
    try:
        decoded = json.loads(stripped)
    except (ValueError, RecursionError):
        return redact(text)
    clean = redact_value(decoded, redact, depth=depth + 1)
    if clean == decoded:
        return text
    return json.dumps(clean, ensure_ascii=False)


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

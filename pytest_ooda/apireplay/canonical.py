"""The canonical form of a model-API request: what is compared between a recording and a
replay, with everything that differs from run to run for reasons other than the prompt
taken out.

A request body is JSON. :class:`Normaliser` rewrites its text before it is parsed: the
run's paths (workspace, run directory, home, temporary directory, and the workspace's
"slug" agents derive from it, e.g. Claude Code's memory directory
``-tmp-ooda-live-x-workspace``) become placeholders such as ``<ooda:workspace>``, and in
requests ISO dates and UUIDs (session ids) become ``<ooda:date>`` / ``<ooda:uuid>``.
Responses get the paths only, and are expanded back with the replaying run's own paths,
so a recorded ``file_path`` lands in today's workspace.

:func:`canonical_request` then splits the parsed body into a *skeleton* (the small
top-level fields: model, limits, flags) and *parts*: the big values every request of a
conversation repeats (``system``, ``tools``, ``instructions``) and each item of the
conversation (``messages``, ``input``). A part is known by the digest of its canonical
JSON, and the skeleton names its parts by digest, so a cassette stores each part once and
the key of a request is the digest of its skeleton. Per-run identifiers
(``metadata.user_id``, ``user``, ``prompt_cache_key``, ``safety_identifier``) are
replaced in the skeleton.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda.replay_rules import BUILTIN_RULES, ReplayRule, apply_rules

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

__all__ = [
    "PART_FIELDS",
    "PART_LISTS",
    "Canonical",
    "Normaliser",
    "canonical_request",
    "digest",
    "dumps",
    "redact_value",
    "renormalised",
]

#: Top-level request fields stored as one part each (they repeat on every request).
PART_FIELDS = ("system", "tools", "instructions")
#: Top-level request lists stored one part per item (a conversation resends them all).
PART_LISTS = ("messages", "input")
#: Top-level fields holding an identifier that is new on every run.
RUN_ID_FIELDS = ("user", "prompt_cache_key", "safety_identifier")
RUN_ID = "<ooda:run-id>"

#: Characters a path name continues with: /tmp is in /tmp/x, not in /tmpx or /var/tmp.
_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Dates and UUIDs are found by their tails, which start with a literal "-": the regular
# expression engine skips to each "-" at C speed, where a pattern starting with a digit
# is tried at every position (20x slower on an 80 KB request); the head is checked after.
_DATE_TAIL = re.compile(r"-\d\d-\d\d(?![0-9A-Za-z])")
_DATE_HEAD = re.compile(r"(?<![0-9A-Za-z])\d{4}\Z")
_UUID_TAIL = re.compile(
    r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])"
)
#: The kernel's build string in an agent's environment block (Claude Code's "OS Version:
#: Linux 6.8.0-45-generic"): it differs between any two machines, a CI runner's each time.
_OS_VERSION = re.compile(r"(OS Version: )[^\n\\\"]*")
_UUID_HEAD = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}\Z")


def _replace_names(text: str, name: str, placeholder: str) -> str:
    """``text`` with each occurrence of ``name`` that is not part of a longer name
    replaced."""
    pieces = text.split(name)
    out = [pieces[0]]
    for piece in pieces[1:]:
        before = out[-1][-1:] if out[-1] else ""
        # In JSON text a path on a line of its own follows the escape ``\n``: its ``n``
        # ends an escape sequence (an odd number of backslashes before it), not a name.
        head = out[-1][:-1]
        escaped = (len(head) - len(head.rstrip("\\"))) % 2 == 1
        whole = (before not in _NAME or escaped) and (not piece or piece[0] not in _NAME)
        out.append(placeholder if whole else name)
        out.append(piece)
    return "".join(out)


def _replace_headed(
    text: str, tail: re.Pattern[str], head: re.Pattern[str], size: int, placeholder: str
) -> str:
    """``text`` with each match of ``head`` (``size`` characters) + ``tail`` replaced."""
    out: list[str] = []
    done = 0
    for match in tail.finditer(text):
        start = match.start() - size
        if start < done or not head.search(text, max(start - 1, 0), match.start()):
            continue
        out.append(text[done:start])
        out.append(placeholder)
        done = match.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def dumps(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    """The short content digest a cassette knows a value by."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()[:24]


def _slug(path: str) -> str:
    # How Claude Code names a project's directory under ~/.claude/projects.
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _json_escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


@dataclass(frozen=True)
class Normaliser:
    """The run's paths, as placeholder -> path, and the ``replay_normalise:`` rules
    (the built-in ones first); see the module docstring."""

    paths: tuple[tuple[str, str], ...] = ()
    rules: tuple[ReplayRule, ...] = BUILTIN_RULES

    @classmethod
    def for_run(
        cls,
        *,
        workspace: Path | None = None,
        run_dir: Path | None = None,
        home: str | Path | None = None,
        tmp: str | Path | None = None,
        extra: Mapping[str, str | Path] | None = None,
        rules: Sequence[ReplayRule] = (),
    ) -> Normaliser:
        """The placeholders of one run (``tmp`` defaults to the temporary directory,
        ``home`` to ``$HOME``); each path also by its resolved form. ``rules``: the
        config's and the scenario's ``replay_normalise:``, after the built-in ones."""
        home = home if home is not None else os.environ.get("HOME")
        named: list[tuple[str, str | Path | None]] = [
            ("workspace", workspace),
            ("run", run_dir),
            ("home", home),
            ("tmp", tmp if tmp is not None else tempfile.gettempdir()),
            *(extra or {}).items(),
        ]
        pairs: list[tuple[str, str]] = []
        for name, path in named:
            if path is None or str(path) in ("", "/"):
                continue
            for form in dict.fromkeys((str(path), os.path.realpath(path))):
                pairs.append((f"<ooda:{name}>", form))
            if name == "workspace":
                pairs.append(("<ooda:workspace-slug>", _slug(str(path))))
        if workspace is not None and home:
            # Home as a path relative to the workspace (Qwen Code names the files it
            # loads so): as many "../" as the workspace is deep, which differs by run.
            relative = os.path.relpath(home, workspace)
            if relative.startswith(".."):
                pairs.append(("<ooda:home-from-workspace>", relative))
        # Longest first: the workspace lies inside the run directory inside tmp.
        pairs.sort(key=lambda pair: len(pair[1]), reverse=True)
        return cls(tuple(pairs), (*BUILTIN_RULES, *rules))

    def _paths_out(self, text: str) -> str:
        for placeholder, path in self.paths:
            for form in dict.fromkeys((path, _json_escaped(path))):
                if form in text:
                    text = _replace_names(text, form, placeholder)
        return text

    def request(self, text: str) -> str:
        """A request's text (JSON or not) with paths, dates and UUIDs replaced."""
        text = self._paths_out(text)
        text = _replace_headed(text, _DATE_TAIL, _DATE_HEAD, 4, "<ooda:date>")
        text = _replace_headed(text, _UUID_TAIL, _UUID_HEAD, 8, "<ooda:uuid>")
        if "OS Version: " in text:
            text = _OS_VERSION.sub(r"\1<ooda:os-version>", text)
        return text

    def response(self, text: str) -> str:
        """A response's text with the run's paths replaced (for the cassette)."""
        return self._paths_out(text)

    def expand(self, text: str, *, json_text: bool = True) -> str:
        """A stored response's text with this run's paths put back (JSON-escaped in
        ``json_text``)."""
        if "<ooda:" not in text:
            return text
        seen: set[str] = set()
        for placeholder, path in self.paths:
            if placeholder in seen:
                continue  # the first (longest) form of each name is the one put back
            seen.add(placeholder)
            text = text.replace(placeholder, _json_escaped(path) if json_text else path)
        return text


@dataclass(frozen=True)
class Canonical:
    """One request in canonical form: where it went, its skeleton (parts named by
    digest) and the parts by digest."""

    provider: str
    method: str
    path: str
    skeleton: Any
    parts: Mapping[str, Any]

    @property
    def endpoint(self) -> str:
        return f"{self.provider} {self.method} {self.path}"

    def key(self, skeleton: Any = None) -> str:
        """The digest requests are matched by (of ``skeleton`` when given: a redacted
        or re-identified form of this one's)."""
        return digest([self.endpoint, self.skeleton if skeleton is None else skeleton])

    def expanded(self) -> Any:
        """The whole request body, parts in place (for a person reading a diff)."""
        return expand_skeleton(self.skeleton, self.parts.get)


def redact_value(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with ``redact`` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(item, redact) for item in value]
    if isinstance(value, dict):
        return {redact(k): redact_value(v, redact) for k, v in value.items()}
    return value


def _ref(value: Any, parts: dict[str, Any]) -> str:
    name = digest(value)
    parts[name] = value
    return name


def split_parts(body: Any, run_ids: tuple[str, ...] = ()) -> tuple[Any, dict[str, Any]]:
    """``body`` as a skeleton naming its parts by digest, and the parts; ``run_ids``: the
    model API's own fields that identify one invocation (its ``ModelApi.run_id_fields``)."""
    parts: dict[str, Any] = {}
    if not isinstance(body, dict):
        return body, parts
    skeleton: dict[str, Any] = {}
    for name, value in body.items():
        if name in PART_FIELDS:
            skeleton[name] = _ref(value, parts)
        elif name in PART_LISTS and isinstance(value, list):
            skeleton[name] = [_ref(item, parts) for item in value]
        elif (name in RUN_ID_FIELDS and isinstance(value, str)) or name in run_ids:
            skeleton[name] = RUN_ID
        elif name == "metadata" and isinstance(value, dict):
            skeleton[name] = {k: RUN_ID if k == "user_id" else v for k, v in value.items()}
        else:
            skeleton[name] = value
    return skeleton, parts


def expand_skeleton(skeleton: Any, part: Callable[[str], Any]) -> Any:
    """The body a skeleton stands for, each digest looked up with ``part``."""
    if not isinstance(skeleton, dict):
        return skeleton
    body: dict[str, Any] = {}
    for name, value in skeleton.items():
        if name in PART_FIELDS and isinstance(value, str):
            body[name] = part(value)
        elif name in PART_LISTS and isinstance(value, list):
            body[name] = [part(item) for item in value]
        else:
            body[name] = value
    return body


def part_names(skeleton: Any) -> Sequence[str]:
    """The digests a skeleton refers to, in order."""
    if not isinstance(skeleton, dict):
        return ()
    names: list[str] = []
    for name, value in skeleton.items():
        if name in PART_FIELDS and isinstance(value, str):
            names.append(value)
        elif name in PART_LISTS and isinstance(value, list):
            names.extend(item for item in value if isinstance(item, str))
    return names


def canonical_request(
    provider: str, method: str, path: str, body: bytes, normaliser: Normaliser
) -> Canonical:
    """The canonical form of one request (a body that is not JSON is kept as text)."""
    text = body.decode("utf-8", errors="replace")
    text = normaliser.request(text)
    parsed: Any
    if not text.strip():
        parsed = None
    else:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = {"text": text}
    from pytest_ooda.agents import model_apis

    api = model_apis().get(provider)
    run_ids = api.run_id_fields if api is not None else ()
    rules = (*api.replay_rules, *normaliser.rules) if api is not None else normaliser.rules
    skeleton, parts = split_parts(apply_rules(parsed, rules), run_ids)
    return Canonical(provider, method, normaliser.request(path), skeleton, parts)


def renormalised(skeleton: Any, parts: dict[str, Any], rules: Sequence[ReplayRule]) -> Any:
    """A recorded request's skeleton with ``rules`` applied to the body it stands for
    (new parts added to ``parts``): a cassette recorded before a rule was written is
    matched as if it had been recorded with it."""
    body = expand_skeleton(skeleton, parts.get)
    changed = apply_rules(body, rules)
    if changed == body:
        return skeleton
    new_skeleton, new_parts = split_parts(changed)
    parts.update(new_parts)
    return new_skeleton

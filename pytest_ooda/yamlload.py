"""YAML loading that keeps line/column marks and turns every malformation into an ``OodaError``.

PyYAML composes the node graph; we build the Python values ourselves so that every mapping
key and value, and every sequence item, keeps the 1-based position it came from. Along the
way we reject what ``yaml.safe_load`` would silently accept or crash on: duplicate keys,
unsupported tags, non-scalar keys, alias bombs, recursive aliases, binary junk and huge
files.

Scalars are typed by YAML 1.1 (PyYAML's rules, minus timestamps) except under the key paths a
caller names in ``go_typed``: there they are typed as Go's yaml.v3 types them for
``interface{}`` (``yes`` is a string, ``1e3`` a float, dates are times), because fragment
parameters must reach templates exactly as the Go implementation sees them.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

import yaml
import yaml.nodes

from pytest_ooda.errors import ConfigError, OodaError
from pytest_ooda.reader import MAX_DEPTH as MAX_DEPTH  # the bound every reader keeps
from pytest_ooda.textfile import MAX_BYTES, line_col, read_text_file
from pytest_ooda.yamlnodes import (
    ANY_ITEM,
    ANY_KEY,
    GoPathStep,
    Mark,
    YamlMapping,
    YamlSequence,
)
from pytest_ooda.yamlsyntax import NOTHING_LOADED, explain

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

# Alias expansion is what turns a 1 KB "billion laughs" file into gigabytes; a config
# with more nodes than this is not something a person wrote.
MAX_NODES = 500_000
_SURROGATE = re.compile("[\ud800-\udfff]")

_MERGE_TAG = "tag:yaml.org,2002:merge"
_SCALAR_TAGS = frozenset(
    {
        "tag:yaml.org,2002:str",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
    }
)
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_STR_TAG = "tag:yaml.org,2002:str"
_BINARY_TAG = "tag:yaml.org,2002:binary"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# The explicit scalar tags yaml.v3 gives a meaning to when decoding into interface{}.
_GO_SCALAR_TAGS = _SCALAR_TAGS | {_BINARY_TAG, _TIMESTAMP_TAG}


def _go_key(key: Any) -> Any:
    """``key`` as a key of a map that holds keys Python would equate (strings stay)."""
    if type(key) is str:
        return key
    from pytest_ooda.gotemplate import GoKey

    return GoKey(key)


def _wrap_keys(mapping: YamlMapping) -> None:
    """Re-key ``mapping`` in place with :func:`_go_key`, keeping order and marks."""
    entries = [
        (key, value, mapping.key_marks[key], mapping.value_marks[key], mapping.key_texts.get(key))
        for key, value in mapping.items()
    ]
    mapping.clear()
    mapping.key_marks.clear()
    mapping.value_marks.clear()
    mapping.key_texts.clear()
    for key, value, at_key, at_value, text in entries:
        new = _go_key(key)
        mapping[new] = value
        mapping.key_marks[new] = at_key
        mapping.value_marks[new] = at_value
        if text is not None:
            mapping.key_texts[new] = text


class _PlainTag(str):
    """The tag of an untagged plain scalar: equal to the tag YAML 1.1 resolves it to.

    PyYAML nodes do not say whether a tag was written or resolved; yaml.v3 typing needs to
    know (``!!str 12`` is a string, ``12`` an int), so resolution marks its result.
    """

    __slots__ = ()


_plain_tags: dict[str, _PlainTag] = {}


def _resolve_marking_plain(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
    base: Any = yaml.resolver.Resolver.resolve
    tag: str = base(self, kind, value, implicit)
    if kind is yaml.nodes.ScalarNode and implicit[0]:
        marked = _plain_tags.get(tag)
        if marked is None:
            marked = _plain_tags[tag] = _PlainTag(tag)
        return marked
    return tag


class _Loader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver: dates in prompts stay the text written."""

    resolve = _resolve_marking_plain


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_FastLoader: type[yaml.CSafeLoader] | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.CSafeLoader):
        """libyaml's parser (about 10x faster) with the same resolvers as ``_Loader``."""

        resolve = _resolve_marking_plain

    _CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
    _FastLoader = _CLoader


_resolve_plain: Callable[[str], Any] | None = None


def _go_plain(text: str) -> Any:
    # Imported on first use: the template package costs ~0.1 s to import and most
    # configs have no parameters.
    global _resolve_plain
    if _resolve_plain is None:
        from pytest_ooda.gotemplate import resolve_plain

        _resolve_plain = resolve_plain
    return _resolve_plain(text)


def _go_kind(value: Any) -> str:
    """The yaml.v3 tag a resolved plain value carries, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return "timestamp"


def _mark(node: yaml.nodes.Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


def _tab_hint(problem: str) -> str | None:
    if "\\t" in problem or "\t" in problem:
        return "YAML does not allow tab characters for indentation; use spaces"
    return None


class _Builder:
    """Turns a composed node graph into located Python values."""

    def __init__(
        self,
        loader: yaml.SafeLoader | yaml.CSafeLoader,
        file: str | None,
        error: type[OodaError],
        go_typed: tuple[GoPathStep, ...] = (),
        strict_text: bool = False,
    ) -> None:
        self.loader = loader
        self.file = file
        self.error = error
        self.strict_text = strict_text
        self.count = 0
        self.active: set[int] = set()
        # Context while descending: how many steps of ``go_typed`` the path so far has
        # matched (``go_at`` = all of them: yaml.v3 typing), or -1 once it cannot match.
        self.go_typed = go_typed
        self.go_at = len(go_typed)
        # Nodes where yaml.v3 typing starts: decoded into a map[string]interface{}.
        self.go_roots: set[int] = set()

    def key_ctx(self, ctx: int, key: Any) -> int:
        if ctx < 0 or ctx == self.go_at:
            return ctx
        step = self.go_typed[ctx]
        if step == ANY_KEY or (key in step if isinstance(step, frozenset) else key == step):
            return ctx + 1
        return -1

    def item_ctx(self, ctx: int) -> int:
        if ctx < 0 or ctx == self.go_at:
            return ctx
        return ctx + 1 if self.go_typed[ctx] == ANY_ITEM else -1

    def fail(self, message: str, node: yaml.nodes.Node, hint: str | None = None) -> OodaError:
        mark = _mark(node)
        return self.error(message, file=self.file, line=mark.line, column=mark.column, hint=hint)

    def build(self, node: yaml.nodes.Node, depth: int = 0, ctx: int = -1) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(
                f"document expands to more than {MAX_NODES} values (alias expansion?)", node
            )
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", node)
        if isinstance(node, yaml.nodes.ScalarNode):
            return self.go_scalar(node) if ctx == self.go_at else self.scalar(node)
        if id(node) in self.active:
            raise self.fail("recursive alias: a value cannot contain itself", node)
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.nodes.MappingNode):
                return self.mapping(node, depth, ctx)
            if isinstance(node, yaml.nodes.SequenceNode):
                return self.sequence(node, depth, ctx)
        finally:
            self.active.discard(id(node))
        raise self.fail(f"unsupported YAML node {type(node).__name__}", node)

    def check_text(self, node: yaml.nodes.ScalarNode) -> None:
        # A "\ud800" escape yields half a surrogate pair, which no prompt, terminal or
        # file can hold; text read from the (valid UTF-8) file itself never does.
        text = node.value
        if self.strict_text and not text.isascii():
            found = _SURROGATE.search(text)
            if found:
                raise self.fail(
                    f"the text holds {found.group()!r}, which is not a character "
                    "(a lone surrogate)",
                    node,
                    "write the character itself, or a \\U escape of its code point",
                )

    def scalar(self, node: yaml.nodes.ScalarNode) -> Any:
        self.check_text(node)
        if node.tag == _STR_TAG:
            # What PyYAML's constructor returns for a string, without its bookkeeping:
            # most scalars in configs and scenarios are text.
            return node.value
        if node.tag not in _SCALAR_TAGS:
            raise self.fail(
                f"unsupported YAML tag {node.tag!r}",
                node,
                "only plain strings, numbers, booleans and null are allowed",
            )
        try:
            return self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise self.fail(
                f"invalid {node.tag.rsplit(':', 1)[-1]} value {node.value!r}", node
            ) from exc

    def go_scalar(self, node: yaml.nodes.ScalarNode) -> Any:
        """The value yaml.v3 decodes ``node`` into for an ``interface{}``."""
        self.check_text(node)
        tag = node.tag
        text: str = node.value
        if type(tag) is _PlainTag:
            # `! "x"` reaches here too: a non-specific tag on a quoted scalar is a string.
            return text if node.style else _go_plain(text)
        if tag == _STR_TAG:
            return text
        name = tag.rsplit(":", 1)[-1]
        if tag not in _GO_SCALAR_TAGS:
            raise self.fail(
                f"unsupported YAML tag {tag!r}",
                node,
                "only plain strings, numbers, booleans, null, timestamps and binary are allowed",
            )
        if tag == _BINARY_TAG:
            try:
                data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
            except (binascii.Error, ValueError):
                raise self.fail(f"invalid binary value {text!r}: not base64", node) from None
            return data.decode("utf-8", "surrogateescape")
        # A tag only checks what the text resolves to (a float tag also takes an int that
        # fits int64); yaml.v3 tries timestamps for untagged and !!timestamp text only.
        value = _go_plain(text)
        kind = _go_kind(value)
        if kind == "timestamp" and name != "timestamp":
            kind = "str"
        if kind == "int" and name == "float" and type(value) is int:
            return float(value)
        if kind != name:
            raise self.fail(
                f"invalid {name} value {text!r}: yaml.v3 reads it as {kind}",
                node,
                "fragment parameters are typed like Go's yaml.v3; drop the tag or quote the value",
            )
        return value

    def sequence(self, node: yaml.nodes.SequenceNode, depth: int, ctx: int) -> YamlSequence:
        if node.tag != _SEQ_TAG:
            raise self.fail(f"unsupported YAML tag {node.tag!r} on a sequence", node)
        out = YamlSequence(_mark(node))
        item_ctx = self.item_ctx(ctx)
        for item in node.value:
            out.append(self.build(item, depth + 1, item_ctx))
            out.item_marks.append(_mark(item))
        return out

    def mapping(self, node: yaml.nodes.MappingNode, depth: int, ctx: int) -> YamlMapping:
        if node.tag != _MAP_TAG:
            raise self.fail(f"unsupported YAML tag {node.tag!r} on a mapping", node)
        if ctx == self.go_at:
            return self.go_mapping(node, depth, ctx)
        out = YamlMapping(_mark(node))
        merged: set[Any] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self.merge(out, merged, value_node, depth, ctx)
                continue
            if not isinstance(key_node, yaml.nodes.ScalarNode):
                raise self.fail("mapping keys must be plain scalars, not collections", key_node)
            key = self.scalar(key_node)
            if key in out and key not in merged:
                first = out.key_marks[key]
                raise self.fail(
                    f"duplicate key {key!r}",
                    key_node,
                    f"first defined at line {first.line}, column {first.column}",
                )
            merged.discard(key)
            child = self.key_ctx(ctx, key)
            if child == self.go_at:
                self.go_roots.add(id(value_node))
            out[key] = self.build(value_node, depth + 1, child)
            out.key_marks[key] = _mark(key_node)
            out.value_marks[key] = _mark(value_node)
        return out

    def go_mapping(self, node: yaml.nodes.MappingNode, depth: int, ctx: int) -> YamlMapping:
        r"""A mapping as yaml.v3 decodes it: the root one (fragment parameters, a
        ``map[string]interface{}``) keyed by each key's text, nested ones by typed keys.

        yaml.v3 calls keys duplicates only when their text is the same (``1`` and "1");
        nested keys with the same typed value (``1`` and ``01``) are one Go map key, the
        later value winning; keys Python equates across types (``1``, ``1.0``, ``true``)
        stay apart as :class:`~pytest_ooda.gotemplate.gofmt.GoKey`\ s. A null root key is
        kept as ``None`` for the caller to deal with (yaml.v3 drops it).
        """
        out = YamlMapping(_mark(node))
        merged: set[Any] = set()
        texts: dict[str, yaml.nodes.Node] = {}
        types: dict[Any, type] = {}
        root = id(node) in self.go_roots
        wrapped = False
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self.merge(out, merged, value_node, depth, ctx)
                continue
            if not isinstance(key_node, yaml.nodes.ScalarNode):
                raise self.fail("mapping keys must be plain scalars, not collections", key_node)
            key = self.go_scalar(key_node)
            first_node = texts.setdefault(key_node.value, key_node)
            if first_node is not key_node:
                first_text = _mark(first_node)
                raise self.fail(
                    f"duplicate key {key_node.value!r}",
                    key_node,
                    f"first defined at line {first_text.line}, column {first_text.column}",
                )
            if root:
                if key is not None and type(key) is not str:
                    key = key_node.value
            elif not wrapped and key in types and key not in merged and types[key] is not type(key):
                # A clash Python sees and Go does not: from here on the map is keyed by
                # type and value.
                wrapped = True
                _wrap_keys(out)
            if wrapped:
                key = _go_key(key)
            else:
                types[key] = type(key)
            merged.discard(key)
            out[key] = self.build(value_node, depth + 1, ctx)
            out.key_marks[key] = _mark(key_node)
            out.value_marks[key] = _mark(value_node)
            out.key_texts[key] = key_node.value
        return out

    def merge(
        self, out: YamlMapping, merged: set[Any], value_node: yaml.nodes.Node, depth: int, ctx: int
    ) -> None:
        sources = (
            value_node.value if isinstance(value_node, yaml.nodes.SequenceNode) else [value_node]
        )
        for source_node in sources:
            # Merged keys belong to ``out``, so the source is typed in ``out``'s context.
            source = self.build(source_node, depth + 1, ctx)
            if not isinstance(source, YamlMapping):
                raise self.fail(
                    "a merge key '<<' needs a mapping or a list of mappings", source_node
                )
            for key, value in source.items():
                # Explicit keys win over merged ones, and earlier merge sources over later.
                if key in out:
                    continue
                out[key] = value
                out.key_marks[key] = source.key_marks[key]
                out.value_marks[key] = source.value_marks[key]
                if key in source.key_texts:
                    out.key_texts[key] = source.key_texts[key]
                merged.add(key)


def _marked_error(
    exc: yaml.MarkedYAMLError, name: str | None, error: type[OodaError], text: str
) -> OodaError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or "invalid YAML"
    context = exc.context or ""
    if mark is not None:
        explained = explain(text, mark.line + 1, problem, context)
        if explained is not None:
            return error(
                f"invalid YAML: {explained.message}",
                file=name,
                line=explained.line,
                column=explained.column,
                hint=NOTHING_LOADED,
            )
    if "expected a single document" in context:
        problem = "expected a single YAML document, found more than one ('---')"
    elif context and exc.context_mark is not None and exc.context_mark is not mark:
        cm = exc.context_mark
        problem = f"{context} (at line {cm.line + 1}, column {cm.column + 1}): {problem}"
    elif context:
        problem = f"{context}: {problem}"
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    hint = _tab_hint(problem)
    return error(
        f"invalid YAML: {problem}",
        file=name,
        line=line,
        column=col,
        hint=f"{hint}\n  {NOTHING_LOADED}" if hint else NOTHING_LOADED,
    )


_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSING = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


# The run of indentation and block indicators ("- ", "? ", ": ") a line starts with,
# after any of the line breaks YAML knows (the match's length counts the break too).
_LINE_PREFIX = re.compile("(?:^|[\r\x85\u2028\u2029])[ \t?:-]*", re.MULTILINE)


def nesting_bound(text: str) -> int:
    """An upper bound on how many collections ``text`` can nest, from its characters.

    A flow collection opens at a ``[`` or ``{``. A block collection starts on a line at
    a column no further right than the run of indentation and indicators the line
    starts with (a key starts right after it); a nested block collection sits at a
    deeper column, except a sequence at its own mapping's column, so each column holds
    two levels at most. Brackets inside strings and indicators inside block scalars
    only make the bound larger.
    """
    prefix = max(map(len, _LINE_PREFIX.findall(text)), default=0)
    return text.count("[") + text.count("{") + 2 * (prefix + 1)


def check_depth(text: str, *, file: str | None, error: type[OodaError]) -> None:
    """Refuse a document nested deeper than ``MAX_DEPTH`` before anything recurses on it.

    PyYAML composes nodes recursively — in C with libyaml, where no ``RecursionError``
    guards the stack — so a few thousand nested brackets would kill the process. The
    events are read one by one (no recursion) and counted; the first level too deep is
    reported where it opens. A document that does not parse is left to the loader, whose
    message names the malformation.

    libyaml is tried first (fast); any complaint from it is checked again by PyYAML's own
    parser, which keeps an explicit state stack: newer libyaml builds scan far ahead in
    flow collections and stop at their own nesting limit before the level that is too
    deep has been reported as an event, which would leave the error unlocated.

    A document whose text cannot nest that deep (:func:`nesting_bound`) is not read
    twice: nearly every file a person writes.
    """
    if nesting_bound(text) <= MAX_DEPTH:
        return
    if _FastLoader is not None:
        try:
            _count_depth(_FastLoader(text), file=file, error=error)
            return
        except yaml.YAMLError:
            pass
    try:
        _count_depth(_Loader(text), file=file, error=error)
    except yaml.YAMLError:
        return


def _count_depth(loader: Any, *, file: str | None, error: type[OodaError]) -> None:
    """Read ``loader``'s events, raising ``error`` at the first level past ``MAX_DEPTH``;
    a ``YAMLError`` from the parser propagates."""
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, _OPENING):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise error(
                        f"nesting deeper than {MAX_DEPTH} levels",
                        file=file,
                        line=mark.line + 1 if mark is not None else 1,
                        column=mark.column + 1 if mark is not None else 1,
                        hint="flatten the structure; no config, scenario or recording "
                        "needs this many levels",
                    )
            elif isinstance(event, _CLOSING):
                depth -= 1
    finally:
        loader.dispose()


def load_yaml_text(
    text: str,
    *,
    file: str | Path | None = None,
    error: type[OodaError] = ConfigError,
    go_typed: tuple[GoPathStep, ...] = (),
    strict_text: bool = False,
) -> Any:
    """Parse one YAML document into located values; ``None`` for an empty document.

    Raises ``error`` (a ``ConfigError`` by default) naming ``file:line:col`` for every
    malformation. Everything under the key path ``go_typed`` (e.g. ``("procedures",
    ANY_KEY, frozenset(PHASES), ANY_ITEM, "parameters")``) is typed like yaml.v3.
    ``strict_text`` refuses strings holding lone surrogates (from ``\\ud800`` escapes).
    """
    name = str(file) if file is not None else None
    check_depth(text, file=name, error=error)
    if _FastLoader is not None:
        # Parse with libyaml when it is there; any complaint from it is re-parsed by the
        # pure-Python parser below so error messages do not depend on how PyYAML was built.
        fast = _FastLoader(text)
        try:
            node = fast.get_single_node()
        except (yaml.YAMLError, RecursionError):
            pass
        else:
            if node is None:
                return None
            builder = _Builder(fast, name, error, go_typed, strict_text)
            return builder.build(node, 0, 0 if go_typed else -1)
        finally:
            fast.dispose()
    loader: _Loader | None = None
    try:
        try:
            loader = _Loader(text)
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise _marked_error(exc, name, error, text) from None
        except yaml.reader.ReaderError as exc:
            line, col = line_col(text, exc.position)
            raise error(
                f"invalid YAML: unacceptable character #x{exc.character:04x}",
                file=name,
                line=line,
                column=col,
                hint="the file must be printable UTF-8 text",
            ) from None
        except yaml.YAMLError as exc:
            raise error(f"invalid YAML: {exc}", file=name, line=1, column=1) from None
        except RecursionError:
            raise error(
                f"nesting deeper than {MAX_DEPTH} levels", file=name, line=1, column=1
            ) from None
        if node is None:
            return None
        builder = _Builder(loader, name, error, go_typed, strict_text)
        return builder.build(node, 0, 0 if go_typed else -1)
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_file(
    path: str | Path,
    *,
    display: str | Path | None = None,
    error: type[OodaError] = ConfigError,
    max_bytes: int = MAX_BYTES,
    go_typed: tuple[GoPathStep, ...] = (),
    strict_text: bool = False,
) -> Any:
    """Read and parse a YAML file; ``display`` is the name used in error messages."""
    name = display if display is not None else path
    text = read_text_file(path, display=name, error=error, max_bytes=max_bytes, what="YAML file")
    return load_yaml_text(text, file=name, error=error, go_typed=go_typed, strict_text=strict_text)

"""A package's public names, declared once and resolved on first use.

Each package ``__init__`` is its contract. It lists the public names in one block that a
type checker reads, as explicit re-exports, and hands the rest to :func:`lazy_exports`::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from pytest_ooda.config.model import Config as Config, Procedure as Procedure
        compose_prompt = assemble_prompt  # another spelling of a public name
    else:
        from pytest_ooda._exports import lazy_exports

        __getattr__, __dir__, __all__ = lazy_exports(__name__, globals())

The block never runs. :func:`lazy_exports` reads the same lines from the package's
source, so a name is written once: the type checker sees the import (``Name as Name``
marks it public even under ``--no-implicit-reexport``), and at run time the table of
name -> defining module and ``__all__`` come from that line. Importing a package costs
reading one small file; a name's module is imported the first time the name is used, so
``ooda --help`` and a pytest session without live runs import only what they use.

``TYPE_CHECKING = False`` (rather than ``typing.TYPE_CHECKING``) keeps ``typing`` out of
start-up; type checkers treat any constant of that name as true.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping
    from typing import Any

_MARKER = "if TYPE_CHECKING:"


class Declarations:
    """What a package ``__init__`` declares: each public name's defining module, the
    other spellings (alias -> name) and the names defined in the ``__init__`` itself."""

    __slots__ = ("aliases", "modules")

    def __init__(self, modules: dict[str, str], aliases: dict[str, str]) -> None:
        self.modules = modules
        self.aliases = aliases

    @property
    def names(self) -> list[str]:
        """Every public name the block declares, in the order written."""
        return [*self.modules, *self.aliases]


def read_declarations(source: str, package: str) -> Declarations:
    """The public names in the ``if TYPE_CHECKING:`` block of ``package``'s ``__init__``.

    The block holds ``from MODULE import Name as Name, ...`` lines (parenthesised over
    several lines or not; ``MODULE`` absolute or relative to ``package``) and
    ``alias = Name`` lines. Anything else is a mistake in our own code and raises
    ``ImportError`` naming the line, which the import-graph test turns into a failure.
    """
    lines = source.splitlines()
    try:
        start = lines.index(_MARKER) + 1
    except ValueError:
        raise ImportError(f"{package}: no {_MARKER!r} block declares the public names") from None
    modules: dict[str, str] = {}
    aliases: dict[str, str] = {}
    statement = ""
    first = start
    for number, raw in enumerate(lines[start:], start + 1):
        if raw and not raw.startswith((" ", "\t")):
            break
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not statement:
            first = number
        statement = f"{statement} {line}".strip()
        if statement.count("(") > statement.count(")"):
            continue
        _read_statement(statement, package, first, modules, aliases)
        statement = ""
    if statement:
        raise ImportError(f"{package}: line {first}: unclosed parenthesis")
    return Declarations(modules, aliases)


def _read_statement(
    statement: str,
    package: str,
    number: int,
    modules: dict[str, str],
    aliases: dict[str, str],
) -> None:
    where = f"{package}: line {number}"
    if statement.startswith("from ") and " import " in statement:
        source, _, names = statement[5:].partition(" import ")
        module = _absolute(source.strip(), package)
        for item in names.replace("(", " ").replace(")", " ").split(","):
            words = item.split()
            if not words:
                continue
            if len(words) != 3 or words[1] != "as" or words[0] != words[2]:
                raise ImportError(
                    f"{where}: {item.strip()!r} must be written 'Name as Name' "
                    "(an explicit re-export)"
                )
            modules[words[0]] = module
        return
    target, equals, value = statement.partition("=")
    if equals and target.strip().isidentifier() and value.strip().isidentifier():
        aliases[target.strip()] = value.strip()
        return
    raise ImportError(f"{where}: expected 'from MODULE import Name as Name' or 'alias = Name'")


def _absolute(module: str, package: str) -> str:
    dots = len(module) - len(module.lstrip("."))
    if not dots:
        return module
    base = package.split(".")
    base = base[: len(base) - (dots - 1)]
    rest = module[dots:]
    return ".".join([*base, rest] if rest else base)


def lazy_exports(
    package: str, namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` from its declaration block."""
    loader = namespace["__loader__"]
    source = loader.get_data(namespace["__file__"]).decode("utf-8")
    declared = read_declarations(source, package)
    table = declared.modules
    aliases = declared.aliases
    public = declared.names

    def __getattr__(name: str) -> Any:
        target = aliases.get(name, name)
        module = table.get(target)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(__import__(module, fromlist=[target]), target)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    return __getattr__, __dir__, public

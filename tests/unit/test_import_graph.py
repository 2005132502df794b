"""The package's import graph, counting every import: at a module's top, inside
functions and under ``TYPE_CHECKING`` (a type-only import is a dependency all the same,
and a function-local one is an import cycle deferred, not removed). No cycle between
modules, nor between packages; pytest/syrupy imported only inside ``pytest_ooda/plugin/``;
code outside a package going through its ``__init__`` only. (Each ``__init__``'s
``__all__``: test_exports.py.)"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ooda"
PYTEST_SIDE = ("pytest", "_pytest", "syrupy", "pluggy")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def _packages() -> tuple[str, ...]:
    return tuple(sorted(_module_name(p) for p in PACKAGE.rglob("__init__.py")))


def _imported_names(tree: ast.Module, package: str) -> dict[str, str]:
    """Name -> module for each ``from MODULE import Name`` at the top of an ``__init__``;
    an alias (``compose_prompt = assemble_prompt``) maps to the module of its name."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = _resolve(package, node, True)
            names.update({alias.asname or alias.name: base for alias in node.names})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Name) and node.value.id in names:
                    names[target.id] = names[node.value.id]
    return names


def _all(tree: ast.Module) -> list[str]:
    """The literal ``__all__`` of a module ([] without one)."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List)
        ):
            return [ast.literal_eval(item) for item in node.value.elts]
    return []


@cache
def _declared(package: str) -> dict[str, str]:
    """Public name -> the module it is imported from: the names in the package's
    ``__all__``, read with :mod:`ast` from its ``__init__``."""
    tree = ast.parse(_modules()[package].read_text(encoding="utf-8"))
    imported = _imported_names(tree, package)
    return {name: imported.get(name, package) for name in _all(tree)}


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str, path: Path, known: set[str]) -> tuple[set[str], set[str]]:
    """The package modules ``module`` imports anywhere (top level, in functions, under
    ``TYPE_CHECKING``) and the external top-level packages it imports. ``from pkg import
    Name`` is an import of ``pkg`` (its ``__init__``, which imports the package's
    modules), ``from pkg import module`` one of ``pkg.module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    internal: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node, path.name == "__init__.py")
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        for target in targets:
            if target.split(".")[0] != "pytest_ooda":
                if target:
                    external.add(target.split(".")[0])
                continue
            # the longest known module the name falls in
            parts = target.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and ".".join(parts) != module:
                internal.add(".".join(parts))
    return internal, external


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    modules = _modules()
    known = set(modules)
    edges: dict[str, set[str]] = {}
    externals: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges[name], externals[name] = _imports(name, path, known)
    return edges, externals


def _is_parent(a: str, b: str) -> bool:
    # A module importing its own package (``pkg.sub`` reading ``pkg.__version__``) is no
    # cycle: importing ``pkg.sub`` has run ``pkg/__init__`` already. The other way round,
    # ``pkg/__init__`` importing its modules, is an edge like any other.
    return b.startswith(a + ".")


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if _is_parent(child, node):
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle() -> None:
    edges, _ = _graph()
    assert _cycles(edges) == []


def _unit(module: str) -> str:
    """The package a module belongs to (``pytest_ooda.judge.run`` -> ``pytest_ooda.judge``);
    a top-level module (``pytest_ooda.compose``) is its own."""
    return ".".join(module.split(".")[:2])


def _package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the packages its modules import. The root ``pytest_ooda/__init__`` (the
    library's namespace, importing from every package) stands outside: the library
    imports only ``__version__`` from it (test below)."""
    between: dict[str, set[str]] = {}
    for module, targets in edges.items():
        if module == "pytest_ooda":
            continue
        units = {_unit(t) for t in targets if t != "pytest_ooda"} - {_unit(module)}
        between.setdefault(_unit(module), set()).update(units)
    return between


def test_no_package_imports_another_that_imports_it_back() -> None:
    """``judge`` and ``scenario`` once imported each other (``scenario`` reads
    ``expect.judge``; ``judge/run.py`` took a ``Scenario`` for its types): a circle of
    15 modules, hidden because every import on one side sat in a function or under
    ``TYPE_CHECKING``."""
    edges, _ = _graph()
    assert _cycles(_package_edges(edges)) == []


def test_the_library_imports_only_the_version_from_its_root() -> None:
    offenders: list[str] = []
    for name, path in _modules().items():
        if name == "pytest_ooda":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and _resolve(name, node, path.name == "__init__.py") == "pytest_ooda"
            ):
                offenders.extend(
                    f"{name}:{node.lineno}: {alias.name}"
                    for alias in node.names
                    if alias.name != "__version__" and f"pytest_ooda.{alias.name}" not in _modules()
                )
    assert offenders == []


def test_the_package_graph_sees_a_circle_through_a_type_only_import(tmp_path: Path) -> None:
    files = {
        "pytest_ooda.a.__init__": "from pytest_ooda.a.one import One\n",
        "pytest_ooda.a.one": "from pytest_ooda.b import Two\nclass One: ...\n",
        "pytest_ooda.b.__init__": "from pytest_ooda.b.two import Two\n",
        "pytest_ooda.b.two": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pytest_ooda.a import One\n"
            "class Two: ...\n"
        ),
    }
    paths: dict[str, Path] = {}
    for dotted, text in files.items():
        name = dotted.removesuffix(".__init__")
        path = tmp_path / f"{dotted.replace('.', '_')}.py"
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    edges = {name: _imports(name, path, set(paths))[0] for name, path in paths.items()}
    assert _cycles(_package_edges(edges)) == [["pytest_ooda.a", "pytest_ooda.b"]]


def test_only_the_plugin_package_imports_pytest_or_syrupy() -> None:
    _, externals = _graph()
    offenders = {
        name: sorted(ext & set(PYTEST_SIDE))
        for name, ext in externals.items()
        if ext & set(PYTEST_SIDE)
        and not (name == "pytest_ooda.plugin" or name.startswith("pytest_ooda.plugin."))
    }
    assert offenders == {}


def test_the_scanner_sees_deferred_and_type_only_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pytest_ooda.b import B\n"
        "def f():\n    from . import c\n    import pytest\n"
    )
    path = tmp_path / "a.py"
    path.write_text(source, encoding="utf-8")
    internal, external = _imports(
        "pytest_ooda.a", path, {"pytest_ooda.a", "pytest_ooda.b", "pytest_ooda.c"}
    )
    assert internal == {"pytest_ooda.b", "pytest_ooda.c"}
    assert "pytest" in external


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycle_finder(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(edges) == expected


def _outside(module: str, package: str) -> bool:
    return not (module == package or module.startswith(package + "."))


def _contract_offenders(modules: dict[str, Path], packages: list[str]) -> list[str]:
    """Imports that reach into a package from outside it: ``pkg.module`` (or a module
    imported through ``pkg``) instead of a name ``pkg/__init__`` declares."""
    offenders: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bases = [alias.name for alias in node.names]
                imported: list[str] = []
            elif isinstance(node, ast.ImportFrom):
                bases = [_resolve(name, node, path.name == "__init__.py")]
                imported = [alias.name for alias in node.names]
            else:
                continue
            for base in bases:
                for package in packages:
                    if not _outside(name, package):
                        continue
                    where = f"{name}:{node.lineno}"
                    if base.startswith(package + "."):
                        offenders.append(f"{where}: imports {base} (use {package})")
                    elif base == package:
                        offenders.extend(
                            f"{where}: imports the module {package}.{item}"
                            for item in imported
                            if f"{package}.{item}" in modules
                        )
    return offenders


def test_code_outside_a_package_imports_only_its_init() -> None:
    """A package's modules are private to it: from outside, ``from pkg import Name``
    where ``pkg/__init__`` declares ``Name``."""
    packages = [p for p in _packages() if p != "pytest_ooda"]
    assert _contract_offenders(_modules(), packages) == []


def test_the_contract_check_finds_each_way_round_it(tmp_path: Path) -> None:
    files = {
        "pkg.__init__": "",
        "pkg.inner": "from pkg.other import x\n",  # inside the package: allowed
        "pkg.other": "x = 1\n",
        "user": (
            "from pkg import x\n"  # the contract: allowed
            "from pkg.other import x\n"
            "import pkg.other\n"
            "def f():\n    from pkg import other\n"
        ),
    }
    modules: dict[str, Path] = {}
    for dotted, text in files.items():
        path = tmp_path / f"{dotted.replace('.', '_')}.py"
        path.write_text(text, encoding="utf-8")
        modules[dotted.removesuffix(".__init__")] = path
    assert _contract_offenders(modules, ["pkg"]) == [
        "user:2: imports pkg.other (use pkg)",
        "user:3: imports pkg.other (use pkg)",
        "user:5: imports the module pkg.other",
    ]


#: The reading side's layers, lowest first: ``results ─> stats ─> report ─> view``. A
#: layer imports those before it, never one after it.
LAYERS = ("pytest_ooda.results", "pytest_ooda.stats", "pytest_ooda.report", "pytest_ooda.view")
#: What ``results/`` may import: nothing above ``config/`` — the leaves and ``config``
#: (``pytest_ooda`` itself for ``__version__``).
BELOW_RESULTS = frozenset(
    {
        "pytest_ooda",
        "pytest_ooda._types",
        "pytest_ooda._util",
        "pytest_ooda.config",
        "pytest_ooda.errors",
        "pytest_ooda.facts",
        "pytest_ooda.reader",
        "pytest_ooda.redact",
        "pytest_ooda.textfile",
    }
)
#: The running side: a live run and a cluster's worker need the record and its log, so
#: they import ``results/`` and none of the other three.
RUNNING = ("pytest_ooda.live", "pytest_ooda.executors")


def _layer_offenders(between: dict[str, set[str]]) -> list[str]:
    """Package imports that break the layers (``between``: package -> packages it
    imports, type-only and function-local imports counted)."""
    offenders: list[str] = []
    for position, layer in enumerate(LAYERS):
        offenders.extend(
            f"{layer} imports {above}"
            for above in sorted(between.get(layer, set()) & set(LAYERS[position + 1 :]))
        )
    offenders.extend(
        f"pytest_ooda.results imports {other}"
        for other in sorted(between.get(LAYERS[0], set()) - BELOW_RESULTS)
    )
    for runner in RUNNING:
        offenders.extend(
            f"{runner} imports {layer}"
            for layer in sorted(between.get(runner, set()) & set(LAYERS[1:]))
        )
    return offenders


def test_the_reading_layers_import_only_downwards() -> None:
    """``results`` depends on nothing above ``config/``; ``stats`` never imports
    ``report`` or ``view``, ``report`` never ``view``; ``live/`` and ``executors/``
    import ``results/`` alone of the four (what a worker loads:
    ``test_what_a_run_loads.py``)."""
    edges, _ = _graph()
    assert _layer_offenders(_package_edges(edges)) == []


def test_the_layer_check_finds_each_way_across() -> None:
    between = {
        "pytest_ooda.results": {"pytest_ooda.config", "pytest_ooda.loop", "pytest_ooda.stats"},
        "pytest_ooda.stats": {"pytest_ooda.results"},
        "pytest_ooda.report": {"pytest_ooda.stats", "pytest_ooda.view"},
        "pytest_ooda.live": {"pytest_ooda.results", "pytest_ooda.report"},
        "pytest_ooda.executors": {"pytest_ooda.results"},
    }
    assert _layer_offenders(between) == [
        "pytest_ooda.results imports pytest_ooda.stats",
        "pytest_ooda.report imports pytest_ooda.view",
        "pytest_ooda.results imports pytest_ooda.loop",
        "pytest_ooda.results imports pytest_ooda.stats",
        "pytest_ooda.live imports pytest_ooda.report",
    ]

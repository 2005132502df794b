"""Each package's public names: its ``__init__`` imports them from the package's modules
and lists them in ``__all__``: nothing imported there is left out, nothing listed is
missing, and no name is hidden by a submodule of the same name."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from tests.unit.test_import_graph import _all, _declared, _imported_names, _modules, _packages

#: The pytest plugin's ``__init__`` also imports what its hooks use; its public names
#: are the fixtures' types alone.
HOOK_MODULES = ("pytest_ooda.plugin",)


@pytest.mark.parametrize("package", _packages())
def test_all_lists_exactly_what_the_init_imports(package: str) -> None:
    tree = ast.parse(_modules()[package].read_text(encoding="utf-8"))
    listed = _all(tree)
    assert listed, f"{package}/__init__.py has no __all__"
    assert len(listed) == len(set(listed)), "a name is listed twice"
    imported = set(_imported_names(tree, package))
    if package in HOOK_MODULES:
        assert set(listed) <= imported
    else:
        assert sorted(listed) == sorted(imported)


@pytest.mark.parametrize("package", _packages())
def test_each_public_name_is_the_object_its_module_defines(package: str) -> None:
    contract = importlib.import_module(package)
    assert sorted(contract.__all__) == sorted(_declared(package))
    for name, source in _declared(package).items():
        value = getattr(contract, name)
        original = importlib.import_module(source)
        # an alias (``compose_prompt = assemble_prompt``) is an object of that module
        assert value is getattr(original, name, None) or any(
            value is other for other in vars(original).values()
        ), name


@pytest.mark.parametrize("package", _packages())
def test_no_public_name_is_a_submodule_too(package: str) -> None:
    """``pkg.render`` must be the function, not ``pkg/render.py``: importing that module
    (``import pkg.render as m``, ``mock.patch("pkg.render.x")``) would find the function."""
    modules = _modules()
    assert sorted(n for n in _declared(package) if f"{package}.{n}" in modules) == []


def test_the_library_leaves_its_heavy_dependencies_to_the_functions_using_them() -> None:
    """Importing the packages an ``ooda`` command or a live run starts from loads neither
    pytest nor the heavy libraries: each is imported where it is used."""
    code = (
        "import sys, pytest_ooda, pytest_ooda.cli, pytest_ooda.live, pytest_ooda.results,"
        " pytest_ooda.stats, pytest_ooda.report, pytest_ooda.view\n"
        "print(sorted(m for m in ('pytest', 'syrupy', 'requests', 'jinja2', 'detect_secrets')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"

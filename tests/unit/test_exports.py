"""``pytest_ooda._exports``: one declaration block read into the lazy table and ``__all__``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import pytest

from pytest_ooda._exports import lazy_exports, read_declarations

BLOCK = textwrap.dedent(
    """\
    \"\"\"A package.\"\"\"

    from __future__ import annotations

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from pkg.model import Config as Config  # a comment
        from .load import (
            load as load,
            save as save,
        )
        from ..errors import Oops as Oops

        read = load
    else:
        from pytest_ooda._exports import lazy_exports
    """
)


def test_the_block_gives_each_name_its_module_and_keeps_aliases() -> None:
    declared = read_declarations(BLOCK, "top.pkg")
    assert declared.modules == {
        "Config": "pkg.model",
        "load": "top.pkg.load",
        "save": "top.pkg.load",
        "Oops": "top.errors",
    }
    assert declared.aliases == {"read": "load"}
    assert declared.names == ["Config", "load", "save", "Oops", "read"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("from pkg.model import Config", r"line 3: 'Config' must be written 'Name as Name'"),
        ("from pkg.model import Config as Cfg", r"'Config as Cfg' must be written"),
        ("import pkg.model", r"line 3: expected 'from MODULE import Name as Name'"),
        ("from pkg.model import (Config as Config,", r"line 3: unclosed parenthesis"),
    ],
)
def test_a_block_the_reader_cannot_take_is_an_import_error(line: str, message: str) -> None:
    source = f'"""Doc."""\nif TYPE_CHECKING:\n    {line}\nelse:\n    pass\n'
    with pytest.raises(ImportError, match=message):
        read_declarations(source, "pkg")


def test_a_package_without_the_block_is_an_import_error() -> None:
    with pytest.raises(ImportError, match="no 'if TYPE_CHECKING:' block"):
        read_declarations('"""Doc."""\n', "pkg")


def test_names_resolve_on_first_use_and_are_then_kept() -> None:
    module = types.ModuleType("fake")
    calls: list[str] = []

    class Loader:
        def get_data(self, path: str) -> bytes:
            calls.append(path)
            return (
                b"if TYPE_CHECKING:\n"
                b"    from os.path import join as join\n"
                b"    glue = join\n"
                b"else:\n    pass\n"
            )

    namespace = vars(module)
    namespace.update(__loader__=Loader(), __file__="fake/__init__.py")
    getter, lister, public = lazy_exports("fake", namespace)
    assert calls == ["fake/__init__.py"]
    assert public == ["join", "glue"]
    import os.path

    assert getter("glue") is os.path.join
    assert namespace["glue"] is os.path.join  # the next lookup skips __getattr__
    assert {"join", "glue"} <= set(lister())
    with pytest.raises(AttributeError, match="module 'fake' has no attribute 'split'"):
        getter("split")


def test_importing_a_package_imports_none_of_its_modules() -> None:
    code = (
        "import sys, pytest_ooda.evaluate as e\n"
        "before = sorted(m for m in sys.modules if m.startswith('pytest_ooda.evaluate.'))\n"
        "e.wilson_interval\n"
        "after = sorted(m for m in sys.modules if m.startswith('pytest_ooda.evaluate.'))\n"
        "print(before, after)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[] ['pytest_ooda.evaluate.stats']\n"

"""The house rules on size: no module of the package over 700 lines, outside the Go port
(``gotemplate``'s translations of Go's text/template, fmt and yaml.v3, which follow their
Go originals file for file), and no function over 100 lines outside ``gotemplate/``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ooda"
MAX_LINES = 700
MAX_FUNCTION_LINES = 100
#: The Go port: modules that mirror a Go source file, kept whole so they can be
#: compared with it.
GO_PORT = frozenset(
    f"gotemplate/{name}.py"
    for name in ("lexer", "parser", "compiler", "runtime", "gofmt", "yamlv3")
)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_700_lines_outside_the_go_port() -> None:
    sizes = {path.relative_to(PACKAGE).as_posix(): _lines(path) for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 100, "the package was not found"
    assert set(sizes) >= GO_PORT, "a module of the Go port moved: update GO_PORT"
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert sorted(set(too_long) - GO_PORT) == [], (
        f"over {MAX_LINES} lines (split them by responsibility): {too_long}"
    )


def test_no_function_over_100_lines_outside_gotemplate() -> None:
    too_long: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith("gotemplate/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    too_long[f"{name}:{node.lineno} {node.name}"] = lines
    assert too_long == {}, (
        f"over {MAX_FUNCTION_LINES} lines (split them by the phases they have): {too_long}"
    )

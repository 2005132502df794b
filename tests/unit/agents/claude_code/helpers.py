"""Building small Claude Code material trees for the unit tests."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def tree(root: Path, files: dict[str, str], *, executable: tuple[str, ...] = ()) -> Path:
    """Write ``files`` (relative path -> text) under ``root``; ``executable`` get +x."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if relative in executable:
            os.chmod(path, 0o755)
    return root


def front(text: str, **keys: str) -> str:
    """A Markdown file with front matter ``keys`` (written as given) and body ``text``."""
    head = "".join(f"{_key(key)}: {value}\n" for key, value in keys.items())
    return f"---\n{head}---\n{text}"


def _key(name: str) -> str:
    """``allowed_tools`` is written ``allowed-tools``; ``when_to_use`` keeps its own."""
    return name if name == "when_to_use" else name.replace("_", "-")

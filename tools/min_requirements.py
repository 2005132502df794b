"""Print the project's dependencies pinned to their lowest allowed versions.

``.ci/run`` installs these into a fresh virtual environment and runs the plugin's tests
there, so every lower bound in ``pyproject.toml`` is one the suite really passes with.
Usage: ``python tools/min_requirements.py [NAME ...]``: one requirement per line, the
runtime dependencies plus each named package of the optional extras (e.g.
``pytest-xdist``), all pinned to their lower bounds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

#: ``name>=X`` -> ``name==X``; a requirement without a lower bound is left as it is.
_LOWER = re.compile(r"^(?P<name>[A-Za-z0-9_.\-\[\]]+)\s*>=\s*(?P<version>[^,;\s]+)")


def pinned(requirement: str) -> str:
    match = _LOWER.match(requirement)
    if match is None:
        return requirement
    return f"{match['name']}=={match['version']}"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[\s]", requirement, maxsplit=1)[0].lower()


def main(names: list[str]) -> int:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    optional = [r for extra in project["optional-dependencies"].values() for r in extra]
    for name in names:
        found = [r for r in optional if _name(r) == name.lower()]
        if not found:
            print(f"min_requirements: {name!r} is in no optional extra", file=sys.stderr)
            return 2
        requirements.extend(found)
    # A package in two extras (the dev extra holds the engines too) is pinned once.
    for requirement in dict.fromkeys(pinned(requirement) for requirement in requirements):
        print(requirement)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

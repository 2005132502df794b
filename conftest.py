"""Root conftest: enables pytester for the plugin's end-to-end tests.

pytester's in-process runs drop every module first imported during the run when they
finish. The plugin imports the library lazily, and each package resolves its names on
first use and keeps them (pytest_ooda/_exports.py), so a first inline run would import
(and then drop) modules whose classes the packages go on handing out, and later runs
would mix classes from two imports of the same module. Importing every library module
here, once, keeps every inline run on the same modules, as in a real session.
"""

import atexit
import os
import pkgutil
import shutil
import sys
import tempfile
from pathlib import Path

import pytest_ooda

for _module in pkgutil.walk_packages(pytest_ooda.__path__, "pytest_ooda."):
    if _module.name not in ("pytest_ooda.__main__",):
        __import__(_module.name)

# `ooda show`/`ooda list` keep their results under $XDG_CACHE_HOME/pytest-ooda/cli
# (pytest_ooda/_entry.py): every `ooda` the suite starts uses a private cache that is
# removed at the end, never the developer's (whose entries could answer for this
# checkout's code, and which the suite would fill).
_CACHE_HOME = tempfile.mkdtemp(prefix="ooda-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
atexit.register(shutil.rmtree, _CACHE_HOME, ignore_errors=True)

# Test helpers shared across the test folders (tests/external_tools.py).
sys.path.insert(0, str(Path(__file__).parent / "tests"))

pytest_plugins = ["pytester"]

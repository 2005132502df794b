"""Root conftest: enables pytester for the plugin's end-to-end tests.

pytester's in-process runs drop every module first imported during the run when they
finish. The plugin imports the library lazily, so the first inline run would import
(and then drop) PyYAML and the library, and later runs would mix classes from two
imports of the same module. Importing them here, once, keeps every inline run on the
same modules, as in a real session.
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest_ooda.compose
import pytest_ooda.config
import pytest_ooda.evaluate
import pytest_ooda.evaluate.log
import pytest_ooda.evaluate.record
import pytest_ooda.lint
import pytest_ooda.loop
import pytest_ooda.plugin.measure
import pytest_ooda.plugin.nodes
import pytest_ooda.plugin.scenarios
import pytest_ooda.scenario  # noqa: F401

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

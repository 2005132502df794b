"""Root conftest: enables pytester for the plugin's end-to-end tests.

pytester's in-process runs (``pytester.runpytest()``/``inline_run``) remove, when they
finish, every module first imported during the run. A module of ours imported inside a
hook (the plugin imports its live-run modules when a live item runs) would then be
imported again by the next run, beside the objects the first copy left behind (a
``yaml.nodes`` class from one import checked against the other's). Importing every
library module here, once, keeps every inline run on the same modules, as in a real
session.

The same goes for the libraries the library imports only when used: ``requests`` (the
HTTP backend) and ``responses`` (the ``ooda_http_ai`` fixture). Worse than a second copy,
a standard-library submodule first imported inside a run (requests' ``http.cookiejar``)
is removed from ``sys.modules`` but stays an attribute of its package (``http``), so the
next import of requests mixes both copies (``ValueError: You can only merge into
CookieJar``).
"""

import pkgutil
import sys
from pathlib import Path

import requests  # noqa: F401  (imported once: see above)
import responses  # noqa: F401

import pytest_ooda

for _module in pkgutil.walk_packages(pytest_ooda.__path__, "pytest_ooda."):
    if _module.name != "pytest_ooda.__main__":
        __import__(_module.name)

# Test helpers shared across the test folders (tests/external_tools.py).
sys.path.insert(0, str(Path(__file__).parent / "tests"))

pytest_plugins = ["pytester"]

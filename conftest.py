"""Root conftest: enables pytester for the plugin's end-to-end tests."""

pytest_plugins = ["pytester"]

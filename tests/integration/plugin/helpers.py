"""Helpers shared by the plugin's lint tests (test_lint.py, test_option_ooda_lint_severity.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ooda_project import GREET_CONFIG

if TYPE_CHECKING:
    from ooda_project import Project


NO_SIGNALS = GREET_CONFIG.replace(
    "          Output <promise>SUCCESS</promise> when everyone was greeted.\n", ""
).replace("          Output <promise>FAILURE</promise> if nobody is there.\n", "")


UNUSED_PARAMETER = GREET_CONFIG.replace(
    "      - path: prompts/decide.md\n",
    "      - path: prompts/decide.md\n        parameters:\n          target: README\n",
)


TEMPLATED_DECIDE = "Decide whom to greet first, starting with {{.target}}.\n"


def config_item(project: Project, *args: str):  # type: ignore[no-untyped-def]
    return project.run("ooda-config.yml::greet::config", "-W", "always", *args)

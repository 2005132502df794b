"""What one render may spend: execution steps, template-call depth and output size.

Go's text/template has no such limits (bar a call depth of 100,000); a test harness
must not hang a CI job on one fragment, so renders here stop with a ``TemplateError``
past them — a deliberate difference from Go (docs/templates.md). The defaults are far
above what any real fragment needs; ``OODA_TEMPLATE_MAX_STEPS``,
``OODA_TEMPLATE_MAX_DEPTH`` and ``OODA_TEMPLATE_MAX_OUTPUT`` change them for a process,
``render(..., limits=Limits(...))`` for one call.

Steps are counted where work can multiply: one per ``range`` element, a hundred per
``{{template}}`` call (which costs about that much more); a printf's padding counts
toward the output limit before it is built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "Budget",
    "BudgetExceeded",
    "Limits",
    "default_limits",
    "reset_default_limits",
]

_ENV = {
    "max_steps": "OODA_TEMPLATE_MAX_STEPS",
    "max_depth": "OODA_TEMPLATE_MAX_DEPTH",
    "max_output": "OODA_TEMPLATE_MAX_OUTPUT",
}


@dataclass(frozen=True)
class Limits:
    """Per-render limits: execution steps, nested ``{{template}}`` calls, output bytes
    (counted as characters)."""

    max_steps: int = 1_000_000
    max_depth: int = 100
    max_output: int = 1 << 20


class BudgetExceeded(Exception):
    """A render went past one of its :class:`Limits` (turned into a ``TemplateError``)."""


class Budget:
    """The running totals of one render."""

    __slots__ = ("depth", "limits", "output", "steps")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.depth = 0
        self.output = 0  # what the outermost template wrote

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.limits.max_steps:
            raise BudgetExceeded(
                f"execution took more than {self.limits.max_steps} steps (a pytest-ooda "
                "limit; OODA_TEMPLATE_MAX_STEPS changes it)"
            )

    def write(self, size: int) -> None:
        self.output += size
        if self.output > self.limits.max_output:
            raise BudgetExceeded(
                f"output is larger than {self.limits.max_output} bytes (a pytest-ooda "
                "limit; OODA_TEMPLATE_MAX_OUTPUT changes it)"
            )


_process_limits: Limits | None = None


def default_limits(env: Mapping[str, str] | None = None) -> Limits:
    """The limits in force: the defaults, with any ``OODA_TEMPLATE_MAX_*`` variable.

    Without ``env`` the process environment is read once, at the first render (renders
    are hot; :func:`reset_default_limits` makes the next one read it again)."""
    global _process_limits
    if env is not None:
        return _limits_from(env)
    if _process_limits is None:
        _process_limits = _limits_from(os.environ)
    return _process_limits


def reset_default_limits() -> None:
    """Forget the process's limits; the next render reads the environment again."""
    global _process_limits
    _process_limits = None


def _limits_from(source: Mapping[str, str]) -> Limits:
    values: dict[str, int] = {}
    for field, name in _ENV.items():
        text = source.get(name)
        if text is None or not text.strip():
            continue
        try:
            number = int(text.strip())
        except ValueError:
            number = 0
        if number < 1:
            from pytest_ooda.errors import ConfigError

            raise ConfigError(f"{name}: expected an integer >= 1, got {text!r}")
        values[field] = number
    return Limits(**values)

"""A finding (one rule violation at one place) and the collector that applies
severities as rules report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ooda._util import display_path
from pytest_ooda.lint.rules import RULES, Rule

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_ooda.lint.settings import LintSettings

    pass


@dataclass(frozen=True)
class Finding:
    """One rule violation at one place."""

    id: str
    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    procedure: str | None = None
    #: A second line such as a "did you mean" suggestion, kept from the error it reports.
    hint: str | None = None

    @property
    def rule(self) -> Rule:
        return RULES[self.id]

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def why(self) -> str:
        return self.rule.why

    def location(self, *, relative_to: Path | None = None) -> str:
        """``file:line:col`` (as much as is known), the file relative to ``relative_to``."""
        if self.file is None:
            return ""
        parts = [display_path(self.file, relative_to)]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def format(self, *, relative_to: Path | None = None) -> str:
        """``file:line:col: OODA201 warning: message``."""
        loc = self.location(relative_to=relative_to)
        text = f"{self.id} {self.severity}: {self.message}"
        return f"{loc}: {text}" if loc else text

    def to_dict(self, *, relative_to: Path | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "file": display_path(self.file, relative_to) if self.file is not None else None,
            "line": self.line,
            "column": self.column,
            "procedure": self.procedure,
            "why": self.why,
            "hint": self.hint,
        }

    def _sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file or "", self.line or 0, self.column or 0, self.id, self.message)


class Collector:
    """Accumulates findings, dropping rules that are off and applying severities."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self.findings: list[Finding] = []

    def add(
        self,
        rule_id: str,
        message: str,
        *,
        file: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
        procedure: str | None = None,
        hint: str | None = None,
    ) -> None:
        if not self.settings.enabled(rule_id):
            return
        self.findings.append(
            Finding(
                rule_id,
                self.settings.severity(rule_id),
                message,
                str(file) if file is not None else None,
                line,
                column,
                procedure,
                hint,
            )
        )

    def add_at(self, rule_id: str, message: str, location: Any, **kw: Any) -> None:
        self.add(
            rule_id,
            message,
            file=getattr(location, "file", None),
            line=getattr(location, "line", None),
            column=getattr(location, "column", None),
            **kw,
        )

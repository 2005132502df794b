"""Rules about a config file as a whole (loop settings, unused fragment files and
aliases, config warnings) and the whole-file entry point."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import ConfigError, OodaError
from pytest_ooda.lint.findings import Collector, Finding
from pytest_ooda.lint.procedure import action_file, lint_procedure
from pytest_ooda.lint.report import LintReport
from pytest_ooda.lint.scenarios import lint_scenarios
from pytest_ooda.lint.settings import LintSettings, resolve_settings

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pytest_ooda.config import Config, Procedure


def _declared_in(procedure: Procedure, files: set[Path]) -> bool:
    file = procedure.location.file
    return file is not None and Path(file).resolve() in files


def _lint_loop(out: Collector, config: Config, files: set[Path]) -> None:
    loop = config.loop
    if loop.iteration_mode != "unlimited" or loop.iteration_timeout is not None:
        return
    where = config.locations.get("loop.iteration_mode")
    if where is None or where.file is None or Path(where.file).resolve() not in files:
        return
    out.add(
        "OODA103",
        "loop: iteration_mode unlimited without an iteration_timeout",
        file=where.file,
        line=where.line,
        column=where.column,
    )


def _lint_unused_fragments(out: Collector, config: Config, procedures: Sequence[Procedure]) -> None:
    from pytest_ooda.fragments import BUILTIN_PREFIX

    used: set[Path] = set()
    folders: dict[Path, set[str]] = {}
    for procedure in config.procedures.values():
        for actions in procedure.phases().values():
            for action in actions:
                try:
                    file = action_file(action)
                except OodaError:
                    continue
                if file is not None:
                    used.add(file.resolve())
    for procedure in procedures:
        for actions in procedure.phases().values():
            for action in actions:
                if action.path is None or action.path.startswith(BUILTIN_PREFIX):
                    continue
                try:
                    file = action_file(action)
                except OodaError:
                    continue
                if file is not None:
                    folders.setdefault(file.resolve().parent, set()).add(file.suffix)
    # A fragment kept next to the config file makes the project root a "fragment folder";
    # its README and notes are not fragments, so that folder is not scanned.
    roots = {
        Path(p.location.file).resolve().parent for p in procedures if p.location.file is not None
    }
    for folder in sorted(folders):
        if folder in roots:
            continue
        suffixes = folders[folder]
        for candidate in sorted(folder.iterdir()):
            if (
                candidate.is_file()
                and candidate.suffix in suffixes
                and candidate.resolve() not in used
            ):
                out.add(
                    "OODA401",
                    f"fragment file {candidate.name} is not used by any procedure",
                    file=candidate,
                    line=1,
                    column=1,
                )


def _lint_unused_aliases(out: Collector, config: Config, files: set[Path]) -> None:
    used = {config.loop.ai_cmd_alias}
    used.update(p.ai_cmd_alias for p in config.procedures.values())
    for alias in sorted(config.aliases):
        where = config.locations.get(f"aliases.{alias}")
        if alias in used or where is None or where.file is None:
            continue
        if Path(where.file).resolve() not in files:
            continue
        out.add(
            "OODA402",
            f"alias {alias!r} is defined but no loop or procedure uses it",
            file=where.file,
            line=where.line,
            column=where.column,
        )


def _lint_config_warnings(out: Collector, config: Config, files: set[Path]) -> None:
    for warning in config.warnings:
        if warning.file is None or Path(warning.file).resolve() not in files:
            continue
        out.add(
            "OODA003",
            warning.message,
            file=Path(warning.file).resolve(),
            line=warning.line,
            column=warning.column,
            hint=warning.hint,
        )


def _lint_broken(out: Collector, config: Config, files: set[Path]) -> None:
    """A procedure that does not load is one OODA001 finding where its error points."""
    for broken in config.broken.values():
        file = broken.location.file
        if file is None or Path(file).resolve() not in files:
            continue
        for error in broken.error.every:  # each mistake of the procedure, found in one pass
            located = error.file is not None and error.line is not None
            out.add(
                "OODA001",
                error.message,
                file=Path(file).resolve(),
                line=error.line if located else broken.location.line,
                column=error.column if located else broken.location.column,
                procedure=broken.name,
                hint=error.hint,
            )


def lint_config(
    config: Config,
    *,
    settings: LintSettings | None = None,
    files: Iterable[str | Path] | None = None,
) -> list[Finding]:
    """All findings for the procedures declared in ``files`` (default: ``config.files``).

    Procedures merged in from other tiers (built-ins, the global config) are left alone
    unless their declaring file is listed, so a workspace lint reports the workspace.
    """
    if settings is None:
        settings = resolve_settings(config)
    wanted = {Path(f).resolve() for f in (files if files is not None else config.files)}
    procedures = [p for p in config.procedures.values() if _declared_in(p, wanted)]
    findings: list[Finding] = []
    for procedure in procedures:
        findings.extend(lint_procedure(config, procedure.name, settings=settings))
    out = Collector(settings)
    _lint_broken(out, config, wanted)
    _lint_config_warnings(out, config, wanted)
    _lint_loop(out, config, wanted)
    _lint_unused_fragments(out, config, procedures)
    _lint_unused_aliases(out, config, wanted)
    from pytest_ooda.lint.material import lint_material_sections

    lint_material_sections(out, config)
    findings.extend(out.findings)
    return sorted(findings, key=Finding._sort_key)


def lint_path(
    config_file: str | Path | None = None,
    *,
    cwd: Path | None = None,
    builtin: bool = False,
    severities: Mapping[str, str] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    scenarios: Sequence[str | Path] = (),
) -> LintReport:
    """Lint a config file (default ``./ooda-config.yml``, else ``./rooda-config.yml``; the
    built-ins when there is neither) and its scenarios: the files named in
    ``scenarios``, else every one under the config's ``scenarios/`` folder.

    A file that does not load is reported as one ``OODA001`` finding. Mistakes in the
    options themselves (unknown rule, bad severity) raise ``ConfigError``.
    """
    from pytest_ooda.config import load_config
    from pytest_ooda.fragments import builtin_procedures_file

    base = cwd if cwd is not None else Path.cwd()
    # Options are checked before the file, so a typo in --select is reported as such.
    option_settings = resolve_settings(None, severities=severities, select=select, ignore=ignore)
    if config_file is None:
        from pytest_ooda.config import workspace_config_file

        target: Path | None = workspace_config_file(base)
    else:
        target = Path(config_file)
        if not target.is_absolute():
            target = base / target
        if not target.is_file():
            raise ConfigError(f"config file not found: {config_file}")
    lint_files = [target] if target is not None else []
    if builtin or target is None:
        lint_files.append(builtin_procedures_file())
    named = [Path(f) if Path(f).is_absolute() else base / f for f in scenarios]
    for path in named:
        if not path.is_file():
            raise ConfigError(f"scenario file not found: {path}")
    scenario_root = None if named or target is None else target.parent / "scenarios"
    project = target.parent if target is not None else base
    try:
        config = load_config(target, cwd=base, env={}, global_config=False)
        settings = resolve_settings(config, severities=severities, select=select, ignore=ignore)
    except OodaError as exc:
        if not option_settings.enabled("OODA001"):
            raise
        finding = Finding(
            "OODA001",
            "error",
            exc.message,
            exc.file or (str(target) if target else None),
            exc.line,
            exc.column,
            hint=exc.hint,
        )
        out = Collector(option_settings)
        count = lint_scenarios(out, None, root=scenario_root, files=named, project=project)
        found = sorted([finding, *out.findings], key=Finding._sort_key)
        return LintReport(tuple(found), (), tuple(str(f) for f in lint_files), count)
    findings = lint_config(config, settings=settings, files=lint_files)
    out = Collector(settings)
    known = {*config.procedures, *config.broken}
    count = lint_scenarios(out, known, root=scenario_root, files=named, project=project)
    findings = sorted([*findings, *out.findings], key=Finding._sort_key)
    wanted = {f.resolve() for f in lint_files}
    names = tuple(p.name for p in config.procedures.values() if _declared_in(p, wanted))
    names += tuple(
        b.name
        for b in config.broken.values()
        if b.location.file is not None and Path(b.location.file).resolve() in wanted
    )
    from pytest_ooda.lint.material import material_items

    return LintReport(
        tuple(findings),
        names,
        tuple(str(f) for f in lint_files),
        count,
        material_items(config),
    )

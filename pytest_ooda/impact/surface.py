"""What a scenario can send: its **surface**, composed the way its live runs are planned.

For each variant a scenario runs under, the run is planned with
:func:`pytest_ooda.live.plan_run` (the config as the session loads it, the variant's
fragment swaps and parameters, the scenario's ``prompt:``, ``context:`` and the agent
material its runs install) and the prompt of iteration 1 is composed with the loop's
iteration limit. The prompt of iteration *n* differs from it only in the ``Iteration: n
of N`` line, which depends on *n* and the limit alone, so iteration 1's prompt (its
sha256 covers the installed material too) stands for every prompt the loop can reach:
two surfaces send the same prompts exactly when those hashes are equal. Templates are
rendered with their parameters, so an edit inside a branch the parameters never take
changes nothing here. The fragments' own hashes (and the material's) are kept to say
*which* fragment made a difference.

The scenarios are found as the plugin finds them: the config files the session's
``procedure_files`` globs match (and ``--ooda-config``), each procedure a file declares,
its scenario folder (``scenarios/<procedure>/`` beside the file, or under
``scenario_dir``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.errors import OodaError

if TYPE_CHECKING:
    from pytest_ooda.config import Config
    from pytest_ooda.results import FragmentHash
    from pytest_ooda.scenario import Scenario
    from pytest_ooda.settings import SessionSettings
    from pytest_ooda.variants import Variant

__all__ = ["Surface", "VariantSurface", "project_surfaces"]

_SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True)
class VariantSurface:
    """The prompts one variant of a scenario sends (``variant`` ``None``: the session's
    own settings)."""

    variant: str | None
    #: sha256 of iteration 1's prompt as the agent receives it, installed material
    #: included (``compose.prompt_sha256``).
    prompt_sha256: str
    #: The loop's iteration limit (``None``: unlimited).
    limit: int | None
    fragments: tuple[FragmentHash, ...]
    context: tuple[str, ...]
    prompt_format: str


@dataclass(frozen=True)
class Surface:
    """One scenario file's surface: its prompts per variant, and its workspace."""

    #: The scenario file relative to the project root (``/``-separated): what the two
    #: sides of a comparison are matched by.
    key: str
    procedure: str
    scenario: str
    variants: tuple[VariantSurface, ...] = ()
    #: The workspace directory relative to the project root (``None``: none).
    workspace: str | None = None
    #: Why it could not be composed (a located message), else ``None``.
    error: str | None = None

    @property
    def label(self) -> str:
        return f"{self.procedure}/{self.scenario}"


class _Loaded:
    """Each config file loaded once per prompt layout, as :func:`plan_run` loads it (the
    session's command-line tier, over the built-ins, the global file and the
    environment): a plan made with it is the plan a run makes, without parsing the file
    again for every scenario."""

    def __init__(self, session: SessionSettings) -> None:
        self.session = session
        self.configs: dict[tuple[Path, str | None], Config] = {}

    def get(self, file: Path, variant: Variant | None) -> Config:
        from pytest_ooda.config import load_config

        layout = variant.prompt_format if variant is not None else None
        found = self.configs.get((file, layout))
        if found is None:
            overrides = self.session.config_overrides()
            if layout is not None:
                overrides = {**(overrides or {}), "prompt_format": layout}
            found = load_config(file, cwd=self.session.root, overrides=overrides)
            self.configs[(file, layout)] = found
        return found


def project_surfaces(session: SessionSettings) -> dict[str, Surface]:
    """Every scenario of the project at ``session.root``, by its :attr:`Surface.key`."""
    surfaces: dict[str, Surface] = {}
    loaded = _Loaded(session)
    for config, procedures, folders in _configs(loaded):
        for folder in folders:
            for path in _scenario_files(folder):
                key = path.relative_to(session.root).as_posix()
                if key in surfaces:
                    continue
                surfaces[key] = _surface(loaded, config, procedures, folder.name, path, key)
    return surfaces


def _configs(loaded: _Loaded) -> list[tuple[Path, set[str] | OodaError, list[Path]]]:
    """Each config file: the procedures it declares (or why it does not load) and the
    scenario folders that belong to it."""
    from pytest_ooda.settings import CONFIG, PROCEDURE_FILES, SCENARIO_DIR

    session = loaded.session
    root = session.root
    files = {
        path.resolve()
        for glob in session[PROCEDURE_FILES]
        for path in root.glob(glob)
        if path.is_file() and path.suffix in _SUFFIXES
    }
    named = session[CONFIG]
    if named is not None and named.is_file():
        files.add(named.resolve())
    found = []
    for file in sorted(files):
        declared = _declared(loaded, file)
        base = session[SCENARIO_DIR] or file.parent / "scenarios"
        folders = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
        if isinstance(declared, set):
            folders = [folder for folder in folders if folder.name in declared]
        found.append((file, declared, folders))
    return found


def _declared(loaded: _Loaded, file: Path) -> set[str] | OodaError:
    """The procedures ``file`` declares (the ones whose definition is in it)."""
    try:
        config = loaded.get(file, None)
    except OodaError as error:
        return error
    locations = [(name, item.location) for name, item in config.procedures.items()]
    locations += [(name, item.location) for name, item in config.broken.items()]
    return {
        name
        for name, location in locations
        if location.file is not None and Path(location.file).resolve() == file
    }


def _scenario_files(folder: Path) -> list[Path]:
    return sorted(
        path
        for path in folder.iterdir()
        if path.suffix in _SUFFIXES and path.is_file() and not path.name.startswith(".")
    )


def _surface(
    loaded: _Loaded,
    config: Path,
    procedures: set[str] | OodaError,
    procedure: str,
    path: Path,
    key: str,
) -> Surface:
    from pytest_ooda.scenario import load_for

    session = loaded.session
    if isinstance(procedures, OodaError):
        return Surface(key, procedure, path.stem, error=_said(procedures, session.root))
    try:
        scenario = load_for(procedure, path, known=procedures)
        variants, workspace = _variants(loaded, config, scenario)
    except OodaError as error:
        return Surface(key, procedure, path.stem, error=_said(error, session.root))
    return Surface(key, procedure, scenario.name, variants, workspace)


def _variants(
    loaded: _Loaded, config: Path, scenario: Scenario
) -> tuple[tuple[VariantSurface, ...], str | None]:
    from pytest_ooda.compose import assemble_prompt, prompt_sha256
    from pytest_ooda.live import plan_run
    from pytest_ooda.settings import VARIANT
    from pytest_ooda.variants import merged

    session = loaded.session
    out = []
    workspace: str | None = None
    for variant in merged(scenario.variants, session[VARIANT]) or (None,):
        plan = plan_run(
            session,
            scenario.procedure,
            scenario,
            config=loaded.get(config, variant),
            variant=variant,
            require_ai=False,
        )
        limit = plan.settings.max_iterations
        # A context value naming a file reads it in the run's workspace, as a run does.
        cwd = plan.workspace if plan.workspace is not None else session.root / ".ooda-none"
        prompt = assemble_prompt(
            plan.procedure, iteration=1, max_iterations=limit, context=plan.context, cwd=cwd
        )
        if plan.workspace is not None:
            workspace = _relative(plan.workspace, session.root)
        out.append(
            VariantSurface(
                variant=variant.name if variant is not None else None,
                prompt_sha256=prompt_sha256(plan.procedure, prompt),
                limit=limit,
                fragments=plan.fragments,
                context=plan.context,
                prompt_format=plan.procedure.prompt_format,
            )
        )
    return tuple(out), workspace


def _relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root``, ``/``-separated (as written when it lies outside
    through a symbolic link)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _said(error: OodaError, root: Path) -> str:
    """The error as one line, its file relative to the project."""
    text = error.format(root)
    return text.splitlines()[0] if text else type(error).__name__

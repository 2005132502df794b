"""A scenario as its runs are made: the procedure as it runs (a ``prompt:`` passed
through as a one-turn ``raw`` procedure, the installed material part of the prompt's
identity) and the agent material each run installs. The one place both a live run
(``live.plan_run``) and a replay (``scenario.replay_scenario``) ask."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pytest_ooda.errors import OodaError, ScenarioError
from pytest_ooda.scenario.drive import material_keys

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_ooda.config import Config, MaterialFile
    from pytest_ooda.scenario.model import Scenario
    from pytest_ooda.variants import Variant

__all__ = [
    "MaterialDir",
    "for_trigger",
    "material_files",
    "materialize",
    "run_material",
    "scenario_config",
    "workspace_material",
]


@dataclass(frozen=True)
class MaterialDir:
    """One directory of agent material a run installs: its section (``claude``), where
    it is, and the git revision its files are taken from (``None``: as they are now)."""

    section: str
    path: Path
    rev: str | None = None
    #: Part of the scenario's ``workspace:`` (copied with it, never installed).
    in_workspace: bool = False

    @property
    def label(self) -> str:
        """How reports name its files: the directory's own name (``.claude``, a
        plugin's folder) — the same at every revision, so a comparison of two lists the
        files that differ; ``workspace/.claude`` for the workspace's own."""
        return f"workspace/{self.path.name}" if self.in_workspace else self.path.name


#: A variant's value that installs none of a section's material.
WITHOUT = ("without", "none")


def run_material(
    config: Config, scenario: Scenario, variant: Variant | None = None
) -> tuple[MaterialDir, ...]:
    """The material a run of ``scenario`` installs: per section what the variant says
    (``without``; ``git:REV``, the same directories as the repository's revision holds
    them; another directory), else what the scenario's own key names (relative to its
    file; ``none`` for nothing), else what the config's section does."""
    found: list[MaterialDir] = []
    own = scenario.material or {}
    base = scenario.path.parent if scenario.path is not None else Path.cwd()
    chosen = variant.material if variant is not None else {}
    for section in material_keys():
        if section in own:
            dirs = [MaterialDir(section, (base / d).resolve()) for d in own[section]]
        else:
            dirs = [MaterialDir(section, path) for path in config.material.get(section, ())]
        value = chosen.get(section)
        if value is None:
            found.extend(dirs)
        elif value in WITHOUT:
            continue
        elif value.startswith("git:"):
            found.extend(replace(entry, rev=value[len("git:") :]) for entry in dirs)
        else:
            assert variant is not None
            where = Path(variant.source).parent if variant.source is not None else Path.cwd()
            found.append(MaterialDir(section, (where / value).resolve()))
    return tuple(found)


def workspace_material(scenario: Scenario) -> tuple[MaterialDir, ...]:
    """The agent material ``scenario``'s ``workspace:`` holds itself (its ``.claude/``):
    the run's copy of the workspace carries it and the agent loads it as the project's,
    so its files are part of the prompt's identity as installed material is — an edited
    SKILL.md there drifts a replay — though nothing installs it, and a ``without``
    variant keeps it (it is the workspace's)."""
    from pytest_ooda.agents import WORKSPACE_MATERIAL

    workspace = scenario.workspace_dir()
    if workspace is None:
        return ()
    return tuple(
        MaterialDir(section, workspace / WORKSPACE_MATERIAL[section], in_workspace=True)
        for section in material_keys()
        if section in WORKSPACE_MATERIAL and (workspace / WORKSPACE_MATERIAL[section]).is_dir()
    )


def materialize(entry: MaterialDir, into: Path) -> Path:
    """Where ``entry``'s files are: its directory, or — for a git revision — a copy
    of the directory as the revision holds it, extracted under ``into``."""
    if entry.rev is None:
        return entry.path
    import io
    import subprocess
    import tarfile

    def git(*argv: str, cwd: Path) -> bytes:
        done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, check=False)
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip()
            raise ScenarioError(
                f"{entry.section}: git:{entry.rev} of {entry.path}: {detail}",
                hint="the revision must be a commit of the repository holding the directory",
            )
        return done.stdout

    top = Path(git("rev-parse", "--show-toplevel", cwd=entry.path).decode().strip())
    inside = entry.path.resolve().relative_to(top.resolve()).as_posix()
    data = git("archive", "--format=tar", entry.rev, "--", inside, cwd=top)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    return into / inside


def material_files(dirs: Sequence[MaterialDir]) -> tuple[MaterialFile, ...]:
    """Every file the ``dirs`` install, with its sha256: the prompt's identity beyond
    its text. A directory that is no material is a located ``ScenarioError``."""
    import hashlib
    import tempfile

    from pytest_ooda.agents import MATERIAL_SECTIONS
    from pytest_ooda.config import MaterialFile

    files: list[MaterialFile] = []
    for entry in dirs:
        with tempfile.TemporaryDirectory(prefix="ooda-material-") as scratch:
            try:
                material = MATERIAL_SECTIONS[entry.section](materialize(entry, Path(scratch)))
            except OodaError as error:
                raise ScenarioError(f"{entry.section}: {error.message}", hint=error.hint) from None
            for relative in material.files:
                data = (material.root / relative).read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                try:
                    text: str | None = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
                source = f"{entry.label}/{relative}"
                files.append(MaterialFile(entry.section, source, digest, text))
    return tuple(files)


def scenario_config(
    config: Config, scenario: Scenario, material: tuple[MaterialFile, ...] = ()
) -> Config:
    """``config`` with ``scenario``'s procedure as the scenario runs it: its ``prompt:``
    passed through (a ``raw`` procedure of that one text, one iteration unless the
    scenario says more) and the material its runs use (part of the prompt's identity):
    ``material``, what they install, then what its workspace holds itself
    (:func:`workspace_material`). ``config`` itself when the scenario changes neither."""
    material = (*material, *material_files(workspace_material(scenario)))
    if scenario.prompt is None and not material:
        return config
    from pytest_ooda.config import FragmentAction, Location

    procedure = config.procedure(scenario.procedure)
    changes: dict[str, Any] = {"material": material}
    if scenario.prompt is not None:
        where = scenario.path if scenario.path is not None else Path("scenario")
        action = FragmentAction(
            content=scenario.prompt,
            path=None,
            parameters=MappingProxyType({}),
            base_dir=where.parent,
            location=Location(where, 1, 1),
        )
        changes.update(
            prompt_format="raw",
            observe=(),
            orient=(),
            decide=(),
            act=(action,),
            iteration_mode="max-iterations",
            default_max_iterations=1,
        )
    procedures = {**config.procedures, procedure.name: replace(procedure, **changes)}
    return replace(config, procedures=MappingProxyType(procedures))


def for_trigger(scenario: Scenario, case: str) -> Scenario:
    """``scenario`` as the run of one prompt of its trigger set: that prompt passed
    through, and one more assertion — the target fired (a ``should`` prompt) or did not
    (a ``should_not`` one). A case the set does not have is a located ``ScenarioError``."""
    from pytest_ooda.scenario.fired import ActivationExpect
    from pytest_ooda.scenario.model import Expect

    triggers = scenario.triggers
    found = triggers.case(case) if triggers is not None else None
    if triggers is None or found is None:
        file = str(scenario.path) if scenario.path is not None else None
        known = ", ".join(c.id for c in triggers.cases()) if triggers is not None else "none"
        raise ScenarioError(
            f"scenario {scenario.label}: no trigger case {case!r} (its cases: {known})",
            file=file,
        )
    expect = scenario.expect or Expect()
    wanted = ActivationExpect(triggers.kind, triggers.name, found.should_fire, triggers.line)
    return replace(
        scenario,
        prompt=found.prompt,
        iterations=(),
        expect=replace(expect, activation=(*expect.activation, wanted)),
    )

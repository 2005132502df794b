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

__all__ = ["MaterialDir", "for_trigger", "material_files", "run_material", "scenario_config"]


@dataclass(frozen=True)
class MaterialDir:
    """One directory of agent material a run installs: its section (``claude``) and
    where it is."""

    section: str
    path: Path

    @property
    def label(self) -> str:
        """How reports name its files: the directory's own name (``.claude``, a
        plugin's folder)."""
        return self.path.name


def run_material(config: Config, scenario: Scenario) -> tuple[MaterialDir, ...]:
    """The material a run of ``scenario`` installs: what the scenario's own keys name
    (relative to its file; ``none`` for nothing), else what the config's sections do."""
    found: list[MaterialDir] = []
    own = scenario.material or {}
    base = scenario.path.parent if scenario.path is not None else Path.cwd()
    for section in material_keys():
        if section in own:
            found.extend(MaterialDir(section, (base / d).resolve()) for d in own[section])
        else:
            found.extend(MaterialDir(section, path) for path in config.material.get(section, ()))
    return tuple(found)


def material_files(dirs: Sequence[MaterialDir]) -> tuple[MaterialFile, ...]:
    """Every file the ``dirs`` install, with its sha256: the prompt's identity beyond
    its text. A directory that is no material is a located ``ScenarioError``."""
    import hashlib

    from pytest_ooda.agents import MATERIAL_SECTIONS
    from pytest_ooda.config import MaterialFile

    files: list[MaterialFile] = []
    for entry in dirs:
        try:
            material = MATERIAL_SECTIONS[entry.section](entry.path)
        except OodaError as error:
            raise ScenarioError(f"{entry.section}: {error.message}", hint=error.hint) from None
        for relative in material.files:
            data = (material.root / relative).read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            files.append(MaterialFile(entry.section, f"{entry.label}/{relative}", digest))
    return tuple(files)


def scenario_config(
    config: Config, scenario: Scenario, material: tuple[MaterialFile, ...] = ()
) -> Config:
    """``config`` with ``scenario``'s procedure as the scenario runs it: its ``prompt:``
    passed through (a ``raw`` procedure of that one text, one iteration unless the
    scenario says more) and the material its runs install (part of the prompt's
    identity). ``config`` itself when the scenario changes neither."""
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

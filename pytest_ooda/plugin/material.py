"""Collection of the agent material a config names (``claude:`` — plugins and
``.claude/`` directories): each directory a collector under the config file, each
command, skill and subagent its items::

    <config>::claude[greeter]::config                      the directory's own files
    <config>::claude[greeter]::config[skill/greeter:greet]  its front matter, references,
                                                           lint (errors fail, warnings warn)
    <config>::claude[greeter]::prompt[skill/greeter:greet]  rendered as the agent renders
                                                           it, against its Markdown snapshot
    <config>::claude[greeter]::prompt[command/greeter:hello@hello]
                                                           the command with the arguments
                                                           procedure ``hello``'s prompt gives

The checks, the lint and the rendering are the agent's (``pytest_ooda.agents``); this
module only presents them as items. A directory that is no material is one failing
``config`` item.

A project without a procedure config names its directories in the ini file
(``ooda_claude_dirs``): they are collected under it, ``pytest.ini::claude[greeter]``,
with no procedure or scenario to invoke them and the default lint severities.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda.errors import LintWarning, OodaError
from pytest_ooda.plugin import SESSION, report
from pytest_ooda.plugin.report import ItemFailure
from pytest_ooda.plugin.state import SNAPSHOT_DIR

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pytest_ooda.agents import Item, Material
    from pytest_ooda.lint import Finding
    from pytest_ooda.plugin.state import LoadedFile

__all__ = ["IniMaterial", "material_nodes"]


#: What collection reads of each scenario of a config's procedures: its procedure, its
#: file and the one-line values of the keys below (``scenario.declared_values``).
_Scenario = tuple[str, Path, dict[str, str]]
_KEYS = ("workspace", "prompt")


def material_nodes(parent: pytest.Collector, loaded: LoadedFile) -> list[MaterialNode]:
    """A collector per material directory ``loaded``'s config names, then one per
    ``.claude/`` directory a scenario's workspace holds itself."""
    scenarios = _scenarios(parent.config, loaded)
    named = [
        MaterialNode.from_parent(
            parent,
            name=f"{section}[{path.name}]",
            section=section,
            root=path,
            loaded=loaded,
            scenarios=scenarios,
        )
        for section, paths in loaded.config.material.items()
        for path in paths
    ]
    return [*named, *_workspace_nodes(parent, loaded, scenarios)]


class IniMaterial(pytest.File):
    """The ini file, when it names material directories (``ooda_claude_dirs``): a
    collector per directory, named by its path from the ini file
    (``claude[plugins/greeter]``)."""

    def collect(self) -> Iterable[MaterialNode]:
        import os

        from pytest_ooda.agents import INI_MATERIAL_SECTION as SECTION
        from pytest_ooda.settings import MATERIAL_DIRS

        base = self.path.parent
        return [
            MaterialNode.from_parent(
                self,
                name=f"{SECTION}[{Path(os.path.relpath(root, base)).as_posix()}]",
                section=SECTION,
                root=root,
                loaded=None,
            )
            for root in self.config.stash[SESSION][MATERIAL_DIRS]
        ]


def _scenarios(config: pytest.Config, loaded: LoadedFile) -> tuple[_Scenario, ...]:
    """Every scenario file of ``loaded``'s procedures, with its workspace and prompt
    lines — read only when the config has material or a scenario's workspace may."""
    from pytest_ooda._types import SCENARIO_SUFFIXES
    from pytest_ooda.scenario import declared_values
    from pytest_ooda.settings import SCENARIO_DIR

    root = config.stash[SESSION][SCENARIO_DIR] or loaded.path.parent / "scenarios"
    found: list[_Scenario] = []
    for procedure in loaded.declared:
        directory = root / procedure.name
        for file in sorted(directory.iterdir()) if directory.is_dir() else ():
            if file.suffix in SCENARIO_SUFFIXES and not file.name.startswith("."):
                found.append((procedure.name, file, declared_values(file, _KEYS)))
    return tuple(found)


def _workspace_nodes(
    parent: pytest.Collector, loaded: LoadedFile, scenarios: tuple[_Scenario, ...]
) -> list[MaterialNode]:
    """A collector per agent material directory the ``workspace:`` of a scenario of
    ``loaded``'s procedures holds (``.claude/``: the agent loads it as the project's, so
    it is checked and snapshot like named material), named by its path from the config
    file (``claude[scenarios/hello/repo/.claude]``); once each, and not when the
    config's section names it already."""
    import os

    from pytest_ooda.agents import WORKSPACE_MATERIAL

    # A section may name the workspace's directory, or the workspace holding it.
    seen = {
        found
        for section, paths in loaded.config.material.items()
        for path in paths
        for found in (path.resolve(), (path / WORKSPACE_MATERIAL.get(section, "")).resolve())
    }
    base = loaded.path.parent
    nodes: list[MaterialNode] = []
    for _, file, values in scenarios:
        if "workspace" not in values:
            continue
        workspace = (file.parent / values["workspace"]).resolve()
        for section, name in WORKSPACE_MATERIAL.items():
            held = workspace / name
            if held in seen or not held.is_dir():
                continue
            seen.add(held)
            shown = Path(os.path.relpath(held, base)).as_posix()
            nodes.append(
                MaterialNode.from_parent(
                    parent,
                    name=f"{section}[{shown}]",
                    section=section,
                    root=held,
                    loaded=loaded,
                    scenarios=scenarios,
                )
            )
    return nodes


class MaterialNode(pytest.Collector):
    """One plugin or ``.claude/`` directory."""

    def __init__(
        self,
        *,
        section: str,
        root: Path,
        loaded: LoadedFile | None,
        scenarios: tuple[_Scenario, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.section = section
        self.root = root
        self.loaded = loaded
        self.scenarios = scenarios
        self._findings: list[Finding] | None = None
        self._material: Material | None = None

    def material(self) -> Material:
        """The directory's material, read once (every item of it asks)."""
        if self._material is None:
            from pytest_ooda.agents import MATERIAL_SECTIONS

            self._material = MATERIAL_SECTIONS[self.section](self.root)
        return self._material

    def collect(self) -> Iterable[pytest.Item]:
        try:
            material = self.material()
        except OodaError as error:
            return [BrokenMaterialItem.from_parent(self, name="config", error=error)]
        items: list[pytest.Item] = [MaterialConfigItem.from_parent(self, name="config")]
        uses_syrupy = self.config.pluginmanager.hasplugin("syrupy")
        body = _with_snapshot if uses_syrupy else _without_snapshot
        invoked = _invocations(self.loaded, material, self.scenarios)
        for item in material.items:
            items.append(MaterialConfigItem.from_parent(self, name=f"config[{item.key}]"))
            for suffix, arguments in (("", ""), *invoked.get(item.key, ())):
                items.append(
                    MaterialPromptItem.from_parent(
                        self,
                        name=f"prompt[{item.key}{suffix}]",
                        callobj=body,
                        key=item.key,
                        arguments=arguments,
                    )
                )
        return items

    def findings(self) -> list[Finding]:
        """Every finding of the directory, with the severities of the config's ``lint:``
        section and the session's overrides; computed once for all its items."""
        if self._findings is None:
            from pytest_ooda import lint
            from pytest_ooda.settings import LINT_SEVERITY

            overrides = lint.parse_severity_overrides(self.config.stash[SESSION][LINT_SEVERITY])
            config = None if self.loaded is None else self.loaded.config
            settings = lint.resolve_settings(config, severities=overrides)
            out = lint.Collector(settings)
            lint.lint_material_dir(out, self.section, self.root)
            self._findings = out.findings
        return self._findings


def _invocations(
    loaded: LoadedFile | None, material: Material, scenarios: tuple[_Scenario, ...]
) -> dict[str, list[tuple[str, str]]]:
    """Per item key, ``(suffix, arguments)`` for each ``raw`` procedure of the file whose
    prompt invokes it (``/name arguments``: ``@procedure``), and each scenario whose
    ``prompt:`` does (``@procedure:scenario``)."""
    if loaded is None:
        return {}  # the ini file's material: nothing invokes it
    from pytest_ooda.compose import assemble_prompt

    prompts: list[tuple[str, str]] = []
    for procedure in loaded.declared:
        if procedure.prompt_format != "raw":
            continue
        try:
            prompts.append((f"@{procedure.name}", assemble_prompt(procedure)))
        except OodaError:
            continue
    prompts += [
        (f"@{procedure}:{file.stem}", values["prompt"])
        for procedure, file, values in scenarios
        if "prompt" in values
    ]
    found: dict[str, list[tuple[str, str]]] = {}
    for suffix, prompt in prompts:
        text = prompt.lstrip()
        if not text.startswith("/"):
            continue
        name, _, arguments = text[1:].partition(" ")
        name = name.split("\n", 1)[0]
        for kind in ("command", "skill"):
            item = material.find(kind, name)
            if item is not None:
                found.setdefault(item.key, []).append((suffix, arguments.strip()))
                break
    return found


def _material_node(item: pytest.Item) -> MaterialNode:
    parent = item.parent
    assert isinstance(parent, MaterialNode)
    return parent


def _find(node: MaterialNode, key: str) -> tuple[Material, Item]:
    material = node.material()
    kind, _, name = key.partition("/")
    found = material.find(kind, name)  # type: ignore[arg-type]
    if found is None:
        raise ItemFailure(f"{key} is gone from {node.root}")
    return material, found


class _Located(pytest.Item):
    """An item reported at the material directory (or its file)."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        error = excinfo.value
        if isinstance(error, ItemFailure):
            return str(error)
        if isinstance(error, OodaError):
            return report.format_error(error, root=self.config.rootpath)
        return super().repr_failure(excinfo)


class BrokenMaterialItem(_Located):
    """A directory that is no material: fails with the located error."""

    def __init__(self, *, error: OodaError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.error.file or self.path), 0, self.name

    def runtest(self) -> None:
        raise self.error


class MaterialConfigItem(_Located):
    """``config``: the directory's own files (manifests, hook settings); ``config[key]``:
    one item's file. Findings at ``error`` fail it, ``warning`` ones are warnings."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = _material_node(self)
        return node.root, 0, f"{node.name}::{self.name}"

    def runtest(self) -> None:
        node = _material_node(self)
        key = self.name[len("config[") : -1] if self.name != "config" else None
        files = {str(item.file) for item in node.material().items}
        if key is None:
            mine = [f for f in node.findings() if f.file not in files]
        else:
            _, item = _find(node, key)
            mine = [f for f in node.findings() if f.file == str(item.file)]
        root = self.config.rootpath
        mine.sort(key=lambda finding: (finding.line or 0, finding.column or 0, finding.id))
        for finding in mine:
            if finding.severity == "warning":
                report.warn_at(
                    LintWarning(
                        f"{finding.id} {finding.severity}: {finding.message}",
                        file=finding.file,
                        line=finding.line,
                        column=finding.column,
                        hint=finding.hint,
                    ),
                    root=root,
                )
        errors = [finding for finding in mine if finding.severity == "error"]
        if errors:
            raise ItemFailure(report.format_findings(errors, root=root))


def _with_snapshot(snapshot: object) -> None:
    """Placeholder body: ``MaterialPromptItem.runtest`` does the work."""


def _without_snapshot() -> None:
    """Placeholder body used when syrupy is disabled (``-p no:syrupy``)."""


class MaterialPromptItem(pytest.Function):
    """A command, skill or subagent rendered as its agent renders it (with the arguments
    a procedure invokes it with), against its Markdown snapshot."""

    def __init__(self, *, key: str, arguments: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key
        self.arguments = arguments
        file_node = _material_node(self).parent
        explicit = getattr(file_node, "snapshot_dir", None)
        if explicit is not None:
            self.stash[SNAPSHOT_DIR] = explicit

    def render(self) -> str:
        from pytest_ooda.agents import render_snapshot

        node = _material_node(self)
        material, item = _find(node, self.key)
        label = None
        if "@" in self.name:
            label = f"/{item.name} {self.arguments}".rstrip()
        return render_snapshot(item, material, self.arguments, label=label)

    def snapshot_path(self) -> Path:
        from pytest_ooda.plugin.snapshots import (
            PromptSnapshotExtension,
            material_stem,
            safe_name,
        )

        site = self.stash.get(SNAPSHOT_DIR, None)
        if site is None:
            site = self.path.parent / str(PromptSnapshotExtension.snapshot_dirname) / self.path.stem
        phase = self.name[len("prompt[") : -1]
        return site / safe_name(_material_node(self).name) / f"{material_stem(phase)}.md"

    def runtest(self) -> None:
        from pytest_ooda.plugin import snapshots as prompt_snapshot

        text = self.render()
        snapshot = self.funcargs.get("snapshot")
        if snapshot is None:
            recorded = prompt_snapshot.read_prompt_snapshot(self.snapshot_path())
            if recorded == text:
                return
        else:
            comparison = prompt_snapshot.compare(snapshot, text)
            if comparison.matched:
                return
            recorded = comparison.recorded
        raise ItemFailure(self._mismatch(recorded if isinstance(recorded, str) else None, text))

    def _mismatch(self, recorded: str | None, text: str) -> str:
        import difflib

        from pytest_ooda._util import display_path

        node = _material_node(self)
        _, item = _find(node, self.key)
        root = self.config.rootpath
        shown = display_path(self.snapshot_path(), root)
        by = self.name.split("@")[1][:-1] if "@" in self.name else None
        what = item.shown
        if by is not None and ":" in by:
            what += f" as scenario {by.replace(':', '/')} invokes it"
        elif by is not None:
            what += f" as procedure {by} invokes it"
        if recorded is None:
            return (
                f"{node.name}: no snapshot of {what} yet ({shown})\n"
                "  run `pytest --snapshot-update` to create it"
            )
        diff = difflib.unified_diff(
            recorded.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=f"{shown} (snapshot)",
            tofile=f"{what} (rendered now)",
        )
        return (
            f"{node.name}: {what} differs from its snapshot {shown}\n"
            f"  its file: {display_path(item.file, root)}\n\n"
            + "".join(diff)
            + "\n  run `pytest --snapshot-update` to accept it"
        )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        node = _material_node(self)
        return node.root, 0, f"{node.name}::{self.name}"

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Any:
        error = excinfo.value
        if isinstance(error, ItemFailure):
            return str(error)
        if isinstance(error, OodaError):
            return report.format_error(error, root=self.config.rootpath)
        return super().repr_failure(excinfo)

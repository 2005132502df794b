"""Collection: procedure config files become collectors, procedures become item groups.

Per procedure (ids under the config file)::

    <procedure>::config              loads, renders, and is lint-clean at error severity
    <procedure>::prompt[<phase>]     observe/orient/decide/act/assembled vs its snapshot
    <procedure>::scenario[<name>]    a scenario replayed through the real loop runner
    <procedure>::live[<name>]        the same scenario against the real AI (marker ``live``)
    <procedure>::live[<name>@<v>#k]  run k of its repeats under variant v (``variants:``,
                                     ``--ooda-variant``)
    <procedure>::live[<name>/<case>] one prompt of its trigger set (``should-1``; with
                                     variants and repeats ``live[<name>/<case>@<v>#k]``)

A config file that does not load is one failing ``config`` item; one that declares no
procedure is one passing ``config`` item carrying its warnings. A procedure whose own
definition does not load still gets its items, which fail with its located error (its
snapshots are kept), while the file's other procedures run as usual. The items are
:mod:`.items`' (no agent), :mod:`.replays`' and :mod:`.live_items`'.

The entry point imports this module when the first procedure file is collected (or
``--ooda-builtin`` asks for the packaged ones): :func:`collect_file` then registers
:class:`Collection`, the session-level part — the built-ins added, scenario folders no
procedure runs reported, the counts printed, the replays' scratch directories removed,
a skip reported at the item's file.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ooda._types import PROMPT_PARTS, SCENARIO_SUFFIXES
from pytest_ooda._util import closest, display_path
from pytest_ooda.errors import OodaError, ScenarioError
from pytest_ooda.plugin import SESSION, live_requested
from pytest_ooda.plugin.items import (
    BrokenConfigItem,
    ConfigItem,
    FileConfigItem,
    OrphanScenariosItem,
    PromptItem,
    prompt_with_snapshot,
    prompt_without_snapshot,
)
from pytest_ooda.plugin.live_items import LiveItem
from pytest_ooda.plugin.material import material_nodes
from pytest_ooda.plugin.replays import ScenarioItem
from pytest_ooda.plugin.report import collection_lines
from pytest_ooda.plugin.snapshots import PromptSnapshotExtension
from pytest_ooda.plugin.state import (
    BUILTIN_NODEID,
    BUILTIN_SNAPSHOTS,
    PLUGIN_STATE,
    SKIP_AT_ITEM,
    LoadedFile,
    PluginState,
)
from pytest_ooda.settings import BUILTIN, SCENARIO_DIR, VARIANT

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Iterator

    from pytest_ooda.config import BrokenProcedure, Procedure
    from pytest_ooda.variants import Variant


def collect_file(parent: pytest.Collector, path: Path) -> ConfigFile:
    """The collector of procedure file ``path`` (the session's collection set up with
    the first one)."""
    register(parent.config)
    collector: ConfigFile = ConfigFile.from_parent(parent, path=path)
    return collector


def register(config: pytest.Config) -> None:
    """The session's collection state and its hooks, once."""
    if PLUGIN_STATE in config.stash:
        return
    config.stash[PLUGIN_STATE] = PluginState()
    config.pluginmanager.register(Collection(), "ooda-collection")


class Collection:
    """The session-level part of collection (registered by :func:`register`)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        # tryfirst: the built-ins must be in the list before -k/-m deselection and before
        # syrupy records the collected items.
        add_builtin_items(session, items)
        fail_orphan_scenarios(config, items)

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        return collection_lines(config.stash[PLUGIN_STATE])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, Any, None]:
        # A skip of ours (a procedure that does not load, a live item without an agent)
        # is reported at the item's file, not at the plugin line that noticed.
        outcome = yield
        if item.stash.get(SKIP_AT_ITEM, False):
            report = outcome.get_result()
            if report.skipped and isinstance(report.longrepr, tuple):
                path, line, _ = item.reportinfo()
                report.longrepr = (str(path), (line or 0) + 1, report.longrepr[2])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        session.config.stash[PLUGIN_STATE].close()


class ConfigFile(pytest.File):
    """One procedure config file."""

    snapshot_dir: Path | None = None
    read_only: bool = False

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        state = self.config.stash[PLUGIN_STATE]
        state.collected_files.add(self.path.resolve())
        state.counts["files"] += 1
        try:
            loaded = load_collected(self.path, self.config.stash[SESSION].config_overrides())
        except OodaError as error:
            state.broken_files.add(self.path.resolve())
            return [BrokenConfigItem.from_parent(self, name="config", error=error)]
        procedures = [*loaded.declared, *(_placeholder(failed) for failed in loaded.broken)]
        state.counts["procedures"] += len(procedures)
        if not procedures and not loaded.config.material:
            # A file of loop settings only, or one whose `procedures:` is misspelt: one
            # item, so its warnings are seen rather than the file silently yielding nothing.
            return [FileConfigItem.from_parent(self, name="config", loaded=loaded)]
        procedures.sort(key=lambda procedure: procedure.location.line)
        nodes: list[pytest.Collector] = [
            ProcedureNode.from_parent(self, name=procedure.name, loaded=loaded, procedure=procedure)
            for procedure in procedures
        ]
        return [*nodes, *material_nodes(self, loaded)]  # and the agent material it names


def _placeholder(failed: BrokenProcedure) -> Procedure:
    """An empty procedure standing for one that does not load: its node's items ask the
    config for it, and so fail with its own located error."""
    from pytest_ooda.config import Procedure

    return Procedure(
        name=failed.name,
        display="",
        summary="",
        description="",
        observe=(),
        orient=(),
        decide=(),
        act=(),
        iteration_mode=None,
        default_max_iterations=None,
        iteration_timeout=None,
        max_output_buffer=None,
        ai_cmd=None,
        ai_cmd_alias=None,
        ai_api=None,
        location=failed.location,
    )


class ProcedureNode(pytest.Collector):
    """The items of one procedure."""

    def __init__(self, *, loaded: LoadedFile, procedure: Procedure, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.procedure = procedure

    def known(self) -> set[str]:
        """The procedures a scenario of this file may name (loading or not)."""
        config = self.loaded.config
        return {*config.procedures, *config.broken}

    @property
    def file_node(self) -> ConfigFile:
        parent = self.parent
        assert isinstance(parent, ConfigFile)
        return parent

    def collect(self) -> Iterable[pytest.Item]:
        items: list[pytest.Item] = [ConfigItem.from_parent(self, name="config")]
        uses_syrupy = self.config.pluginmanager.hasplugin("syrupy")
        for phase in PROMPT_PARTS:
            items.append(
                PromptItem.from_parent(
                    self,
                    name=f"prompt[{phase}]",
                    callobj=prompt_with_snapshot if uses_syrupy else prompt_without_snapshot,
                    phase=phase,
                )
            )
        # One item pair per name: ``x.yml`` next to ``x.yaml`` would give two items the
        # same node id, which breaks -k, --lf and xdist; the pair fails instead.
        by_name: dict[str, list[Path]] = {}
        for path in self.scenario_files():
            by_name.setdefault(path.stem, []).append(path)
        self.config.stash[PLUGIN_STATE].counts["scenarios"] += len(by_name)
        for name, paths in by_name.items():
            clash = tuple(paths[1:])
            items.append(
                ScenarioItem.from_parent(
                    self, name=f"scenario[{name}]", scenario=paths[0], clash=clash
                )
            )
            runs, variants, cases = (1, (), ()) if clash else self.live_plan(paths[0])
            # An item per trigger set's prompt (live[name/should-1]), variant and run.
            for variant, case in product(variants or (None,), cases or (None,)):
                at = name + (f"/{case}" if case else "") + (f"@{variant.name}" if variant else "")
                for run in range(1, runs + 1):
                    live = LiveItem.from_parent(
                        self,
                        name=f"live[{at}]" if runs == 1 else f"live[{at}#{run}]",
                        scenario=paths[0],
                        clash=clash,
                        run=run,
                        runs=runs,
                        variant=variant,
                        trigger=case,
                    )
                    live.add_marker("live")
                    items.append(live)
        return items

    def live_plan(self, path: Path) -> tuple[int, tuple[Variant, ...], tuple[str, ...]]:
        """The repeats of the scenario at ``path``, the variants each runs under (its
        own ``variants:``, then ``--ooda-variant``'s; none: the session's settings) and
        its trigger set's prompts (``should-1``, ``should-not-1``; none: not a trigger
        set) — an item per prompt, variant and run.

        Reading the scenario costs a parse, so it is only read when live items can run
        (``-m live``); otherwise its one item is deselected anyway. A file that does not
        load gets one item, which fails with the located error.
        """
        settings = self.config.stash[SESSION]
        if not live_requested(self.config):
            return 1, (), ()
        from pytest_ooda.scenario import load_scenario
        from pytest_ooda.variants import merged

        try:
            scenario = load_scenario(path)
        except OodaError:
            return 1, (), ()
        variants = merged(scenario.variants, settings[VARIANT])
        cases = scenario.triggers.cases() if scenario.triggers is not None else ()
        return settings.runs_for(scenario.repeat), variants, tuple(case.id for case in cases)

    def scenario_dir(self) -> Path:
        root = self.config.stash[SESSION][SCENARIO_DIR] or self.file_node.path.parent / "scenarios"
        return root / self.procedure.name

    def scenario_files(self) -> list[Path]:
        directory = self.scenario_dir()
        if not directory.is_dir():
            return []
        return sorted(
            path
            for path in directory.iterdir()
            if path.suffix in SCENARIO_SUFFIXES and path.is_file() and not path.name.startswith(".")
        )


def iter_procedure_nodes(items: Iterable[pytest.Item]) -> Iterator[ProcedureNode]:
    seen: set[str] = set()
    for item in items:
        parent = item.parent
        if isinstance(parent, ProcedureNode) and parent.nodeid not in seen:
            seen.add(parent.nodeid)
            yield parent


def add_builtin_items(session: pytest.Session, items: list[pytest.Item]) -> None:
    """With ``--ooda-builtin``: collect the packaged built-ins unless already collected."""
    settings = session.config.stash[SESSION]
    if not settings[BUILTIN]:
        return
    path = builtin_config_path()
    if path.resolve() in session.config.stash[PLUGIN_STATE].collected_files:
        return
    inside_root = path.resolve().is_relative_to(settings.root.resolve())
    node = ConfigFile.from_parent(
        session, path=path, nodeid=None if inside_root else f"{BUILTIN_NODEID}/builtin.yml"
    )
    if not inside_root:
        # Outside the rootdir (an installed package): keep snapshots in the project,
        # never inside site-packages.
        node.snapshot_dir = (
            settings.root / str(PromptSnapshotExtension.snapshot_dirname) / BUILTIN_SNAPSHOTS
        )
        node.read_only = True
    items.extend(session.genitems(node))


def fail_orphan_scenarios(config: pytest.Config, items: list[pytest.Item]) -> None:
    """An item that fails for each ``<scenario root>/<name>/`` holding scenario files
    where no collected procedure is ``name``.

    Such scenarios never run, so a typo in the folder name would pass silently. Only
    checked when the whole tree was collected (no file or node id named on the command
    line), and not for a root shared with a config file that failed to load, whose
    procedures are unknown. Every xdist worker makes the same items.
    """
    if any("::" in arg or Path(arg).is_file() for arg in config.args):
        return
    state = config.stash[PLUGIN_STATE]
    declared: dict[Path, set[str]] = {}
    owner: dict[Path, ConfigFile] = {}
    for node in iter_procedure_nodes(items):
        if node.file_node.read_only:
            continue
        root = node.scenario_dir().parent
        declared.setdefault(root, set()).add(node.procedure.name)
        owner.setdefault(root, node.file_node)
    scenario_root = config.stash[SESSION][SCENARIO_DIR]
    broken_roots = {scenario_root or path.parent / "scenarios" for path in state.broken_files}
    for root, names in declared.items():
        if root in broken_roots or not root.is_dir():
            continue
        _fail_loose_scenarios(config, root, owner[root], items)
        for folder in sorted(root.iterdir()):
            if folder.name in names or folder.name.startswith(".") or not folder.is_dir():
                continue
            files = sorted(
                path
                for path in folder.iterdir()
                if path.suffix in SCENARIO_SUFFIXES and path.is_file()
            )
            if not files:
                continue
            close = closest(folder.name, names)
            error = ScenarioError(
                f"{display_path(folder, config.rootpath)}/ holds {len(files)} scenario "
                f"file(s) that never run: no collected procedure is named {folder.name!r}",
                file=str(files[0]),
                line=1,
                hint=f"did you mean {close!r}? (rename the folder)"
                if close
                else f"known procedures: {', '.join(sorted(names))}",
            )
            items.append(
                OrphanScenariosItem.from_parent(
                    owner[root], name=f"scenarios[{folder.name}]", error=error
                )
            )


def _fail_loose_scenarios(
    config: pytest.Config, root: Path, owner: ConfigFile, items: list[pytest.Item]
) -> None:
    """An item that fails for each scenario file left directly in ``root``, beside the
    procedures' folders: the folder names a scenario's procedure, so it never runs."""
    from pytest_ooda.scenario import loose_scenario_error, loose_scenario_files

    for path in loose_scenario_files(root):
        error = loose_scenario_error(path, display_path(path, config.rootpath))
        items.append(
            OrphanScenariosItem.from_parent(owner, name=f"scenarios[{path.name}]", error=error)
        )


def load_collected(path: Path, overrides: dict[str, Any] | None = None) -> LoadedFile:
    """The file merged over the built-ins (no global config, no environment).

    Leaving out the environment and the global config keeps prompts and snapshots the
    same on every machine; merging over the built-ins makes a file that tweaks ``build``
    snapshot the ``build`` that actually runs. ``overrides``: the session's command-line
    tier (``--ooda-prompt-format``).
    """
    from pytest_ooda.config import load_config

    target = path.resolve()
    # The packaged built-ins merged over themselves are themselves: one parse, not two.
    merge_builtins = target != builtin_config_path().resolve()
    config = load_config(
        path,
        cwd=path.parent,
        env={},
        builtin=merge_builtins,
        global_config=False,
        overrides=overrides,
    )
    declared = tuple(
        procedure
        for procedure in config.procedures.values()
        if procedure.location.file is not None and _resolved(procedure.location.file) == target
    )
    broken = tuple(
        failed
        for failed in config.broken.values()
        if failed.location.file is not None and _resolved(failed.location.file) == target
    )
    return LoadedFile(path, config, declared, broken)


def _resolved(path: Path) -> Path:
    return Path(path).resolve()


def builtin_config_path() -> Path:
    from pytest_ooda.fragments import builtin_root

    return builtin_root() / "procedures" / "builtin.yml"

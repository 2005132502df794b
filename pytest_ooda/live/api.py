"""The model-API step of a live run (docs/agent-replay.md): the proxy started before the
sandbox, the agent started through it, and what it made of the run afterwards.

A plan with :class:`ApiPlan` runs its agent with its base URL pointed at an
:class:`~pytest_ooda.apireplay.ApiProxy`: ``record`` (``--ooda-record-api``) forwards to
the real API and keeps the traffic, ``new`` (``--ooda-record-api=new``) answers what the
cassette holds and keeps the rest, ``replay`` (agent replay) answers from the cassette
alone. :class:`ApiStep` is one run's proxy; :meth:`ApiStep.finish` turns it into an
:class:`ApiOutcome` — the cassette to write, or the divergence that ends a replay, with
the prompt lines that changed named by their fragment files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ooda.errors import ConfigError, RecordingWarning

if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from pytest_ooda._types import ApiMode
    from pytest_ooda.apireplay import ApiProxy, Cassette, Divergence, Sent
    from pytest_ooda.backends import Backend, BackendResult
    from pytest_ooda.config import Procedure, RunSettings
    from pytest_ooda.errors import OodaWarning
    from pytest_ooda.live.plan import ApiPlan, RunPlan
    from pytest_ooda.loop import LoopResult
    from pytest_ooda.replay_rules import ReplayRule
    from pytest_ooda.sandbox import SandboxRun, SandboxSpec

__all__ = ["ApiOutcome", "ApiStep", "open_api", "write_cassette_of"]


@dataclass(frozen=True)
class ApiOutcome:
    """What the proxy made of one run."""

    mode: ApiMode
    path: Path
    #: The cassette to write (``None``: nothing to write).
    cassette: Cassette | None = None
    #: A replay's first request the cassette could not answer, described.
    divergence: str | None = None
    #: What went wrong talking to the upstream.
    problems: tuple[str, ...] = ()
    #: Exchanges the run forwarded to the upstream and kept.
    recorded: int = 0
    #: Whether the run wanted its cassette kept.
    kept: bool = False
    #: What the agent sent, request by request (an upgrade canary's replay only).
    sent: tuple[Sent, ...] = ()

    def warnings(self, label: str, scenario: Path | None) -> list[RecordingWarning]:
        """What a person must hear: a cassette that was wanted but not written."""
        if not (self.kept and self.problems and self.mode != "replay"):
            return []
        return [
            RecordingWarning(
                f"scenario {label}: cassette not written, the API proxy had trouble: "
                + "; ".join(self.problems),
                file=str(scenario) if scenario is not None else None,
            )
        ]


def open_api(
    plan: RunPlan, workdir: Path, redact: Callable[[str], str], stack: contextlib.ExitStack
) -> ApiStep | None:
    """The run's API proxy (``None``: the plan has none), closed with ``stack``."""
    if plan.api is None:
        return None
    step = ApiStep(
        plan.api,
        workdir=workdir,
        run_dir=workdir.parent if plan.workdir is None else None,
        redact=redact,
        settings=plan.settings,
        rules=(*plan.config.replay_normalise, *plan.scenario.replay_normalise),
    )
    stack.callback(step.close)
    return step


def write_cassette_of(outcome: ApiOutcome) -> Path | None:
    """Write the outcome's cassette, atomically; its path (``None``: none to write)."""
    from pytest_ooda.apireplay import write_cassette

    if outcome.cassette is None:
        return None
    write_cassette(outcome.cassette, outcome.path)
    return outcome.path


class ApiStep:
    """One run's proxy, from before its sandbox starts until after its last check."""

    def __init__(
        self,
        api: ApiPlan,
        *,
        workdir: Path,
        run_dir: Path | None,
        redact: Callable[[str], str],
        settings: RunSettings,
        rules: Sequence[ReplayRule] = (),
    ) -> None:
        from pytest_ooda.apireplay import (
            ApiProxy,
            CanaryProxy,
            Normaliser,
            read_cassette,
            sandbox_for_api,
            upstreams_from_env,
        )

        if settings.ai_cmd is None:
            raise ConfigError(
                "agent record and replay need an agent command (ai_cmd): the proxy sits "
                "between an agent CLI and its API",
                hint="set ai_cmd or ai_cmd_alias for this procedure, or leave out "
                "--ooda-record-api / replay: agent",
            )
        cassette = None
        if api.mode != "record" and api.cassette.is_file():
            cassette = read_cassette(api.cassette)
        self.api = api
        self.workdir = workdir
        self.run_dir = run_dir
        #: The config's and the scenario's ``replay_normalise:`` (after the built-ins).
        self.rules = tuple(rules)
        normaliser = Normaliser.for_run(workspace=workdir, run_dir=run_dir, rules=self.rules)
        self.proxy: ApiProxy = (
            CanaryProxy(cassette=cassette, normaliser=normaliser, redact=redact)
            if api.canary
            else ApiProxy(
                api.mode,
                cassette=cassette,
                normaliser=normaliser,
                redact=redact,
                upstreams=upstreams_from_env(),
            )
        )
        self.proxy.start()
        self.settings = settings
        #: The run's sandbox, letting through what the proxy needs.
        self.spec: SandboxSpec | None = sandbox_for_api(settings.sandbox, api.mode)

    def backend(self, sandbox: SandboxRun | None) -> Backend:
        """The agent's backend, started through the proxy (in ``sandbox``, when given)."""
        from pytest_ooda.apireplay import Normaliser, reach
        from pytest_ooda.backends import CommandBackend

        settings = self.settings
        assert settings.ai_cmd is not None
        home = sandbox.home if sandbox is not None else None
        self.proxy.normaliser = Normaliser.for_run(
            workspace=self.workdir, run_dir=self.run_dir, home=home, rules=self.rules
        )
        access = reach(self.proxy, settings.ai_cmd, mode=self.api.mode, spec=self.spec, run=sandbox)
        agent = CommandBackend(
            access.argv,
            env={**os.environ, **access.env},
            ai_output=settings.ai_output,
            sandbox=sandbox,
            pass_fds=access.pass_fds,
        )
        if self.api.mode == "replay":
            return _StopsAtDivergence(agent, self.proxy)
        return _Witnessed(agent, self.proxy)

    def close(self) -> None:
        self.proxy.close()

    def outcome(
        self,
        plan: RunPlan,
        result: LoopResult,
        *,
        met: bool,
        recorded: bool,
        warnings: list[OodaWarning],
    ) -> ApiOutcome:
        """:meth:`finish` for ``plan``'s run: its cassette kept with the run's recording
        (``recorded``), or else by a run that ``met`` its expectations; only by the first
        of its repeats, of a scenario of the project's own."""
        keep = plan.run == 1 and not plan.read_only and (recorded or met)
        done = self.finish(result, plan.procedure, context=plan.context, keep=keep)
        warnings.extend(done.warnings(plan.label, plan.scenario.path))
        return done

    def finish(
        self,
        result: LoopResult,
        procedure: Procedure,
        *,
        context: Sequence[str],
        keep: bool,
    ) -> ApiOutcome:
        """What the run made: in a replay its divergence (if any); when recording and
        ``keep`` (the run met its expectations and may be recorded), the cassette."""
        from pytest_ooda.apireplay import CanaryProxy

        self.close()
        proxy = self.proxy
        divergence = None
        if proxy.divergences:
            divergence = describe(proxy.divergences[0], result, procedure, context, proxy)
        cassette = None
        wanted = self.api.mode == "record" or (self.api.mode == "new" and proxy.recorded_count)
        if keep and wanted and not proxy.problems:
            cassette = proxy.recording()
        return ApiOutcome(
            mode=self.api.mode,
            path=self.api.cassette,
            cassette=cassette,
            divergence=divergence,
            problems=tuple(proxy.problems),
            recorded=proxy.recorded_count,
            kept=keep,
            sent=tuple(proxy.sent) if isinstance(proxy, CanaryProxy) else (),
        )


class _StopsAtDivergence:
    """The agent of a replay, started again only while the cassette answered every
    request: once a request diverged, the next start (a retry, the next iteration) is
    refused, so the run stops at its first divergence instead of burning its retries
    and failure threshold on requests the cassette cannot answer."""

    def __init__(self, agent: Backend, proxy: ApiProxy) -> None:
        self.agent = agent
        self.proxy = proxy

    def __repr__(self) -> str:
        return repr(self.agent)

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: Callable[[bytes], None] | None,
    ) -> BackendResult:
        from pytest_ooda.errors import BackendError

        if self.proxy.divergences:
            raise BackendError(
                "agent replay stopped at its first divergence: the agent is not started again"
            )
        return self.agent.run(
            prompt,
            iteration=iteration,
            workdir=workdir,
            timeout=timeout,
            max_output=max_output,
            stream=stream,
        )


class _Witnessed:
    """The agent of a recording run, whose word that the API failed is checked against
    the proxy's own record: when the proxy saw an upstream call fail during the
    iteration, the iteration's infrastructure error rests on the harness's evidence."""

    def __init__(self, agent: Backend, proxy: ApiProxy) -> None:
        self.agent = agent
        self.proxy = proxy

    def __repr__(self) -> str:
        return repr(self.agent)

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: Callable[[bytes], None] | None,
    ) -> BackendResult:
        from dataclasses import replace

        seen = self.proxy.upstream_failures
        done = self.agent.run(
            prompt,
            iteration=iteration,
            workdir=workdir,
            timeout=timeout,
            max_output=max_output,
            stream=stream,
        )
        if done.infra_evidence == "agent" and self.proxy.upstream_failures > seen:
            return replace(done, infra_evidence="harness")
        return done


def describe(
    divergence: Divergence,
    result: LoopResult,
    procedure: Procedure,
    context: Sequence[str],
    proxy: ApiProxy,
) -> str:
    """The divergence, with the prompt lines that changed and the fragment files they
    come from when a changed text is one of the run's prompts."""
    text = divergence.headline()
    changed = _prompt_change(divergence, result, procedure, context, proxy)
    if changed:
        text += "\n" + changed
    hints = divergence.rule_hints(proxy.normaliser.rules)
    if hints:
        text += "\n" + "\n".join(f"  replay_normalise: {hint}" for hint in hints)
    if divergence.nearest is not None and not (
        divergence.recorded and divergence.served >= divergence.recorded
    ):
        text += "\n" + divergence.diff()
    return text


def _prompt_change(
    divergence: Divergence,
    result: LoopResult,
    procedure: Procedure,
    context: Sequence[str],
    proxy: ApiProxy,
) -> str | None:
    import difflib

    from pytest_ooda.compose import assemble_prompt_mapped
    from pytest_ooda.scenario import changed_sources

    for _, recorded, requested in divergence.changed_texts():
        for number, record in enumerate(result.records, start=1):
            if proxy.normaliser.request(record.prompt).strip() != requested.strip():
                continue
            mapped = assemble_prompt_mapped(
                procedure,
                iteration=number,
                max_iterations=result.max_iterations,
                context=context,
                cwd=result.workdir,
            )
            sources: tuple[str, ...] = ()
            if mapped.text == record.prompt:
                sources = changed_sources(recorded, requested, mapped.segments)
            lines = [
                line
                for line in difflib.unified_diff(
                    recorded.splitlines(), requested.splitlines(), lineterm="", n=0
                )
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            ]
            head = f"  the prompt of iteration {number} changed"
            if sources:
                head += f" (fragments: {', '.join(sources)})"
            return head + ":\n" + "\n".join(f"    {line}" for line in lines)
    return None

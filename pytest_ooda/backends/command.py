"""The ``command`` backend: runs the AI CLI as a fresh subprocess for every iteration.

Process handling is the point of this module: no shell, an own process group, the prompt
on stdin (a child that exits without reading it is normal), stdout and stderr merged
through one pipe so their order is kept, a bounded tail buffer, an iteration timeout that
kills the whole group, and clean-up of the group when the runner itself is interrupted.
Everything runs on one thread with a selector, so no helper thread can be left blocked.

With a ``sandbox`` (a :class:`~pytest_ooda.sandbox.SandboxRun`), the argv, environment
and working directory are handed to it first and what it returns is started instead
(``bwrap … -- argv``, ``docker exec … argv``): the one seam between process handling and
isolation.

With a machine-readable ``ai_output`` (an agent CLI's JSON report, see
:mod:`.agent_output`) the output is read as it arrives: a person watching sees it
rendered as readable lines, and the iteration's output is the agent's final text, with
its usage, cost and tool calls beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ooda.agents import ToolTextBudget, agent_for, output_format
from pytest_ooda.backends import BackendResult, StreamCallback
from pytest_ooda.errors import BackendError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pytest_ooda._types import AiOutput
    from pytest_ooda.sandbox import SandboxRun

__all__ = ["CommandBackend", "TailBuffer", "resolve_executable"]

_READ_SIZE = 1 << 20
_WRITE_SIZE = 1 << 16
_PIPE_SIZE = 1 << 20
_POLL = 0.1


class TailBuffer:
    """Keeps the last ``limit`` bytes of a stream in O(limit) memory.

    Chunks are kept whole in a deque and only the oldest one is ever sliced, so appending
    costs O(chunk) instead of shifting the whole buffer (which would make a 1 GiB stream
    through a 10 MB buffer quadratic).
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.limit = limit
        self.total = 0
        self.dropped = 0
        self._chunks: deque[bytes] = deque()
        self._size = 0

    def add(self, chunk: bytes) -> None:
        n = len(chunk)
        if not n:
            return
        self.total += n
        if n >= self.limit:
            self.dropped += self._size + n - self.limit
            self._chunks.clear()
            self._chunks.append(chunk[n - self.limit :])
            self._size = self.limit
            return
        self._chunks.append(chunk)
        self._size += n
        while self._size > self.limit:
            head = self._chunks[0]
            excess = self._size - self.limit
            if len(head) <= excess:
                self._chunks.popleft()
                self._size -= len(head)
                self.dropped += len(head)
            else:
                self._chunks[0] = head[excess:]
                self._size -= excess
                self.dropped += excess

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def getvalue(self) -> bytes:
        return b"".join(self._chunks)


def _search_path(env: Mapping[str, str] | None) -> str:
    source = os.environ if env is None else env
    return source.get("PATH", os.defpath)


def resolve_executable(
    argv: Sequence[str], *, workdir: Path, env: Mapping[str, str] | None = None
) -> str:
    """Return the path that would be executed for ``argv[0]``, or raise ``BackendError``.

    A name without a slash is searched on ``PATH`` (of ``env`` when given); a name with a
    slash is taken relative to ``workdir``, as the child's ``cwd`` would see it.
    """
    if not argv:
        raise BackendError("the AI command is empty", hint="set loop.ai_cmd to a command line")
    name = argv[0]
    search = _search_path(env)
    if os.sep in name:
        candidate = Path(name) if os.path.isabs(name) else workdir / name
        if not candidate.exists():
            raise BackendError(
                f"AI command not found: {name!r} (looked for {candidate})",
                hint=_shell_hint(name),
            )
        if candidate.is_dir() or not os.access(candidate, os.X_OK):
            raise BackendError(
                f"AI command is not executable: {candidate}",
                hint="make it executable (chmod +x) or run it through its interpreter",
            )
        _check_program(candidate, search)
        return str(candidate)
    found = shutil.which(name, path=search)
    if found is not None:
        _check_program(Path(found), search)
        return found
    dirs = [d for d in search.split(os.pathsep) if d]
    for directory in dirs:
        candidate = Path(directory) / name
        if candidate.is_file():
            raise BackendError(
                f"AI command is not executable: {candidate}",
                hint="make it executable (chmod +x) or run it through its interpreter",
            )
    # Two lines, not a listing of PATH: what is missing, and the two ways to fix it.
    searched = f"searched PATH: {os.pathsep.join(dirs)}" if dirs else "PATH is empty"
    if len(dirs) > 3:
        searched = f"searched the {len(dirs)} folders of PATH"
    hint = (
        f"install it so that {name} is on PATH (`ooda help agents`), or write its full path "
        f'in the config: ai_cmd: "/path/to/{name} …", or the alias under ai_cmd_aliases:'
    )
    shell = _shell_hint(name)
    raise BackendError(
        f"AI command not found: {name!r} ({searched})",
        hint=f"{shell}\n  {hint}" if shell else hint,
    )


def _shell_hint(name: str) -> str | None:
    """What a shell would have done with ``name`` that we, running no shell, do not."""
    if name.startswith("~"):
        return (
            "the command is not run through a shell, so ~ is not expanded; "
            f"write the full path ({os.path.expanduser(name)})"
        )
    if "$" in name:
        return (
            "the command is not run through a shell, so $VARIABLES are not expanded; "
            "write the value"
        )
    return None


_ELF_MAGIC = b"\x7fELF"


def _check_program(path: Path, search: str) -> None:
    """Catch what exec() would report confusingly: a script whose ``#!`` interpreter is
    missing fails with "No such file or directory" although the script exists, and a
    text file without a ``#!`` line fails with "Exec format error"."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return  # exec will say why; nothing clearer to add
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if not words:
            raise BackendError(f"AI command {path} has an empty #! line")
        interpreter = words[0]
        if os.path.isabs(interpreter) and not (
            os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)
        ):
            raise BackendError(
                f"AI command {path}: its #! interpreter {interpreter} was not found",
                hint="fix the script's first line, or run it through an installed interpreter",
            )
        if (
            os.path.basename(interpreter) == "env"
            and len(words) == 2
            and not words[1].startswith("-")
            and "=" not in words[1]
            and shutil.which(words[1], path=search) is None
        ):
            raise BackendError(
                f"AI command {path}: its #! line runs {words[1]!r}, which is not on PATH",
                hint="install it, or fix the script's first line",
            )
        return
    if head.startswith(_ELF_MAGIC) or b"\0" in head:
        return
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return  # some other binary format; leave the verdict to exec
    raise BackendError(
        f"AI command {path} is a text file without a #! line",
        hint="add one such as #!/bin/sh, or run it through its interpreter",
    )


class CommandBackend:
    """Runs ``argv`` once per iteration; see the module docstring for the guarantees.

    ``kill_grace`` is the time between SIGTERM and SIGKILL on timeout; ``drain_grace`` is
    how long the pipe may stay open after the AI process exited (a straggling grandchild
    holding it) before the group is killed; ``interrupt_wait`` bounds the clean-up when
    the runner is interrupted. ``ai_output`` is how the output is read (``text``, or an
    agent CLI's machine-readable format). ``sandbox`` wraps every start (see the module
    docstring). ``pass_fds`` are open descriptors the command inherits (through a
    sandbox's launcher too), e.g. the socket a relay reaches the model-API proxy by.
    A backend holds one run's budget for the tool-call text its iterations keep
    (``tool_texts``): make one per run, as the loop and the live run do.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        kill_grace: float = 5.0,
        drain_grace: float = 1.0,
        interrupt_wait: float = 5.0,
        ai_output: AiOutput = "text",
        sandbox: SandboxRun | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        if not argv:
            raise BackendError("the AI command is empty", hint="set loop.ai_cmd to a command line")
        output_format(ai_output)  # a ConfigError naming the known formats
        self.argv = tuple(argv)
        self.env = dict(env) if env is not None else None
        self.kill_grace = kill_grace
        self.drain_grace = drain_grace
        self.interrupt_wait = interrupt_wait
        self.ai_output: AiOutput = ai_output
        self.sandbox = sandbox
        self.pass_fds = tuple(pass_fds)
        self.tool_texts = ToolTextBudget()

    @classmethod
    def from_string(
        cls,
        command: str,
        *,
        env: Mapping[str, str] | None = None,
        kill_grace: float = 5.0,
        drain_grace: float = 1.0,
        interrupt_wait: float = 5.0,
        ai_output: AiOutput = "text",
    ) -> CommandBackend:
        """Split ``command`` like a POSIX shell would (without running one)."""
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise BackendError(f"cannot split AI command {command!r}: {exc}") from None
        return cls(
            argv,
            env=env,
            kill_grace=kill_grace,
            drain_grace=drain_grace,
            interrupt_wait=interrupt_wait,
            ai_output=ai_output,
        )

    def __repr__(self) -> str:
        extra = f", ai_output={self.ai_output!r}" if self.ai_output != "text" else ""
        if self.sandbox is not None:
            extra += f", sandbox={self.sandbox.identity.get('kind')!r}"
        return f"CommandBackend({shlex.join(self.argv)!r}{extra})"

    def check(self, workdir: Path) -> str:
        """Validate that the command can be started from ``workdir``; returns its path
        (in a sandbox: the path of what starts it, e.g. ``bwrap``)."""
        return self._command(workdir)[2]

    def _command(self, workdir: Path) -> tuple[tuple[str, ...], Mapping[str, str] | None, str]:
        """The argv, environment and executable actually started from ``workdir``."""
        if self.sandbox is None:
            executable = resolve_executable(self.argv, workdir=workdir, env=self.env)
            return self.argv, self.env, executable
        launch = self.sandbox.launch(self.argv, self.env, workdir)
        executable = resolve_executable(launch.argv, workdir=workdir, env=launch.env)
        return launch.argv, launch.env, executable

    def run(
        self,
        prompt: str,
        *,
        iteration: int,
        workdir: Path,
        timeout: float | None,
        max_output: int,
        stream: StreamCallback | None,
    ) -> BackendResult:
        argv, env, executable = self._command(workdir)
        data = prompt.encode("utf-8", "surrogateescape")
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                executable=executable,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                env=env,
                start_new_session=True,
                bufsize=0,
                pass_fds=self.pass_fds,
            )
        except OSError as exc:
            raise BackendError(
                f"cannot start AI command {self.argv[0]!r}: {exc.strerror or exc}",
                hint=f"command line: {shlex.join(self.argv)}",
            ) from None
        deadline = started + timeout if timeout is not None else None
        sink: Callable[[bytes], None]
        if self.ai_output == "text":
            buffer = TailBuffer(max_output)
            agent = None

            def sink(chunk: bytes) -> None:
                buffer.add(chunk)
                if stream is not None:
                    stream(chunk)

        else:
            from pytest_ooda.backends.agent_output import open_stream

            # Read as it arrives, in bounded memory: no raw copy of the stream is kept.
            agent = open_stream(
                self.ai_output,
                max_line=max_output,
                budget=self.tool_texts,
                watched=stream is not None,
                # A StreamRedactor redacts a call's text before its head is put on.
                redact=getattr(stream, "redactor", None),
            )
            received = [0]

            def sink(chunk: bytes) -> None:
                received[0] += len(chunk)
                shown = agent.feed_bytes(chunk)
                if stream is not None and shown:
                    stream(shown.encode("utf-8", "replace"))

        # In a sandbox, the first bytes say whether its launcher started the command.
        head = _Head(sink) if self.sandbox is not None else None
        try:
            timed_out, broken_pipe = self._pump(proc, data, head or sink, deadline)
        except BaseException:
            # Interrupted (SIGINT/SIGTERM handler or KeyboardInterrupt): the AI's whole
            # group must go before the runner reports `interrupted`.
            self._terminate(proc, self.interrupt_wait)
            raise
        finally:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        rc = proc.returncode if proc.returncode is not None else proc.wait()
        if head is not None and self.sandbox is not None:
            launcher = self.sandbox.not_started(rc, head.text())
            if launcher is not None:
                return _not_started(launcher, rc, head.text(), time.monotonic() - started)
        if agent is not None:
            from pytest_ooda.backends.agent_output import backend_result

            if (shown := agent.close()) and stream is not None:
                stream(shown.encode("utf-8", "replace"))
            return backend_result(
                agent.report(),
                self.ai_output,
                activations=agent.activations(prompt),
                exit_code=rc,
                max_output=max_output,
                duration=time.monotonic() - started,
                timed_out=timed_out,
                term_signal=-rc if rc < 0 else None,
                broken_pipe=broken_pipe,
                total_bytes=received[0],
            )
        took = time.monotonic() - started
        return _text_result(self.argv, buffer, rc, took, timed_out, broken_pipe)

    def _pump(
        self,
        proc: subprocess.Popen[bytes],
        data: bytes,
        sink: Callable[[bytes], None],
        deadline: float | None,
    ) -> tuple[bool, bool]:
        """Feed ``data`` to the child's stdin and its output to ``sink`` until it has
        exited and its output is read; ``(timed_out, broken_pipe)``."""
        with _Pump(proc, data, sink, deadline, self.kill_grace, self.drain_grace) as pump:
            pump.run()
        if pump.timed_out or pump.killed:
            # Grandchildren that ignored SIGTERM or outlived the leader must not linger.
            _signal_group(proc.pid, signal.SIGKILL)
            _wait_group_gone(proc.pid, self.kill_grace)
        return pump.timed_out, pump.broken_pipe

    def _terminate(self, proc: subprocess.Popen[bytes], wait: float) -> None:
        """SIGTERM the group, give it up to ``wait`` seconds in total, then SIGKILL it."""
        started = time.monotonic()
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=min(wait, self.kill_grace))
        _signal_group(proc.pid, signal.SIGKILL)
        remaining = max(0.5, wait - (time.monotonic() - started))
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=remaining)
        _wait_group_gone(proc.pid, max(0.5, wait - (time.monotonic() - started)))


def _text_result(
    argv: Sequence[str],
    buffer: TailBuffer,
    rc: int,
    duration: float,
    timed_out: bool,
    broken_pipe: bool,
) -> BackendResult:
    """A plain-text agent's iteration from what its output buffer kept. A failed one was
    the infrastructure's when its own last words say so (the agent's to read: ``API
    Error: 529 …``, ``Not logged in``) or when it printed nothing; a successful exit
    never is, whatever it printed."""
    from pytest_ooda.backends.infra import died_silently, silence_evidence

    output = buffer.getvalue().decode("utf-8", errors="replace")
    infra = evidence = None
    if rc != 0 and not timed_out and buffer.total == 0:
        infra = died_silently(rc, -rc if rc < 0 else None)
        evidence = silence_evidence(-rc if rc < 0 else None)
    elif rc != 0 and not timed_out and (fault := agent_for(argv).fault(output[-2000:])):
        infra, evidence = fault.reason, fault.evidence
    return BackendResult(
        output=output,
        exit_code=rc,
        duration=duration,
        timed_out=timed_out,
        term_signal=-rc if rc < 0 else None,
        truncated=buffer.truncated,
        dropped_bytes=buffer.dropped,
        total_bytes=buffer.total,
        broken_pipe=broken_pipe,
        infra_error=infra,
        infra_evidence=evidence,
    )


class _Head:
    """Passes a process's output on, keeping its first bytes (what a sandbox's launcher
    prints when it could not start the command: nothing else was printed)."""

    LIMIT = 4096

    def __init__(self, sink: Callable[[bytes], None]) -> None:
        self.sink = sink
        self.kept = bytearray()

    def __call__(self, chunk: bytes) -> None:
        if len(self.kept) < self.LIMIT:
            self.kept += chunk[: self.LIMIT - len(self.kept)]
        self.sink(chunk)

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


def _not_started(launcher: str, rc: int, output: str, duration: float) -> BackendResult:
    """The iteration whose command the sandbox's launcher never started: the
    infrastructure's ``cannot-start``, not the prompt's failure (and never retried)."""
    from pytest_ooda.backends.infra import infra_reason

    reason = infra_reason("cannot-start", f"the sandbox could not start the agent: {launcher}")
    return BackendResult(
        output=output,
        exit_code=rc,
        duration=duration,
        total_bytes=len(output),
        error=reason,
        infra_error=reason,
    )


class _Pump:
    """One child's pipes on one selector: the prompt written to its stdin as it reads,
    its output read as it comes, and the clock — the iteration's deadline (SIGTERM to
    the group, then SIGKILL after ``kill_grace``) and, once the child has exited, the
    ``drain_grace`` a grandchild holding the pipe gets before the group is killed."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        data: bytes,
        sink: Callable[[bytes], None],
        deadline: float | None,
        kill_grace: float,
        drain_grace: float,
    ) -> None:
        assert proc.stdout is not None
        assert proc.stdin is not None
        self.proc = proc
        self.stdin = proc.stdin
        self.sink = sink
        self.deadline = deadline
        self.kill_grace = kill_grace
        self.drain_grace = drain_grace
        self.out_fd = proc.stdout.fileno()
        self.in_fd = self.stdin.fileno()
        self.view = memoryview(data)
        self.pos = 0
        self.timed_out = False
        self.broken_pipe = False
        self.killed = False
        self.kill_at: float | None = None
        self.exited_at: float | None = None
        self.eof = False
        self.stdin_open = True
        self.exit_fd: int | None = None
        self.sel = selectors.DefaultSelector()

    def __enter__(self) -> _Pump:
        setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
        if setpipe is not None:
            # A bigger pipe means fewer wake-ups for chatty children; best effort only.
            with contextlib.suppress(OSError):
                fcntl.fcntl(self.out_fd, setpipe, _PIPE_SIZE)
        self.sel.register(self.out_fd, selectors.EVENT_READ)
        if self.view:
            os.set_blocking(self.in_fd, False)
            self.sel.register(self.in_fd, selectors.EVENT_WRITE)
        else:
            self.stdin.close()
            self.stdin_open = False
        # A pidfd turns "the child exited" into a selector event, so waiting for the exit
        # after EOF costs no polling sleeps (Linux >= 5.3; elsewhere we poll).
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):
                self.exit_fd = pidfd_open(self.proc.pid)
                self.sel.register(self.exit_fd, selectors.EVENT_READ)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.exit_fd is not None:
            os.close(self.exit_fd)
            self.exit_fd = None
        self.sel.close()

    def run(self) -> None:
        while True:
            now = time.monotonic()
            self._keep_time(now)
            if self.proc.poll() is not None and self._exited(now):
                return
            wait = self._wait(now)
            if self.eof and not self.stdin_open and self.exit_fd is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=wait)
                continue
            self._transfer(wait)
            if self.eof and self.stdin_open and self.proc.poll() is not None:
                # The child is gone; nobody will read the rest of the prompt.
                self.broken_pipe = self.pos < len(self.view)
                self._close_stdin()

    def _keep_time(self, now: float) -> None:
        """Past the deadline: SIGTERM the group; past the grace after it: SIGKILL."""
        if self.deadline is not None and not self.timed_out and now >= self.deadline:
            self.timed_out = True
            _signal_group(self.proc.pid, signal.SIGTERM)
            self.kill_at = now + self.kill_grace
        if self.kill_at is not None and not self.killed and now >= self.kill_at:
            _signal_group(self.proc.pid, signal.SIGKILL)
            self.killed = True

    def _exited(self, now: float) -> bool:
        """The child has exited: whether pumping is over (its output read to the end,
        or whatever still holds the pipe is beyond the group's reach)."""
        if self.exit_fd is not None:
            self.sel.unregister(self.exit_fd)
            os.close(self.exit_fd)
            self.exit_fd = None
        if self.eof:
            return True
        if self.exited_at is None:
            self.exited_at = now
        elif now - self.exited_at >= self.drain_grace:
            if self.killed:
                # Whatever still holds the pipe escaped the group; stop waiting.
                return True
            _signal_group(self.proc.pid, signal.SIGKILL)
            self.killed = True
            self.exited_at = now
        return False

    def _wait(self, now: float) -> float:
        """How long the next select may block: until the next thing on the clock."""
        wait = _POLL
        pending = (
            self.deadline if not self.timed_out else None,
            self.kill_at if not self.killed else None,
        )
        for limit in pending:
            if limit is not None:
                wait = max(0.0, min(wait, limit - now))
        return wait

    def _transfer(self, wait: float) -> None:
        """Read what the child printed and write what it may take of the prompt."""
        for key, _ in self.sel.select(wait):
            if key.fd == self.exit_fd:
                continue
            if key.fd == self.out_fd:
                chunk = os.read(self.out_fd, _READ_SIZE)
                if not chunk:
                    self.eof = True
                    self.sel.unregister(self.out_fd)
                    continue
                self.sink(chunk)
            elif self.stdin_open:
                try:
                    self.pos += os.write(self.in_fd, self.view[self.pos : self.pos + _WRITE_SIZE])
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    self.broken_pipe = True
                    self._close_stdin()
                    continue
                if self.pos >= len(self.view):
                    self._close_stdin()

    def _close_stdin(self) -> None:
        if self.stdin_open:
            self.sel.unregister(self.in_fd)
            with contextlib.suppress(OSError):
                self.stdin.close()
            self.stdin_open = False


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_members(pgid: int) -> bool:
    """Whether a live (non-zombie) process is still in group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    # killpg(…, 0) also succeeds for zombies nobody has reaped yet (a container's PID 1
    # may never reap them); those are dead for our purposes.
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _wait_group_gone(pgid: int, budget: float) -> None:
    deadline = time.monotonic() + budget
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)

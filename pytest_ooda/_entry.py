"""The ``ooda`` console script and ``python -m pytest_ooda``: a result cache in front of
:func:`pytest_ooda.cli.main` (:mod:`pytest_ooda.cli.app`).

A repeated ``ooda show``/``ooda list`` with unchanged inputs answers from
``${XDG_CACHE_HOME:-~/.cache}/pytest-ooda/cli/`` without importing the library: the saved
stdout, stderr and exit code of an earlier run, written again byte for byte. An entry is
looked up by everything the command line, the process and the environment hand the
command (the words after ``ooda``, the current directory, every environment variable but
``_`` and ``OLDPWD``, whether stdout/stderr are terminals and their size, the streams'
encodings, the interpreter, ``sys.path``, the user id), and it is used only while every
input the run read still looks as it did: each file it opened, each path it probed
(present or absent), each directory it listed, each file's directory, the ``sys.path``
directories where a new module would change what an import finds, and the source of
every module it loaded (not bytecode caches), compared by modification and change time,
size, inode, device and mode (a path only resolved, not followed: whether it is a
symbolic link and where to).

An entry is saved only for a run that exited 0 after the command itself ran (not
``--help``), that started no process, opened no socket and changed no directory, and
only when none of its inputs changed in the last two seconds: a file rewritten with the
same size within the file system's timestamp granularity of the moment it was read
would otherwise look unchanged (git's "racy clean" rule). When in doubt the command
runs. ``OODA_NO_CACHE=1`` turns the cache off; a cache directory that cannot be
written, or an entry that cannot be read, is ignored.

On the way to a cache hit this module imports only ``os``, ``sys``, ``io`` and
``marshal`` (all loaded by the interpreter's own start): no ``typing``, ``re``,
``pathlib``, ``argparse`` or ``json``.
"""

from __future__ import annotations

import io
import marshal
import os
import sys

#: ``typing.TYPE_CHECKING`` without importing typing (mypy treats the name the same).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import BinaryIO, TextIO

    from typing_extensions import Buffer

    #: ``(mtime_ns, ctime_ns, size, inode, device, mode)``, or the ``errno`` of a failed stat;
    #: for a path only looked at without following it (``os.lstat``), ``(inode, device,
    #: mode)`` or a symbolic link's target.
    Signature = tuple[int, ...] | int | str

#: Commands whose output is cached: they read files and print, and change nothing.
CACHED_COMMANDS = ("show", "list")
#: Bumped whenever the entry layout or what the key holds changes.
FORMAT = 1
#: Inputs changed this recently (nanoseconds) make a run's result unsafe to keep.
RACY_NS = 2_000_000_000
#: Environment variables a shell changes between two identical commands that no
#: ``ooda`` command reads (bash's last word/command path, the previous directory).
VOLATILE_ENV = ("_", "OLDPWD")
#: The largest prime below 2**64: an entry's name is its key, as a number, modulo it.
_PRIME = 0xFFFFFFFFFFFFFFC5
_PYCACHE = f"{os.sep}__pycache__"
#: The real ``os.stat``/``os.lstat``: a recorded run replaces the module's own.
_stat, _lstat = os.stat, os.lstat
#: Outputs larger than this are not kept (bytes).
MAX_OUTPUT = 8 << 20
#: At most this many entries are kept; the oldest go first.
MAX_ENTRIES = 200
#: Audit events after which a run's output is not kept: it depended on, or changed,
#: something the entry cannot check.
_UNCACHEABLE_EVENTS = frozenset(
    (
        "os.chdir",
        "os.fchdir",
        "os.chroot",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
        "socket.connect",
        "socket.getaddrinfo",
        "socket.bind",
        "urllib.Request",
        "http.client.connect",
        "sqlite3.connect",
        "builtins.input",
        "ctypes.dlopen",
        "mmap.__new__",
    )
)
#: Audit events whose first argument is a path the run read or changed.
_PATH_EVENTS = frozenset(
    (
        "open",
        "os.listdir",
        "os.scandir",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.chmod",
        "os.chown",
        "glob.glob",
        "shutil.copyfile",
        "shutil.rmtree",
    )
)


def signature(path: str, follow: bool = True) -> Signature:
    """What says a path is unchanged: its stat fields, or the error stat gave.

    Without ``follow``, what ``os.path.realpath`` and ``is_symlink`` see: whether it is a
    symbolic link and where to, else which file it is (not its times: resolving
    ``/home/me/project`` must not depend on every file created in ``/home/me``)."""
    try:
        st = _stat(path) if follow else _lstat(path)
    except OSError as exc:
        return exc.errno or -1
    if follow:
        return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode)
    if st.st_mode & 0o170000 == 0o120000:  # a symbolic link
        try:
            return os.readlink(path)
        except OSError as exc:
            return exc.errno or -1
    return (st.st_ino, st.st_dev, st.st_mode)


def _disabled() -> bool:
    value = os.environ.get("OODA_NO_CACHE", "")
    return value not in ("", "0") or os.name != "posix"


def cache_dir(env: os._Environ[str] | dict[str, str]) -> str | None:
    """``$XDG_CACHE_HOME/pytest-ooda/cli`` (else ``~/.cache/...``); ``None`` without a home."""
    base = env.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is ignored
        home = env.get("HOME", "")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "pytest-ooda", "cli")


def _stream_facts(stream: TextIO, fd: int) -> tuple[bool, tuple[int, int], str, str]:
    tty = os.isatty(fd)
    size: tuple[int, int] = (0, 0)
    if tty:
        try:
            columns, lines = os.get_terminal_size(fd)
        except OSError:
            pass
        else:
            size = (columns, lines)
    return (tty, size, str(getattr(stream, "encoding", "")), str(getattr(stream, "errors", "")))


def cache_key(argv: Sequence[str]) -> bytes:
    """Everything besides files that a command's output may depend on, serialised."""
    env = tuple(sorted(item for item in os.environ.items() if item[0] not in VOLATILE_ENV))
    facts = (
        FORMAT,
        tuple(argv),
        os.getcwd(),
        env,
        _stream_facts(sys.stdout, 1),
        _stream_facts(sys.stderr, 2),
        sys.version,
        sys.executable,
        sys.prefix,
        tuple(sys.path),
        tuple(sys.flags),
        tuple(sorted((str(k), str(v)) for k, v in sys._xoptions.items())),
        os.getuid(),
        _package_version(),
    )
    return marshal.dumps(facts)


def _package_version() -> str:
    from pytest_ooda import __version__

    return __version__


def _entry_path(argv: Sequence[str]) -> tuple[str, bytes] | None:
    """Where the entry for this command line would be, and its key; ``None`` when the
    command is not cached here."""
    if not argv or argv[0] not in CACHED_COMMANDS or _disabled():
        return None
    if sys.stdout is None or sys.stderr is None:
        return None
    directory = cache_dir(os.environ)
    if directory is None:
        return None
    try:
        key = cache_key(argv)
    except (OSError, ValueError):  # a deleted current directory; a value marshal refuses
        return None
    # A 64-bit digest without loading zlib or hashlib; the entry holds the whole key.
    name = f"{int.from_bytes(key, 'little') % _PRIME:016x}.entry"
    return os.path.join(directory, name), key


def _load(path: str, key: bytes) -> tuple[list[tuple[int, bytes]], int] | None:
    """The saved output chunks and exit code, when the entry is this key's and every
    input it lists is unchanged."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.getuid():
                return None  # only this user's own entries are believed
            data = handle.read()
    except OSError:
        return None
    try:
        saved = marshal.loads(data)
        form, saved_key, inputs, chunks, code = saved
    except Exception:  # a damaged or foreign file: run the command
        return None
    if form != FORMAT or saved_key != key or type(code) is not int:
        return None
    try:
        for input_path, follow, expected in inputs:
            if signature(input_path, follow) != expected:
                return None
        checked = [(int(fd), bytes(data)) for fd, data in chunks]
    except Exception:
        return None
    if any(fd not in (1, 2) for fd, _ in checked):
        return None
    return checked, code


def _replay(chunks: list[tuple[int, bytes]]) -> None:
    streams = {1: sys.stdout, 2: sys.stderr}
    last = None
    for fd, data in chunks:
        stream = streams[fd]
        if last is not None and last is not stream:
            last.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            buffer.write(data)
        else:
            stream.write(data.decode(getattr(stream, "encoding", None) or "utf-8", "replace"))
        last = stream
    for stream in (sys.stdout, sys.stderr):
        stream.flush()


def main() -> int:
    """The ``ooda`` command: from the result cache when it can, else run it."""
    argv = sys.argv[1:]
    entry = _entry_path(argv)
    if entry is not None:
        found = _load(*entry)
        if found is not None:
            chunks, code = found
            try:
                _replay(chunks)
            except BrokenPipeError:
                # `ooda show build | head`: as the command itself, not an error; and no
                # complaint when the interpreter flushes stdout on its way out.
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 0
            return code
        _pause_collector(argv)
        return _run_and_save(argv, *entry)
    _pause_collector(argv)
    from pytest_ooda.cli import main as run

    return run(argv)


def _pause_collector(argv: Sequence[str]) -> None:
    """``ooda show``/``ooda list`` allocate a few megabytes and exit: the cyclic garbage
    collector's passes over every imported module's objects would only cost them time
    (about 3 ms of a 75 ms run). Longer commands (``ooda run``) keep it."""
    if argv and argv[0] in CACHED_COMMANDS:
        import gc

        gc.disable()


# --- the slow path: run the command, recording what it read ---------------------------


class _Recorder:
    """Collects the paths a run touches (through audit events and ``os.stat``), each
    with its signature taken when the run first touched it (before it read it: a change
    while it runs then shows at the next lookup), and whether anything the run did makes
    its output unsafe to keep."""

    def __init__(self) -> None:
        self.active = True
        #: (absolute path, followed symbolic links) -> signature at first sight
        self.found: dict[tuple[str, bool], Signature] = {}
        self.uncacheable: str | None = None
        self._stdlib = os.path.dirname(os.__file__) + os.sep

    def note(self, path: object, follow: bool = True) -> None:
        if isinstance(path, os.PathLike):
            path = path.__fspath__()
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if path is None or path == "":  # os.listdir()/os.scandir(): the current directory
            path = os.getcwd()
        if isinstance(path, str):
            self.add(os.path.abspath(path), follow)
        elif not isinstance(path, int):
            self.uncacheable = f"a path of type {type(path).__name__}"

    def add(self, path: str, follow: bool = True) -> None:
        if (path, follow) in self.found or self._stdlib_file(path) or _PYCACHE in path:
            # Not the interpreter's bytecode caches (nor the built-in procedures' parsed
            # layer kept beside them): each is derived from a source file recorded
            # itself, and other processes write them at any time.
            return
        sig = self.found[path, follow] = signature(path, follow)
        if follow and not (isinstance(sig, tuple) and sig[5] & 0o170000 == 0o040000):
            # Not a directory: its directory too (a file created beside it, a rename over
            # it); a directory's own time already changes when an entry comes or goes.
            self.add(os.path.dirname(path))

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active:
            return
        try:
            if event in _PATH_EVENTS:
                if event == "open" and isinstance(args[0], int):
                    return  # an open file descriptor (the standard streams)
                if event in ("os.listdir", "os.scandir") and isinstance(args[0], int):
                    self.uncacheable = f"{event} of a descriptor"
                    return
                self.note(args[0])
                if event in ("os.rename", "os.link", "os.symlink") and len(args) > 1:
                    self.note(args[1])
            elif event in _UNCACHEABLE_EVENTS:
                self.uncacheable = event
        except Exception as exc:  # an audit hook must never break the operation
            self.uncacheable = f"recording {event}: {exc!r}"

    def wrap_stat(
        self, real: Callable[..., os.stat_result], follow: bool
    ) -> Callable[..., os.stat_result]:
        def stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
            if self.active:
                if kwargs.get("dir_fd") is not None:
                    self.uncacheable = "a stat relative to a directory descriptor"
                elif not isinstance(path, int):  # an open file: noted when it was opened
                    try:
                        self.note(path, follow and kwargs.get("follow_symlinks", True) is not False)
                    except Exception as exc:
                        self.uncacheable = f"recording a stat: {exc!r}"
            return real(path, *args, **kwargs)

        return stat

    def inputs(self, loaded: Sequence[str]) -> list[tuple[str, bool, Signature]]:
        """Every path noted, the current directory, the ``sys.path`` directories where a
        new module could change what an import finds, and the ``loaded`` module files,
        with their signatures."""
        self.add(os.getcwd())
        # Those searched before the standard library (a new module there would shadow
        # anything) and every site-packages (where an install lands, .pth files
        # included). Not a project root an editable install appends: files come and go
        # there (coverage's data files, build output) and what is imported from it is
        # recorded module by module.
        before_stdlib = True
        for entry in sys.path:
            path = os.path.abspath(entry) if entry else os.getcwd()
            if path + os.sep == self._stdlib:
                before_stdlib = False
            if before_stdlib or os.path.basename(path) in ("site-packages", "dist-packages"):
                self.add(path)
        for path in loaded:
            self.add(os.path.abspath(path))
        return sorted((path, follow, sig) for (path, follow), sig in self.found.items())

    def _stdlib_file(self, path: str) -> bool:
        # The standard library changes only with the interpreter, which is in the key.
        return path.startswith(self._stdlib) and "-packages" not in path


class _TeeBuffer(io.BufferedIOBase):
    """A binary stream that writes through to ``target`` and keeps what it wrote."""

    def __init__(self, target: BinaryIO, fd: int, chunks: list[tuple[int, bytes]]) -> None:
        super().__init__()
        self._target = target
        self._fd = fd
        self._chunks = chunks
        self.failed = False

    def write(self, data: Buffer, /) -> int:
        payload = bytes(data)
        try:
            self._target.write(payload)
        except BaseException:
            self.failed = True
            raise
        self._chunks.append((self._fd, payload))
        return len(payload)

    def flush(self) -> None:
        try:
            self._target.flush()
        except BaseException:
            self.failed = True
            raise

    def writable(self) -> bool:
        return True

    @property
    def name(self) -> object:
        return getattr(self._target, "name", None)

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    def close(self) -> None:
        """The wrapper around this buffer is dropped after the run: the real stream
        stays open."""


def _tee(stream: TextIO, fd: int, chunks: list[tuple[int, bytes]]) -> tuple[TextIO, _TeeBuffer]:
    buffer = _TeeBuffer(stream.buffer, fd, chunks)
    wrapper = io.TextIOWrapper(
        buffer,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=bool(stream.line_buffering),
        write_through=True,
    )
    return wrapper, buffer


def _run_and_save(argv: list[str], path: str, key: bytes) -> int:
    """Run the command recording its inputs and output; keep the result when it is safe."""
    if not all(hasattr(s, "buffer") for s in (sys.stdout, sys.stderr)):
        from pytest_ooda.cli import main as run

        return run(argv)
    recorder = _Recorder()
    before = set(sys.modules)
    chunks: list[tuple[int, bytes]] = []
    real_out, real_err = sys.stdout, sys.stderr
    out, out_buffer = _tee(real_out, 1, chunks)
    err, err_buffer = _tee(real_err, 2, chunks)
    real_stat, real_lstat = os.stat, os.lstat
    sys.addaudithook(recorder.hook)
    os.stat = recorder.wrap_stat(real_stat, follow=True)
    os.lstat = recorder.wrap_stat(real_lstat, follow=False)
    sys.stdout, sys.stderr = out, err
    ran: list[str] = []
    code: int | None = None
    try:
        from pytest_ooda.cli import main as run

        code = run(argv, on_command=ran.append)
    finally:
        recorder.active = False
        os.stat, os.lstat = real_stat, real_lstat
        for wrapper in (out, err):
            try:
                wrapper.flush()
            except (OSError, ValueError):
                code = None
        sys.stdout, sys.stderr = real_out, real_err
    if (
        code == 0
        and ran == argv[:1]
        and recorder.uncacheable is None
        and not out_buffer.failed
        and not err_buffer.failed
        and sum(len(data) for _, data in chunks) <= MAX_OUTPUT
    ):
        loaded = [
            module.__file__
            for name, module in list(sys.modules.items())
            if (name not in before or name.partition(".")[0] == "pytest_ooda")
            and isinstance(getattr(module, "__file__", None), str)
        ]
        _save(path, key, recorder.inputs(loaded), _merged(chunks), code)  # type: ignore[arg-type]
    return code if code is not None else 1


def _merged(chunks: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    merged: list[tuple[int, bytes]] = []
    for fd, data in chunks:
        if merged and merged[-1][0] == fd:
            merged[-1] = (fd, merged[-1][1] + data)
        elif data:
            merged.append((fd, data))
    return merged


def _save(
    path: str,
    key: bytes,
    inputs: list[tuple[str, bool, Signature]],
    chunks: list[tuple[int, bytes]],
    code: int,
) -> None:
    """Write the entry atomically, unless an input changed too recently to trust its
    signature; a cache directory that cannot be written is ignored."""
    import time

    recent = time.time_ns() - RACY_NS
    if any(follow and isinstance(sig, tuple) and sig[0] > recent for _, follow, sig in inputs):
        return
    directory = os.path.dirname(path)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        data = marshal.dumps((FORMAT, key, tuple(inputs), tuple(chunks), code))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with open(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        _prune(directory)
    except (OSError, ValueError):
        return


def _prune(directory: str) -> None:
    """Keep at most ``MAX_ENTRIES`` entries, dropping the least recently written."""
    import contextlib

    names = [name for name in os.listdir(directory) if name.endswith(".entry")]
    if len(names) <= MAX_ENTRIES:
        return
    aged = []
    for name in names:
        full = os.path.join(directory, name)
        try:
            aged.append((os.stat(full).st_mtime_ns, full))
        except OSError:
            continue
    aged.sort()
    for _, full in aged[: len(aged) - MAX_ENTRIES * 3 // 4]:
        with contextlib.suppress(OSError):
            os.unlink(full)


if __name__ == "__main__":
    sys.exit(main())

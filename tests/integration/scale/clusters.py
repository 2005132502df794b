"""Real clusters on this machine for the scale-out tests and benchmark, every address on
127.0.0.1: a Dask scheduler with ``dask worker`` processes, and a Ray head with a second
node. Each process is started in a session of its own and stopped by its process id.

Ray's ``ray start`` turns ``--node-ip-address=127.0.0.1`` into the address of the
machine's outward interface (``services.resolve_ip_for_localhost``), so its nodes would
listen on, and talk to, that address. Here the Ray cluster lives in a network namespace
that has only a loopback interface (``unshare --net``, held open by a ``sleep``), where
every node is 127.0.0.1 and no packet can leave; whatever talks to it (the controller
session) runs in the same namespace through :meth:`RayCluster.command`. Stopping it
stops every process in the namespace, by pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The checkout: the workers import the tests' helpers from it.
ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _env(extra: dict[str, str], *, pythonpath: bool) -> dict[str, str]:
    """The cluster's environment (``pythonpath``: the workers import this checkout's
    test helpers, and so its pytest-ooda, before an installed one)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # xdist's markers of the outer session must not reach the workers' runs.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        env.pop(name, None)
    env.update(extra)
    return env


def _stop(pid: int, grace: float = 5.0) -> None:
    """End the session led by ``pid`` (the process and what it started): SIGTERM, then
    SIGKILL after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


class DaskCluster:
    """``dask scheduler`` and ``workers`` × ``dask worker --nthreads threads``."""

    def __init__(
        self,
        directory: Path,
        *,
        workers: int = 2,
        threads: int = 2,
        pythonpath: bool = True,
        tls: tuple[Path, Path, Path] | None = None,
    ) -> None:
        self.directory = directory
        self.pythonpath = pythonpath
        self.threads = threads
        self.count = workers
        #: (CA, certificate, key): every process of the cluster speaks TLS only.
        self.tls = tls
        self.cache = directory / "cache"
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []
        self.address = ""

    def _tls_args(self) -> list[str]:
        if self.tls is None:
            return []
        ca, cert, key = self.tls
        return [f"--tls-ca-file={ca}", f"--tls-cert={cert}", f"--tls-key={key}"]

    def client_env(self) -> dict[str, str]:
        """What a client of this cluster sets to speak its TLS (Dask's own variables)."""
        if self.tls is None:
            return {}
        ca, cert, key = self.tls
        return {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(ca),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key),
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        }

    def _start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("wb")
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args, *self._tls_args()],
            env=_env({"XDG_CACHE_HOME": str(self.cache)}, pythonpath=self.pythonpath),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.directory,
        )

    def start(self) -> DaskCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        found = self.directory / "scheduler.json"
        self.scheduler = self._start(
            "scheduler",
            "scheduler",
            *(["--protocol", "tls"] if self.tls else []),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(found),
        )
        deadline = time.monotonic() + 60
        while not found.exists() or not found.read_text():
            if time.monotonic() > deadline or self.scheduler.poll() is not None:
                raise RuntimeError("the Dask scheduler did not start: " + self.log("scheduler"))
            time.sleep(0.1)
        time.sleep(0.2)  # written, then flushed
        self.address = json.loads(found.read_text())["address"]
        for index in range(self.count):
            self.add_worker(f"w{index}")
        self.wait_for(self.count)
        return self

    def add_worker(self, name: str) -> subprocess.Popen[bytes]:
        worker = self._start(
            name,
            "worker",
            self.address,
            "--host",
            "127.0.0.1",
            "--nthreads",
            str(self.threads),
            "--no-dashboard",
            "--name",
            name,
        )
        self.workers.append(worker)
        return worker

    def wait_for(self, count: int, timeout: float = 60) -> None:
        """Until ``count`` workers have joined."""
        from distributed import Client

        with Client(self.address, timeout=30, security=self.security()) as client:
            client.wait_for_workers(count, timeout=timeout)

    def security(self) -> Any:
        """The client security of this cluster (``None``: plain TCP)."""
        if self.tls is None:
            return None
        from distributed.security import Security

        ca, cert, key = self.tls
        return Security(
            tls_ca_file=str(ca), tls_client_cert=str(cert), tls_client_key=str(key),
            require_encryption=True,
        )  # fmt: skip

    def worker_addresses(self) -> list[str]:
        from distributed import Client

        with Client(self.address, timeout=30, security=self.security()) as client:
            return sorted(client.nthreads())

    def kill_worker(self, worker: subprocess.Popen[bytes]) -> None:
        """SIGKILL a worker and its nanny: a machine gone, nothing said."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(30)

    def log(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        for worker in self.workers:
            _stop(worker.pid)
        if self.scheduler is not None:
            _stop(self.scheduler.pid)
        self.workers.clear()


class RayCluster:
    """A Ray head and a second node (``ray start``), alone in a network namespace."""

    #: The head's GCS port: the namespace is the cluster's own, so the usual one.
    PORT = 6379

    def __init__(self, directory: Path, *, cpus: int = 2, pythonpath: bool = True) -> None:
        self.directory = directory
        self.pythonpath = pythonpath
        self.cpus = cpus
        self.holder: subprocess.Popen[bytes] | None = None
        # Ray's socket paths must stay under ~107 bytes: a short directory of its own.
        self.temp = Path(tempfile.mkdtemp(prefix="ooda-ray-"))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.PORT}"

    @property
    def namespace(self) -> str:
        assert self.holder is not None
        return f"/proc/{self.holder.pid}/ns/net"

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside the cluster's network namespace."""
        return ["nsenter", f"--net={self.namespace}", *argv]

    def _ray(self, name: str, *args: str) -> None:
        log = (self.directory / f"{name}.log").open("wb")
        done = subprocess.run(
            self.command(str(BIN / "ray"), "start", *args),
            env=_env({"XDG_CACHE_HOME": str(self.directory / "cache")}, pythonpath=self.pythonpath),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.directory,
            timeout=180,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"ray start ({name}) failed: " + self.log(name))

    def start(self) -> RayCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        with (self.directory / "namespace.log").open("wb") as said:
            self.holder = subprocess.Popen(
                ["unshare", "--net", "sh", "-c", "ip link set lo up && exec sleep 86400"],
                stdout=said,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 10
        while not self._in_namespace():
            if time.monotonic() > deadline:
                raise RuntimeError("the network namespace was not made")
            time.sleep(0.05)
        common = (
            f"--temp-dir={self.temp}",
            "--disable-usage-stats",
            f"--num-cpus={self.cpus}",
            "--dashboard-agent-listen-port=0",
            "--metrics-export-port=0",
        )
        self._ray(
            "head",
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={self.PORT}",
            "--include-dashboard=false",
            *common,
        )
        # The second node's raylet is known by this resource (kill_second).
        self._ray("second", f"--address={self.address}", '--resources={"ooda_second": 1}', *common)
        return self

    def _in_namespace(self) -> bool:
        """Whether the holder has entered its own network namespace; a holder that
        exited (unshare or ip refused) is said so with its words, not as a missing
        /proc entry."""
        assert self.holder is not None
        try:
            return os.readlink(self.namespace) != os.readlink("/proc/self/ns/net")
        except FileNotFoundError:
            pass
        code = self.holder.wait(timeout=10)
        raise RuntimeError(
            f"the network namespace holder exited ({code}): " + self.log("namespace")
        )

    def pids(self) -> list[int]:
        """Every process in the cluster's namespace but the one holding it open."""
        assert self.holder is not None
        mine = os.readlink(self.namespace)
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.holder.pid:
                continue
            try:
                if os.readlink(entry / "ns/net") == mine:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def second_raylet(self) -> int:
        """The pid of the second node's raylet."""
        for pid in self.pids():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"/raylet") and b"ooda_second" in b" ".join(argv):
                return pid
        raise LookupError("no raylet of the second node")

    def head_raylet(self) -> int:
        """The pid of the head node's raylet: the node the session's driver attaches to
        and the session's ledger actor lives on."""
        for pid in self.pids():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"/raylet") and b"ooda_second" not in b" ".join(argv):
                return pid
        raise LookupError("no raylet of the head node")

    def kill(self, pid: int) -> None:
        """SIGKILL one of the cluster's processes (a node's raylet: the node is gone)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def log(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        if self.holder is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 5
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.1)
        self.holder.kill()
        self.holder.wait(10)
        self.holder = None
        shutil.rmtree(self.temp, ignore_errors=True)

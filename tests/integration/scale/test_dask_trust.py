"""Cluster trust (issue 39, item 8): a Dask cluster that speaks TLS only, with a
self-signed certificate made here, runs a session's live runs over ``tls://``, and a
client without the certificate cannot reach it (whoever reaches a scheduler runs code
on its workers, which hold the agent's keys). An untracked ``.env`` of the project is
not shipped to the workers unless the session names it (``--ooda-ship``)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from external_tools import require

from .clusters import DaskCluster
from .helpers import agent, records, scenario

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from ooda_project import Project

QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest")
SECRET = "DB_PASSWORD=" + "k" * 6 + "9" * 6


def _certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key; it is its own CA."""
    require(
        __import__("shutil").which("openssl") is not None, "openssl", "apt-get install -y openssl"
    )
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return cert, cert, key


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    from importlib.util import find_spec

    require(find_spec("distributed") is not None, "Dask", "pip install 'pytest-ooda[dask]'")
    directory = tmp_path_factory.mktemp("dask-tls")
    cluster = DaskCluster(directory, workers=1, threads=2, tls=_certificate(directory))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def _session(
    project: Project, cluster: DaskCluster, *args: str
) -> subprocess.CompletedProcess[str]:
    command = agent(project, sleep=0.1)
    return subprocess.run(
        [sys.executable, "-m", "pytest", *QUIET, "-m", "live", f"--ooda-ai-cmd={command}",
         f"--ooda-executor=dask:{cluster.address}", *args],
        cwd=project.path, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, **cluster.client_env()},
    )  # fmt: skip


def test_a_session_runs_on_a_cluster_that_speaks_tls_only(
    project: Project, tls_cluster: DaskCluster
) -> None:
    assert tls_cluster.address.startswith("tls://127.0.0.1:")
    scenario(project, repeat=3)
    done = _session(project, tls_cluster)
    assert done.returncode == 0, done.stdout + done.stderr
    found = records(project)
    assert sorted(record["run"] for record in found) == [1, 2, 3]
    assert all(record["worker"].startswith("dask:tls://") for record in found)


#: A client in a process of its own: it tries the address with the certificate it is
#: given (none: plain) and says whether the scheduler answered. (In one long-lived
#: process, a refused ``Client`` lingers until the garbage collector closes it, and in the
#: oldest supported ``distributed`` that can stall a later client's IO loop past its
#: start-up time.)
CLIENT = """
import sys
from distributed import Client
from distributed.security import Security

address, ca, cert, key = sys.argv[1:5]
security = Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True) if cert else None
try:
    client = Client(address, timeout=5, security=security, set_as_default=False)
except (OSError, TimeoutError, ValueError, TypeError) as error:
    print("refused:", type(error).__name__, flush=True)
    sys.exit(3)
print("answered:", sum(client.nthreads().values()), "threads", flush=True)
client.close()
"""


def _client(address: str, *tls: Path) -> subprocess.CompletedProcess[str]:
    ca, cert, key = (str(path) for path in tls) if tls else ("", "", "")
    return subprocess.run(
        [sys.executable, "-c", CLIENT, address, ca, cert, key],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_client_without_the_clusters_certificate_cannot_reach_the_scheduler(
    tls_cluster: DaskCluster, tmp_path: Path
) -> None:
    plain = tls_cluster.address.replace("tls://", "tcp://")
    for address in (tls_cluster.address, plain):
        refused = _client(address)
        assert refused.returncode == 3, refused.stdout + refused.stderr
    # A certificate of its own, not the cluster's: the scheduler asks for the client's
    # and refuses one its CA did not sign -- at the connection (an OSError such as
    # distributed's CommClosedError, or a timeout), not for how the client was asked.
    assert tls_cluster.tls is not None
    ca = tls_cluster.tls[0]
    _, cert, key = _certificate(tmp_path)
    stranger = _client(tls_cluster.address, ca, cert, key)
    assert stranger.returncode == 3, stranger.stdout + stranger.stderr
    assert stranger.stdout.split()[1] not in ("ValueError", "TypeError"), stranger.stdout
    # With the cluster's own, it answers.
    member = _client(tls_cluster.address, *tls_cluster.tls)
    assert member.returncode == 0, member.stdout + member.stderr
    assert member.stdout.startswith("answered: 2 threads"), member.stdout


def test_an_untracked_env_file_is_shipped_only_when_named(
    project: Project, tls_cluster: DaskCluster
) -> None:
    project.write(".env", SECRET + "\n")
    project.write("keys/deploy.pem", "not a real key\n")
    project.write(".env.example", "DB_PASSWORD=\n")
    scenario(project)
    sources = tls_cluster.cache / "pytest-ooda" / "sources"
    before = set(sources.iterdir()) if sources.exists() else set()
    held = _session(project, tls_cluster)
    assert held.returncode == 0, held.stdout + held.stderr
    assert (
        "ooda: not shipped to the cluster, their names say they hold secrets: .env, "
        "keys/deploy.pem (--ooda-ship=PATH ships one" in held.stdout
    )
    [unpacked] = set(sources.iterdir()) - before
    assert not (unpacked / ".env").exists()
    assert not (unpacked / "keys/deploy.pem").exists()
    assert (unpacked / ".env.example").exists()  # a template is no secret
    named = _session(project, tls_cluster, "--ooda-ship=.env")
    assert named.returncode == 0, named.stdout + named.stderr
    assert "not shipped to the cluster, their names say they hold secrets: keys/deploy.pem" in (
        named.stdout
    )
    [shipped] = set(sources.iterdir()) - before - {unpacked}
    assert (shipped / ".env").read_text() == SECRET + "\n"

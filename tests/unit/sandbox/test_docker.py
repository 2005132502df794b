"""The ``docker`` sandbox with a real daemon: the checks before any run (daemon,
network, image, ``build:`` once by content), one labelled container per run removed
after it, leftovers of a killed session removed at the next start, the invoking uid:gid,
the environment by allow-list, and verification commands inside the container."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest
from sandbox_images import (
    attempts,
    busybox_image,
    leftovers,
    probe_binary,
    probe_targets,
    require_docker,
)

from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox import parse_spec
from pytest_ooda.sandbox.docker import LABEL, ROOT_STAND_IN, DockerSandbox, remove_leftovers
from pytest_ooda.sandbox.spec import DEFAULT_MEMORY, DEFAULT_PIDS_LIMIT
from pytest_ooda.scenario.verify import CommandCheck

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def image() -> str:
    require_docker()
    return busybox_image()


def _containers() -> list[str]:
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label={LABEL}", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.split() if name.startswith(f"ooda-{os.getpid()}-")]


def _sandbox(**options: object) -> DockerSandbox:
    sandbox = DockerSandbox(parse_spec({"kind": "docker", "network": "none", **options}))
    sandbox.prepare()
    return sandbox


def test_a_run_is_one_labelled_container_removed_afterwards(image: str, tmp_path: Path) -> None:
    sandbox = _sandbox(image=image, env=["ALLOWED", "IS_SANDBOX=1"])
    assert sandbox.identity()["image_id"].startswith("sha256:")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with sandbox.start(workspace, tmp_path) as run:
        assert len(_containers()) == 1
        backend = CommandBackend(
            ["sh", "-c", 'id -u; id -g; echo "a=$ALLOWED s=$SECRETISH f=$IS_SANDBOX"; '
             "echo made > out.txt; pwd"],
            env={**os.environ, "ALLOWED": "yes", "SECRETISH": "no-way"},
            sandbox=run,
        )  # fmt: skip
        done = backend.run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
        # A verification command runs in the same container.
        outcome = CommandCheck("cat out.txt; ls /work 2>&1 | head -1").verify(
            workspace, sandbox=run
        )
    assert _containers() == []
    lines = done.output.split("\n")
    # Never root inside: yours, or as root an ordinary user's (ROOT_STAND_IN).
    inside = f"{os.getuid()}:{os.getgid()}" if os.getuid() else ROOT_STAND_IN
    assert lines[:2] == inside.split(":")
    assert lines[2] == "a=yes s= f=1"
    assert lines[3] == str(workspace)
    assert (workspace / "out.txt").read_text() == "made\n"
    # What the agent wrote is the invoking user's again after the run.
    assert (workspace / "out.txt").stat().st_uid == os.getuid()
    assert workspace.stat().st_uid == os.getuid()
    assert outcome.output_tail.startswith("made\n")
    assert "No such file" in outcome.output_tail  # the host's tree is not in there


def test_no_daemon_is_a_clear_error_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require_docker()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    with pytest.raises(SandboxError) as caught:
        _sandbox(image="anything:1")
    assert "daemon does not answer" in caught.value.message
    assert "nothing was run" in (caught.value.hint or "")


def test_a_missing_image_and_a_missing_bridge_are_clear_errors(image: str) -> None:
    with pytest.raises(SandboxError, match=r"image 'pytest-ooda-absent:0' is not present"):
        _sandbox(image="pytest-ooda-absent:0")
    bridge = subprocess.run(["docker", "network", "inspect", "bridge"], capture_output=True)
    if bridge.returncode == 0:
        _sandbox(image=image, network="bridge")  # a daemon with a bridge: accepted
    else:
        with pytest.raises(SandboxError, match="no bridge network"):
            _sandbox(image=image, network="bridge")


def test_build_once_per_content(image: str, tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"FROM {image}\nCOPY marker.txt /marker.txt\n")
    (tmp_path / "marker.txt").write_text(f"built for {tmp_path.name}\n")
    spec = parse_spec(
        {"kind": "docker", "build": "Dockerfile", "network": "none"}, base_dir=tmp_path
    )
    first = DockerSandbox(spec)
    first.prepare()
    tag = first.image
    assert tag.startswith("pytest-ooda-build:")
    created = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Created}}", tag],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    again = DockerSandbox(spec)
    again.prepare()
    assert again.image == tag
    assert subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Created}}", tag],
        capture_output=True, text=True, check=True,
    ).stdout == created  # fmt: skip
    (tmp_path / "marker.txt").write_text("changed\n")
    changed = DockerSandbox(spec)
    changed.prepare()
    assert changed.image != tag
    subprocess.run(["docker", "rmi", "-f", tag, changed.image], capture_output=True, check=False)


def test_a_broken_dockerfile_is_a_clear_error(image: str, tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\nRUN /bin/definitely-missing\n")
    spec = parse_spec(
        {"kind": "docker", "build": "Dockerfile", "network": "none"}, base_dir=tmp_path
    )
    with pytest.raises(SandboxError, match=r"building .*Dockerfile failed"):
        DockerSandbox(spec).prepare()


def test_leftovers_of_a_killed_session_are_removed_at_the_next_start(
    image: str, tmp_path: Path
) -> None:
    # A session that was killed: its container stays, labelled with its (now dead) pid.
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from pytest_ooda.sandbox import parse_spec\n"
        "from pytest_ooda.sandbox.docker import DockerSandbox\n"
        f"spec = {{'kind': 'docker', 'image': {image!r}, 'network': 'none'}}\n"
        "s = DockerSandbox(parse_spec(spec))\n"
        "s.prepare()\n"
        f"run = s.start(Path({str(tmp_path)!r}), Path({str(tmp_path)!r}))\n"
        "print(run.name, flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    name = done.stdout.strip()
    assert name, done.stderr
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True
    )
    assert listed.stdout.strip()
    mine = _sandbox(image=image)
    with mine.start(tmp_path, tmp_path):
        removed = remove_leftovers("docker")
        # Ours is alive (this process) and stays; the dead session's is gone.
        assert len(_containers()) == 1
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True
    )
    assert listed.stdout.strip() == ""
    assert removed == [] or name in removed


def _host_config(run: object) -> list[str]:
    return subprocess.run(
        ["docker", "inspect", "--format",
         "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} "
         "{{.HostConfig.NetworkMode}} {{.Config.User}} {{.HostConfig.CapDrop}} "
         "{{.HostConfig.SecurityOpt}}", run.name],  # type: ignore[attr-defined]
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip


def test_resource_limits_reach_the_container(image: str, tmp_path: Path) -> None:
    sandbox = _sandbox(image=image, cpus=0.5, memory="64m", pids_limit=64, user="4242:4343")
    with sandbox.start(tmp_path, tmp_path) as run:
        shown = _host_config(run)
    user = "4242:4343" if os.getuid() == 0 else f"{os.getuid()}:{os.getgid()}"
    assert shown == [
        "500000000",
        str(64 * 1024 * 1024),
        "64",
        "none",
        user,
        "[ALL]",
        "[no-new-privileges]",
    ]


def test_every_container_is_capped_and_unprivileged_by_default(image: str, tmp_path: Path) -> None:
    sandbox = _sandbox(image=image)
    with sandbox.start(tmp_path, tmp_path) as run:
        shown = _host_config(run)
    assert DEFAULT_MEMORY == "4g"
    assert shown[1:3] == [str(4 << 30), str(DEFAULT_PIDS_LIMIT)]
    assert shown[4].split(":")[0] != "0"
    assert shown[5:] == ["[ALL]", "[no-new-privileges]"]


CTRL_C = """\
import sys
from pathlib import Path
from pytest_ooda.backends.command import CommandBackend
from pytest_ooda.sandbox import parse_spec
from pytest_ooda.sandbox.registry import sandboxed

spec = parse_spec({"kind": "docker", "image": sys.argv[1], "network": "none"})
workspace = Path(sys.argv[2])
with sandboxed(spec, workspace) as run:
    print(run.name, flush=True)
    CommandBackend(["sleep", "60"], sandbox=run).run(
        "", iteration=1, workdir=workspace, timeout=120, max_output=1024, stream=None
    )
"""


def test_ctrl_c_removes_the_runs_container(image: str, tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C, image, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    name = child.stdout.readline().strip()
    assert name.startswith("ooda-")
    time.sleep(1.0)  # the agent (sleep 60) is running inside
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert "KeyboardInterrupt" in err
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True
    )
    assert listed.stdout.strip() == ""


FAKE_ENGINE = """\
#!/bin/sh
echo "$*" >> "$ENGINE_LOG"
echo sha256:fake
"""


def test_engine_podman_runs_podman_with_the_same_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in `podman` that logs its arguments: what matters is what we ask of it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(FAKE_ENGINE)
    (bin_dir / "podman").chmod(0o755)
    log = tmp_path / "engine.log"
    monkeypatch.setenv("ENGINE_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    spec = parse_spec({"kind": "docker", "engine": "podman", "image": "img:1", "network": "host"})
    sandbox = DockerSandbox(spec)
    sandbox.prepare()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with sandbox.start(workspace, tmp_path) as run:
        launch = run.launch(["agent", "-p"], {"PATH": "/usr/bin"}, workspace)
    calls = log.read_text().splitlines()
    assert calls[0] == "version --format {{.Server.Version}}"
    assert calls[1].startswith("ps -a --filter label=pytest-ooda.run")
    assert calls[2] == "image inspect --format {{.Id}} img:1"
    started = calls[3].split()
    assert started[:4] == ["run", "-d", "--init", "--name"]
    inside = f"{os.getuid()}:{os.getgid()}" if os.getuid() else ROOT_STAND_IN
    assert ["--user", inside] == started[started.index("--user") :][:2]
    assert started[started.index("--cap-drop") :][:2] == ["--cap-drop", "ALL"]
    assert "no-new-privileges" in started
    assert started[started.index("--network") :][:2] == ["--network", "host"]
    assert started[-3:] == ["img:1", "sleep", "infinity"]
    assert calls[4].startswith("rm -f -v ooda-")
    assert launch.argv[:3] == ("podman", "exec", "-i")
    assert launch.argv[-2:] == ("agent", "-p")


def test_the_probe_agent_escapes_nothing_and_leaves_nothing(image: str, tmp_path: Path) -> None:
    # The probe as root starts it: in a container of an ordinary uid with every
    # capability dropped, no-new-privileges and the default process limit.
    with probe_targets() as targets:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        shutil.copy2(probe_binary(), workspace / "probe")
        (workspace / "result.txt").write_text("work\n")
        sandbox = _sandbox(image=image)
        with sandbox.start(workspace, tmp_path) as run:
            backend = CommandBackend(["/bin/sh", "-c", targets.script()], sandbox=run)
            done = backend.run(
                "", iteration=1, workdir=workspace, timeout=120, max_output=1 << 20, stream=None
            )
        notes = list(run.notes)
    found = attempts(done.output)
    # A set-user-ID bit on its own file is the one thing an unprivileged uid may set:
    # inert inside (no-new-privileges), cleared when the run ends.
    escaped = {what for what, how in found.items() if how != "refused"}
    assert escaped <= {"setuid chmod", "setuid create"}, done.output
    for what in ("mknod", "chown", "ptrace", "unix socket", "fork bomb", "hard-link"):
        assert found[what] == "refused", done.output
    assert targets.planted not in done.output
    assert targets.connections == []
    assert leftovers(workspace) == []
    assert all("set-user/group-ID bit was cleared" in note for note in notes)
    assert len(notes) == len(escaped)
    # Handed back: the host user owns and can remove everything the agent made.
    assert {path.lstat().st_uid for path in workspace.iterdir()} == {os.getuid()}


def test_network_pid_is_a_process_in_the_containers_own_network(image: str, tmp_path: Path) -> None:
    # Where a service for the run (the model-API proxy) can listen on the container's
    # loopback; the host's own namespace is another.
    sandbox = _sandbox(image=image)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with sandbox.start(workspace, tmp_path) as run:
        pid = run.network_pid()
        assert pid is not None
        inside = os.readlink(f"/proc/{pid}/ns/net")
        backend = CommandBackend(["sh", "-c", "readlink /proc/self/ns/net"], sandbox=run)
        done = backend.run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
    assert inside != os.readlink("/proc/self/ns/net")
    assert done.output.strip() == inside


def test_an_agent_missing_from_the_image_is_an_infrastructure_error(
    image: str, tmp_path: Path
) -> None:
    sandbox = _sandbox(image=image)
    # Checked before any run, naming the command and the image …
    problem = sandbox.agent_problem(["no-such-agent", "-p"], None)
    assert problem is not None
    assert f"no-such-agent is not on the PATH in the image {image}" in problem
    assert sandbox.agent_problem(["busybox"], None) is None
    # … and should it be started anyway, `docker exec`'s own failure is `cannot-start`.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with sandbox.start(workspace, tmp_path) as run:
        done = CommandBackend(["no-such-agent", "-p"], sandbox=run).run(
            "", iteration=1, workdir=workspace, timeout=60, max_output=1 << 16, stream=None
        )
    assert done.exit_code in (126, 127)
    assert done.infra_error is not None
    assert done.infra_error.startswith("cannot-start: the sandbox could not start the agent:")

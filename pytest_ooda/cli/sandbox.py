"""``ooda sandbox image``: build a minimal image for ``sandbox: {kind: docker}`` from the
agent installed on this machine, offline (:mod:`pytest_ooda.sandbox.image`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ooda.cli.common import EXIT_OK

if TYPE_CHECKING:
    import argparse


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="sandbox tools: build an offline image of your agent for the docker sandbox",
        description="Tools for the sandboxes live runs use (`ooda help sandbox`).",
    )
    actions = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    image = actions.add_parser(
        "image",
        help="build a minimal Docker/Podman image of the agent installed here",
        description="Build an image holding the agent's own native executable (resolved "
        "through its links), the shared libraries it loads, bash, a static busybox for "
        "/bin/sh and the usual tools, and the CA certificates, by `docker import` of a "
        "tar made here: no registry, no Dockerfile, no network. The tag is a hash of "
        "what went in, so an unchanged agent is not imported again. Name the result in "
        "sandbox: {kind: docker, image: TAG}.",
        epilog="exit codes: 0 built (or already there), 1 a usage error, 2 the agent "
        "cannot be imaged (a script, not found) or the engine failed.",
    )
    image.add_argument(
        "--agent",
        default=None,
        metavar="NAME|PATH",
        help="the agent's command on PATH, or its path (default: the default agent's "
        "program, as `ooda init` writes it)",
    )
    image.add_argument("--tag", metavar="TAG", help="the image's tag (default: by content)")
    image.add_argument(
        "--engine",
        choices=("docker", "podman"),
        default="docker",
        help="the container engine that imports it (default: docker)",
    )
    image.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from pytest_ooda.agents import DEFAULT_AGENT, load_agent
    from pytest_ooda.sandbox import build_agent_image

    if args.agent is None:
        args.agent = load_agent(DEFAULT_AGENT).programs[0]
    built = build_agent_image(args.agent, tag=args.tag, engine=args.engine)
    size = sum(path.stat().st_size for path in built.files.values())
    what = "built" if built.created else "already present"
    print(
        f"{what}: {built.tag} ({args.agent} from {built.agent}, {len(built.files)} files, "
        f"{size / 1e6:.0f} MB before compression)"
    )
    print(f"use it:   sandbox: {{kind: docker, image: {built.tag!r}}}")
    return EXIT_OK

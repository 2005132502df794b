"""``apireplay.canonical``: what a request is compared by — paths, dates, UUIDs and run ids
normalised, big values split into parts known by digest."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pytest_ooda.apireplay.canonical import (
    Normaliser,
    canonical_request,
    digest,
    expand_skeleton,
    part_names,
    redact_value,
)

if TYPE_CHECKING:
    from pathlib import Path


def _body(workspace: str, session: str, date: str) -> bytes:
    # Claude Code's memory directory names the workspace with each non-alphanumeric as "-".
    return json.dumps(
        {
            "model": "m",
            "system": [{"type": "text", "text": f"Primary working directory: {workspace}"}],
            "tools": [{"name": "Bash"}],
            "metadata": {"user_id": json.dumps({"device_id": "d" * 64, "session_id": session})},
            "messages": [
                {"role": "user", "content": f"Today's date is {date}. Memory: ~/.claude/"
                 f"projects/{re.sub('[^A-Za-z0-9]', '-', workspace)}/memory"},
                {"role": "user", "content": f"session {session} wrote {workspace}/a.py"},
            ],
        }
    ).encode()  # fmt: skip


def test_two_runs_in_different_places_on_different_days_have_one_key(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "workspace", tmp_path / "b" / "workspace"
    first = canonical_request(
        "anthropic", "POST", "/v1/messages",
        _body(str(one), "11111111-2222-4333-8444-555555555555", "2026-11-27"),
        Normaliser.for_run(workspace=one),
    )  # fmt: skip
    second = canonical_request(
        "anthropic", "POST", "/v1/messages",
        _body(str(two), "99999999-8888-4777-8666-555555555555", "2027-02-03"),
        Normaliser.for_run(workspace=two),
    )  # fmt: skip
    assert first.key() == second.key()
    body = first.expanded()
    assert body["system"][0]["text"] == "Primary working directory: <ooda:workspace>"
    assert body["messages"][0]["content"] == (
        "Today's date is <ooda:date>. Memory: ~/.claude/projects/<ooda:workspace-slug>/memory"
    )
    assert body["messages"][1]["content"] == "session <ooda:uuid> wrote <ooda:workspace>/a.py"
    assert body["metadata"] == {"user_id": "<ooda:run-id>"}


def test_a_changed_prompt_is_another_key() -> None:
    normaliser = Normaliser()
    a = canonical_request("anthropic", "POST", "/v1/messages", b'{"messages": ["a"]}', normaliser)
    b = canonical_request("anthropic", "POST", "/v1/messages", b'{"messages": ["b"]}', normaliser)
    c = canonical_request("openai", "POST", "/v1/messages", b'{"messages": ["a"]}', normaliser)
    assert len({a.key(), b.key(), c.key()}) == 3


def test_big_values_are_parts_named_by_digest_and_expand_back() -> None:
    body = {
        "model": "m",
        "system": "you are",
        "tools": [{"name": "Bash"}],
        "instructions": "be brief",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "input": [{"type": "message", "content": "x"}],
        "user": "someone-123",
        "prompt_cache_key": "conversation-7",
        "max_tokens": 5,
    }
    data = json.dumps(body).encode()
    request = canonical_request("openai", "POST", "/v1/responses", data, Normaliser())
    skeleton = request.skeleton
    assert skeleton["model"] == "m"
    assert skeleton["max_tokens"] == 5
    assert skeleton["user"] == skeleton["prompt_cache_key"] == "<ooda:run-id>"
    assert skeleton["system"] == digest("you are")
    assert skeleton["messages"] == [digest(m) for m in body["messages"]]
    assert list(part_names(skeleton)) == [
        digest("you are"), digest(body["tools"]), digest("be brief"),
        *[digest(m) for m in body["messages"]], digest(body["input"][0]),
    ]  # fmt: skip
    expanded = expand_skeleton(skeleton, request.parts.get)
    assert expanded == {**body, "user": "<ooda:run-id>", "prompt_cache_key": "<ooda:run-id>"}


def test_a_body_that_is_not_json_or_empty_is_kept_as_text() -> None:
    text = canonical_request("anthropic", "POST", "/x", b"not json", Normaliser())
    assert text.skeleton == {"text": "not json"}
    empty = canonical_request("anthropic", "GET", "/v1/models", b"", Normaliser())
    assert empty.skeleton is None
    assert empty.endpoint == "anthropic GET /v1/models"


def test_paths_are_replaced_only_as_whole_names_longest_first(tmp_path: Path) -> None:
    workspace = tmp_path / "run" / "workspace"
    normaliser = Normaliser.for_run(workspace=workspace, run_dir=tmp_path / "run", tmp="/tmp")
    text = f"{workspace}/x {tmp_path}/run/home {workspace}2 /tmpfile /var/tmp/y /tmp/z"
    assert normaliser.response(text) == (
        "<ooda:workspace>/x <ooda:run>/home <ooda:run>/workspace2 /tmpfile /var/tmp/y <ooda:tmp>/z"
    )


def test_a_path_after_an_escaped_line_break_in_json_is_a_whole_name(tmp_path: Path) -> None:
    # Gemini CLI lists the workspace's tree on a line of its own in its system prompt.
    workspace = tmp_path / "workspace"
    normaliser = Normaliser.for_run(workspace=workspace)
    text = json.dumps({"text": f"Structure:\n{workspace}/\n└──.git/\nnot{workspace}"})
    stored = json.loads(normaliser.response(text))["text"]
    assert stored == f"Structure:\n<ooda:workspace>/\n└──.git/\nnot{workspace}"
    assert normaliser.response(f"a\\\\n{workspace}") == f"a\\\\n{workspace}"


def test_a_path_in_json_is_found_escaped_and_put_back_escaped(tmp_path: Path) -> None:
    odd = tmp_path / 'with "quote"'
    normaliser = Normaliser.for_run(workspace=odd)
    text = json.dumps({"path": f"{odd}/a"})
    stored = normaliser.response(text)
    assert json.loads(stored) == {"path": "<ooda:workspace>/a"}
    assert json.loads(normaliser.expand(stored)) == {"path": f"{odd}/a"}
    assert normaliser.expand("<ooda:workspace>/a", json_text=False) == f"{odd}/a"


def test_the_resolved_form_of_a_path_is_normalised_too(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    normaliser = Normaliser.for_run(workspace=link)
    assert normaliser.response(f"{real}/a {link}/b") == "<ooda:workspace>/a <ooda:workspace>/b"
    # Put back as the path the run was given.
    assert normaliser.expand("<ooda:workspace>") == str(link)


def test_redact_value_reaches_every_string() -> None:
    value: Any = {"a": ["x secret", {"secret key": 3, "b": None}]}
    assert redact_value(value, lambda s: s.replace("secret", "*")) == {
        "a": ["x *", {"* key": 3, "b": None}]
    }


def test_dates_and_uuids_are_replaced_only_whole() -> None:
    uuid = "0c3d2e1f-aaaa-4bbb-8ccc-dddddddddddd"
    text = (
        f"2026-11-27 x2026-11-27 12026-11-27 2026-11-277 (2026-01-02) "
        f"{uuid} a{uuid} {uuid}0 id={uuid}."
    )
    assert Normaliser().request(text) == (
        "<ooda:date> x2026-11-27 12026-11-27 2026-11-277 (<ooda:date>) "
        f"<ooda:uuid> a{uuid} {uuid}0 id=<ooda:uuid>."
    )
    assert Normaliser().request("-11-27 11-27 -4bbb-8ccc-dddd-dddddddddddd") == (
        "-11-27 11-27 -4bbb-8ccc-dddd-dddddddddddd"
    )


def test_the_kernel_build_in_an_environment_block_is_normalised() -> None:
    text = json.dumps({"system": "Platform: linux\n - OS Version: Linux 6.8.0-45-generic\nShell"})
    assert json.loads(Normaliser().request(text)) == {
        "system": "Platform: linux\n - OS Version: <ooda:os-version>\nShell"
    }
    assert Normaliser().request("OS Version: Darwin 24.1\nnext") == (
        "OS Version: <ooda:os-version>\nnext"
    )


def test_a_path_after_a_json_escape_and_home_relative_to_the_workspace(tmp_path: Path) -> None:
    shallow, deep = tmp_path / "w" / "workspace", tmp_path / "s" / "runs" / "r" / "workspace"
    home = tmp_path / "home"
    seen = []
    for workspace in (shallow, deep):
        normaliser = Normaliser.for_run(workspace=workspace, home=home, tmp="/nowhere")
        relative = f"../../{'../../' if workspace == deep else ''}home/.qwen/QWEN.md"
        text = json.dumps({"text": f"Listing:\n{workspace}/\nContext from: {relative} ---"})
        seen.append(json.loads(normaliser.request(text))["text"])
    # The same text however deep the workspace lies; a name after "\n" is a whole name.
    expected = "Listing:\n<ooda:workspace>/\nContext from: <ooda:home-from-workspace>/.qwen/"
    assert seen[0] == seen[1] == expected + "QWEN.md ---"

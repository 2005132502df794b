"""The one rule of every sink (issue 39, item 2): a decoded value redacted string by
string before it is encoded or laid out — a JSON string inside it (a tool call's
arguments as the model APIs stream them) decoded first — and the ``-s`` stream's tool
calls redacted before their ``→ Bash:`` head is put in front."""

from __future__ import annotations

import json

import pytest

from pytest_ooda.backends.agent_output import open_stream
from pytest_ooda.redact import (
    DEEPER_THAN_BOUND,
    MAX_VALUE_DEPTH,
    REDACTED,
    Redactor,
    StreamRedactor,
    redact_value,
)
from tests.unit.test_redact import PLANTED

TOKEN = "tq8Rr2Zb5WcYp3Lk9Xv1Hw"
COMMAND = f"export SERVICE_API_TOKEN={TOKEN}\nls -la\n"


@pytest.mark.parametrize(("kind", "carrier", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_every_kind_in_a_json_encoded_tool_input_is_redacted(
    kind: str, carrier: str, secret: str
) -> None:
    # As Anthropic streams a tool call: its input is JSON text, its lines \n escapes.
    arguments = json.dumps({"command": f"{carrier}\ncat notes.txt", "description": "x"})
    event = {"delta": {"type": "input_json_delta", "partial_json": arguments}}
    clean = redact_value(event, Redactor({}))
    text = json.dumps(clean)
    assert all(line not in text for line in secret.splitlines() if len(line) >= 8), kind
    decoded = json.loads(clean["delta"]["partial_json"])
    assert decoded["command"].endswith("\ncat notes.txt")
    assert REDACTED in decoded["command"]


def test_a_json_string_without_secrets_is_kept_byte_for_byte() -> None:
    text = '{"command":  "ls",\n "n": [1, 2]}'
    assert redact_value({"arguments": text}, Redactor({})) == {"arguments": text}
    assert redact_value("[not json", Redactor({})) == "[not json"


def test_openai_arguments_and_keys_are_redacted_too() -> None:
    value = {"output": [{"type": "function_call", "arguments": json.dumps({"cmd": COMMAND})}]}
    clean = redact_value(value, Redactor({}))
    assert TOKEN not in json.dumps(clean)
    assert redact_value({f"DB_PASSWORD={TOKEN}": 1}, Redactor({})) == {f"DB_PASSWORD={REDACTED}": 1}


def test_a_value_nested_past_the_bound_is_left_out_and_said() -> None:
    deep: object = f"DB_PASSWORD={TOKEN}"
    for _ in range(100_000):
        deep = [deep]
    clean = redact_value(deep, Redactor({}))
    for _ in range(MAX_VALUE_DEPTH):
        assert isinstance(clean, list)
        [clean] = clean
    assert clean == DEEPER_THAN_BOUND
    nested = "[" * 5000 + "]" * 5000  # json.loads gives up: redacted as plain text
    assert redact_value(nested, Redactor({})) == nested


def _tool_use(name: str, **arguments: str) -> bytes:
    block = {"type": "tool_use", "id": "t1", "name": name, "input": arguments}
    return json.dumps({"type": "assistant", "message": {"content": [block]}}).encode() + b"\n"


def test_the_s_stream_redacts_a_tool_call_before_its_head() -> None:
    shown: list[bytes] = []
    redactor = Redactor({})
    watching = StreamRedactor(redactor, shown.append)
    stream = open_stream("claude-stream-json", redact=watching.redactor)
    for command in (COMMAND, f"DB_PASSWORD={TOKEN}", "machine h login u password " + TOKEN):
        watching(stream.feed_bytes(_tool_use("Bash", command=command)).encode())
    watching.flush()
    text = b"".join(shown).decode()
    assert TOKEN not in text
    assert f"→ Bash: export SERVICE_API_TOKEN={REDACTED}" in text
    assert "    ls -la" in text


def test_without_the_redactor_the_head_defeats_the_line_rule() -> None:
    # Why the head must come after: the line rule needs the assignment alone on its line.
    assert TOKEN in Redactor({})(f"→ Bash: export SERVICE_API_TOKEN={TOKEN}")

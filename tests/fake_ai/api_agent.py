#!/usr/bin/env python3
"""A fake agent CLI that talks to a model API, for the agent-replay tests.

It reads the prompt on stdin and has a two-turn conversation over Anthropic's Messages
API at ``$ANTHROPIC_BASE_URL`` (``x-api-key: $ANTHROPIC_API_KEY``, a fresh session id in
``metadata.user_id`` every run, streaming): the prompt, then "and now?" with the first
answer in between. It writes each answer to ``answers.txt`` in its working directory
(the "tool" effect a replay must reproduce), prints the last one and
``<promise>SUCCESS</promise>``, and exits 0; an API error is printed and exits 1.
Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
import uuid


def ask(messages: list[dict[str, str]], session: str) -> str:
    body = {
        "model": "fake-model",
        "max_tokens": 100,
        "stream": True,
        "metadata": {"user_id": json.dumps({"session_id": session})},
        "system": [{"type": "text", "text": f"You work in {os.getcwd()}."}],
        "messages": messages,
    }
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        text = ""
        for raw in answer:
            line = raw.decode().strip()
            if line.startswith("data: "):
                data = json.loads(line[6:])
                if data.get("type") == "content_block_delta":
                    text += data["delta"].get("text", "")
        return text


def main() -> int:
    prompt = sys.stdin.read()
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("no API key")
        return 1
    session = str(uuid.uuid4())
    messages = [{"role": "user", "content": prompt}]
    try:
        first = ask(messages, session)
        messages += [
            {"role": "assistant", "content": first},
            {"role": "user", "content": "and now?"},
        ]
        second = ask(messages, session)
    except urllib.error.HTTPError as error:
        print(f"API Error: {error.code} {error.read().decode(errors='replace')}")
        return 1
    with open("answers.txt", "a", encoding="utf-8") as handle:
        handle.write(first + "\n" + second + "\n")
    print(second)
    print("<promise>SUCCESS</promise>")
    return 0


if __name__ == "__main__":
    sys.exit(main())

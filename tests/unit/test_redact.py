"""Secrets never reach a file we write: 30+ realistic fake secrets planted in every
channel a recording has (output, prompt, context, file contents, file names, the
environment) and none survives. The values are assembled at run time from pieces, so
no secret-shaped literal sits in the repository."""

from __future__ import annotations

import itertools
import json
import random
import string
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import RedactSettings
from pytest_ooda.redact import REDACTED, Redactor, is_secret_name
from pytest_ooda.scenario import Scenario, ScenarioIteration, save_scenario

if TYPE_CHECKING:
    from pathlib import Path

_RNG = random.Random(20261124)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"


def _jwt() -> str:
    return (
        "eyJ" + _chars(30, URLSAFE) + "." + "eyJ" + _chars(40, URLSAFE) + "." + _chars(43, URLSAFE)
    )


def _pem(kind: str) -> str:
    body = "\n".join(_chars(64, B64) for _ in range(6))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


#: (what it is, the text that carries it, the secret part that must disappear)
PLANTED: list[tuple[str, str, str]] = []


def _plant(kind: str, carrier: str, secret: str) -> None:
    PLANTED.append((kind, carrier.replace("{}", secret), secret))


_plant("aws access key id", "key id {}", "AKIA" + _chars(16, UPPER))
_plant("aws session key id", "session {}", "ASIA" + _chars(16, UPPER))
_plant("aws secret key", "aws_secret_access_key = {}", _chars(40, B64))
_plant("aws secret key quoted", 'AWS_SECRET_ACCESS_KEY: "{}"', _chars(40, B64))
_plant("slack bot token", "token {}", "xoxb-" + "12345678901-" + _chars(24, LOWER))
_plant(
    "slack webhook",
    "posting to {}",
    "https://hooks.slack.com/services/T"
    + _chars(10, UPPER)
    + "/B"
    + _chars(10, UPPER)
    + "/"
    + _chars(24),
)
_plant("jwt", "id_token={}", _jwt())
_plant("pem rsa key", "key:\n{}\n", _pem("RSA "))
_plant("pem pkcs8 key", "{}", _pem(""))
_plant("openssh key", "{}", _pem("OPENSSH "))
_plant("basic auth header", "Authorization: Basic {}", _chars(28, B64) + "==")
_plant("bearer header", "Authorization: Bearer {}", _chars(40, URLSAFE))
_plant("postgres url password", "postgres://admin:{}@db.internal:5432/app", _chars(14))
_plant("https url password", "https://deploy:{}@git.example.org/repo.git", _chars(16))
_plant("stripe live key", "stripe {}", "sk_live_" + _chars(32))
_plant("stripe restricted key", "stripe {}", "rk_live_" + _chars(32))
_plant("hugging face token", "HF {}", "hf_" + _chars(34))
_plant("npm token", "//registry.npmjs.org/:_authToken={}", "npm_" + _chars(36))
_plant("gitlab token", "gitlab {}", "glpat-" + _chars(20, URLSAFE))
_plant("github classic token", "gh {}", "ghp_" + _chars(36))
_plant("github fine-grained token", "gh {}", "github_pat_" + _chars(22) + "_" + _chars(59))
_plant("anthropic key", "ANTHROPIC key {}", "sk-ant-api03-" + _chars(40, URLSAFE))
_plant("google api key", "maps {}", "AIza" + _chars(35, URLSAFE))
_plant("sendgrid key", "mail {}", "SG." + _chars(22, URLSAFE) + "." + _chars(43, URLSAFE))
_plant("twilio key", "twilio {}", "SK" + _chars(32, string.ascii_lowercase + string.digits))
_plant("telegram bot token", "bot {}", "123456789:" + _chars(35, URLSAFE))
_plant("password keyword", 'password = "{}"', _chars(18))
_plant("api key keyword", 'api_key: "{}"', _chars(32))
_plant("client secret keyword", 'client_secret="{}"', _chars(24))
_plant("azure storage key", "AccountKey={}", _chars(86, B64) + "==")
_plant("mailchimp key", "mc {}", _chars(32, string.ascii_lowercase + string.digits) + "-us12")
_plant("pypi token", "pypi {}", "pypi-AgEIcHlwaS5vcmc" + _chars(80, URLSAFE))
_plant("test pypi token", "testpypi {}", "pypi-AgENdGVzdC5weXBpLm9yZw" + _chars(70, URLSAFE))
_plant("twilio account sid", "sid {}", "AC" + _chars(32, string.ascii_lowercase + string.digits))
_plant(
    "discord bot token",
    "DISCORD {}",
    "M" + _chars(23, URLSAFE) + "." + _chars(6, URLSAFE) + "." + _chars(27, URLSAFE),
)
_plant("square access token", "square {}", "sq0atp-" + _chars(22, URLSAFE))
_plant("square oauth secret", "square {}", "sq0csp-" + _chars(43, URLSAFE))
_plant("artifactory api key", "rt {}", "AKCp" + _chars(69))
_plant("artifactory password", "rt {}", "AP6" + _chars(8, LOWER) + _chars(4, "0123456789"))
_plant(
    "softlayer url key",
    "GET https://api.softlayer.com/soap/v3/{}/SoftLayer_Account",
    _chars(64, LOWER),
)
# Quoted values assigned to a secret's name, in several languages' syntax.
_plant("json password", '{{"db_password": "{}"}}'.replace("{{", "{").replace("}}", "}"), _chars(15))
_plant("go secret", "clientSecret := `{}`", _chars(22))
_plant("php password", "$password = '{}';", _chars(12))
_plant("ruby secret key", "secret_key => '{}'", _chars(30))
_plant("keyword argument", "connect(host, password='{}')", _chars(14))
_plant("quoted random base64", 'blob = "{}"', _chars(40, B64))

# Unquoted credentials as ordinary files and tools hold them (issue 18, item 3): the
# detectors only see quoted ones.
_plant("dotenv password", "DB_PASSWORD={}", _chars(14))
_plant("dotenv exported token", "export API_TOKEN={}", _chars(20))
_plant("dotenv api key", "STRIPE_API_KEY={}  # live", _chars(24))
_plant("yaml password", "database:\n  password: {}\n  host: db", _chars(12))
_plant("yaml client secret", "oauth:\n  clientSecret: {}", _chars(30, URLSAFE))
_plant("netrc one line", "machine api.example.com login bob password {}", _chars(16))
_plant("netrc lines", "machine git.example.org\n  login ci\n  password {}\n", _chars(18))
_plant(
    "docker config auths",
    '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}'.replace("{{", "{").replace(
        "}}", "}"
    ),
    _chars(20, B64) + "=",
)
_plant(
    "k8s secret data",
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  tls.crt: {}\n",
    _chars(40, B64) + "==",
)
_plant("connection string password", "Server=db;Database=app;User Id=sa;Password={};", _chars(13))
_plant("odbc pwd", "DRIVER={{ODBC}};UID=app;PWD={};".replace("{{ODBC}}", "x"), _chars(11))
_plant("pgpass style env", "PGPASSWORD={}", _chars(10))

#: Environment variables whose values are secrets by name only (no recognisable shape).
ENV_SECRETS = {
    "DB_PASSWD": _chars(12),
    "SENTRY_DSN": "https://" + _chars(32, LOWER) + "@o1.ingest.sentry.io/42",
    "GH_PAT": _chars(30),
    "MY_SERVICE_CREDENTIALS": _chars(20),
    "PROXY_AUTH": _chars(16),
    "SMTP_PWD": _chars(10),
}

ORDINARY = textwrap.dedent(
    """\
    Ran `python -m pytest -q`: 12 passed, 1 failed in 3.2s.
    Commit 3f9c2b1d7e5a4c6b8d0f2e4a6c8b0d2f4e6a8c0b touched src/app.py:14.
    The config key `max_iterations` is 5; PATH=/usr/local/bin:/usr/bin.
    max_tokens: 4096
    sort_key: created_at
    author: somebody123
    tokenizer: bert-base-uncased
    password = os.environ["DB_PASSWORD"]
    token = settings.API_TOKEN
    secret_key = get_secret_key()
    DB_PASSWORD=${DB_PASSWORD}
    password: null
    The password field is required, see the docs.
    kind: ConfigMap
    data:
      greeting: hello-world
    pass_rule = "majority"
    if token == "struct": construct()
    ACCESS_KEY = 'aws_access_key_id'
    password_field = "Enter your password"
    digest = "3f9c2b1d7e5a4c6b8d0f2e4a6c8b0d2f4e6a8c0b"
    path = "src/pytest_ooda/backends/tool_calls.py"
    <promise>SUCCESS</promise>
    """
)


def test_at_least_thirty_kinds_are_planted() -> None:
    assert len(PLANTED) + len(ENV_SECRETS) >= 30
    assert len({kind for kind, _, _ in PLANTED}) == len(PLANTED)


@pytest.mark.parametrize(("kind", "carrier", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_each_planted_secret_is_redacted(kind: str, carrier: str, secret: str) -> None:
    redacted = Redactor({})(f"before\n{carrier}\nafter")
    assert secret not in redacted
    assert REDACTED in redacted
    assert redacted.startswith("before\n")
    assert redacted.endswith("\nafter")


def test_environment_secrets_are_redacted_by_their_names() -> None:
    redactor = Redactor(ENV_SECRETS)
    text = "\n".join(f"value of {name}: {value}" for name, value in ENV_SECRETS.items())
    redacted = redactor(text)
    for value in ENV_SECRETS.values():
        assert value not in redacted


def test_ordinary_text_is_left_alone() -> None:
    env = {"PATH": "/usr/local/bin:/usr/bin", "PWD": "/work/project", "HOME": "/home/me"}
    assert Redactor(env)(ORDINARY) == ORDINARY


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GH_PAT", True),
        ("DB_PASSWD", True),
        ("SENTRY_DSN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("PROXY_AUTH", True),
        ("PATH", False),
        ("PWD", False),
        ("GIT_AUTHOR_NAME", False),
        ("SSH_AUTH_SOCK", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_config_patterns_and_names_extend_the_rules() -> None:
    redactor = Redactor(
        {"INTERNAL_ID": "corp-7731-zeta"},
        extra_patterns=[r"ACME-[0-9]{6}"],
        extra_env_names=["INTERNAL_ID"],
    )
    redacted = redactor("ticket ACME-123456 for corp-7731-zeta")
    assert redacted == f"ticket {REDACTED} for {REDACTED}"


def test_no_planted_secret_reaches_a_saved_recording(tmp_path: Path) -> None:
    secrets = [secret for _, _, secret in PLANTED] + list(ENV_SECRETS.values())
    carriers = [carrier for _, carrier, _ in PLANTED]
    half = len(carriers) // 2
    iterations = (
        ScenarioIteration(
            output="\n".join(carriers[:half]),
            prompt="\n".join(carriers[half:]),
            files={
                "notes/secrets.txt": "\n".join(carriers),
                "ghp_" + PLANTED[19][2][4:] + ".txt": "a token as a file name",
                "config/env.txt": "\n".join(f"{k}={v}" for k, v in ENV_SECRETS.items()),
            },
        ),
    )
    scenario = Scenario(
        procedure="p",
        name="leak",
        path=tmp_path / "leak.yml",
        context=(carriers[0], ENV_SECRETS["GH_PAT"]),
        iterations=iterations,
    )
    written = save_scenario(
        scenario, env=ENV_SECRETS, redact=RedactSettings(patterns=(r"ACME-\d+",))
    )
    text = written.read_text(encoding="utf-8")
    survivors = [secret for secret in secrets if secret in text]
    assert survivors == []
    assert "notes/secrets.txt" in text  # ordinary names stay
    assert "a token as a file name" in text  # the file is kept under a redacted name


AGENT = """\
import json, os, pathlib, sys
sys.stdin.read()
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
for name, text in plan["files"].items():
    path = pathlib.Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
print(plan["output"])
print("<promise>SUCCESS</promise>")
"""


def test_ooda_run_record_keeps_no_secret_from_any_channel(tmp_path: Path) -> None:
    carriers = [carrier for _, carrier, _ in PLANTED]
    plan = {
        "output": "\n".join(carriers) + "\n" + "\n".join(ENV_SECRETS.values()),
        "files": {
            "leak.txt": "\n".join(carriers),
            "ghp_" + PLANTED[19][2][4:]: "file named after a token",
            "env.txt": "\n".join(ENV_SECRETS.values()),
        },
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ooda-config.yml").write_text(
        "procedures:\n  p:\n    act:\n"
        "      - content: 'Do it, say <promise>SUCCESS</promise>. Context follows.'\n"
    )
    env = {"PATH": "/usr/bin:/bin", **ENV_SECRETS, "OODA_CONFIG_HOME": str(tmp_path / "none")}
    ai_cmd = f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'plan.json'}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_ooda", "run", "p", "--ai-cmd", ai_cmd,
         "--record", "rec.yml", "--context", carriers[3], "--quiet"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": ":".join(sys.path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "rec.yml").read_text(encoding="utf-8")
    secrets = [secret for _, _, secret in PLANTED] + list(ENV_SECRETS.values())
    assert [secret for secret in secrets if secret in text] == []
    assert "leak.txt" in text
    assert "file named after a token" in text


def test_redaction_loads_no_third_party_library() -> None:
    # Its rules are this module's own patterns, compiled when it is imported: no
    # detector registry, no HTTP library, and the warnings machinery left as it was.
    import subprocess as sp

    code = (
        "import sys, warnings\n"
        "before = warnings.showwarning\n"
        "from pytest_ooda.redact import Redactor\n"
        "assert Redactor({})('password = \"abcdefgh12345\"') == 'password = \"<redacted>\"'\n"
        "print(warnings.showwarning is before,"
        " sorted(m for m in ('requests', 'urllib3', 'detect_secrets') if m in sys.modules))\n"
    )
    done = sp.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True []"


def test_a_value_found_by_its_name_is_redacted_where_it_appears_again() -> None:
    value = _chars(16)
    text = f'api_key = "{value}"\nthen curl -H "X-Key: {value}" and echo {value}\n'
    assert Redactor({})(text) == (
        'api_key = "<redacted>"\nthen curl -H "X-Key: <redacted>" and echo <redacted>\n'
    )


def test_a_long_run_of_name_characters_is_scanned_in_linear_time() -> None:
    # A megabyte of one identifier-like run must not make the name-led rule backtrack
    # from every position of it.
    text = "a" * 1_000_000 + ' = "x"\n' + "b." * 200_000
    assert Redactor({})(text) == text


def test_a_stream_is_redacted_line_by_line_as_it_arrives() -> None:
    from pytest_ooda.redact import StreamRedactor

    shown: list[bytes] = []
    stream = StreamRedactor(Redactor(ENV_SECRETS), shown.append)
    text = "".join(f"{carrier}\n" for _, carrier, _ in PLANTED)
    text += "".join(f"{name}={value}\n" for name, value in ENV_SECRETS.items()) + ORDINARY
    data = text.encode()
    # In chunks that cut lines (and a multi-byte character) anywhere.
    cuts = sorted(_RNG.sample(range(1, len(data)), 300))
    for start, end in itertools.pairwise([0, *cuts, len(data)]):
        stream(data[start:end])
        # Nothing is shown before its line is whole.
        assert all(piece.endswith(b"\n") for piece in shown)
    stream.flush()
    out = b"".join(shown).decode()
    leaked = [kind for kind, _, secret in PLANTED if secret in out]
    leaked += [name for name, value in ENV_SECRETS.items() if value in out]
    assert leaked == []
    assert ORDINARY.rstrip("\n") in out


def test_a_stream_shows_a_last_line_without_a_newline_at_flush() -> None:
    from pytest_ooda.redact import StreamRedactor

    shown: list[bytes] = []
    stream = StreamRedactor(Redactor({}), shown.append)
    stream(b"working on it\nexport API_TOKEN=" + b"abcdefghij0123456789")
    assert b"".join(shown) == b"working on it\n"
    stream.flush()
    assert b"".join(shown) == b"working on it\nexport API_TOKEN=<redacted>"
    # A key block cut off by the end of the stream is still not shown.
    stream(b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n")
    stream.flush()
    assert b"".join(shown).endswith(b"<redacted><redacted>\n")
    assert b"MIIEowIBAAKCAQEA" not in b"".join(shown)


def test_a_key_block_cut_short_ends_at_the_first_line_that_is_no_key() -> None:
    from pytest_ooda.redact import StreamRedactor

    shown: list[bytes] = []
    stream = StreamRedactor(Redactor({}), shown.append)
    # A display that shows only the first lines of a command cuts a key block short:
    # what follows is shown again, the key never.
    stream(b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n")
    stream(b"    ... (40 more lines)\nDone. What I found:\n")
    assert b"".join(shown) == b"<redacted>\n    ... (40 more lines)\nDone. What I found:\n"

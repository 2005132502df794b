"""Who may read ``ooda view``'s pages (issue 39, item 3): the Host header must name the
server (a DNS-rebinding page says its own name), and off loopback a token, given once in
the URL and then kept in a cookie."""

from __future__ import annotations

import pytest

from pytest_ooda.view import Access, exposure_warning, is_loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("viewer.example", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"]
)
def test_a_loopback_server_answers_its_own_names(host: str) -> None:
    access = Access.for_address("127.0.0.1", 8000)
    assert access.token is None
    assert access.check("/", host, None) is None


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:8000",  # DNS rebinding: the attacker's name pointed at 127.0.0.1
        "evil.example",
        "127.0.0.1:8001",  # another port: another origin
        "localhost",  # no port, and the server is not on 80
        "127.0.0.1:80x",
        "[::1",
        "::1:8000",
        "",
        "localhost.evil.example:8000",
    ],
)
def test_a_foreign_host_is_refused(host: str) -> None:
    refused = Access.for_address("127.0.0.1", 8000).check("/", host, None)
    assert refused is not None
    assert refused.status == 403
    assert "answers only requests addressed to it" in refused.text


def test_a_request_without_a_host_is_refused() -> None:
    refused = Access.for_address("127.0.0.1", 8000).check("/", None, None)
    assert refused is not None
    assert refused.status == 400


def test_port_80_may_be_left_out() -> None:
    assert Access.for_address("127.0.0.1", 80).check("/", "localhost", None) is None


def test_off_loopback_a_token_is_made_and_any_host_taken_with_it() -> None:
    access = Access.for_address("0.0.0.0", 8000)
    assert access.token is not None
    assert len(access.token) >= 32
    assert access.url("http://0.0.0.0:8000/") == f"http://0.0.0.0:8000/?token={access.token}"
    # Any Host (the server cannot know every name it is reached by), but no token: 401.
    refused = access.check("/", "viewer.example:8000", None)
    assert refused is not None
    assert refused.status == 401
    assert "token" in refused.text
    # Two servers make two tokens.
    assert Access.for_address("0.0.0.0", 8000).token != access.token


def test_the_token_in_the_url_sets_a_cookie_and_leaves_the_address() -> None:
    access = Access.for_address("192.168.1.5", 8000)
    assert access.token is not None
    target = f"/session/a?scenario=greet%2Fhello&token={access.token}"
    sign_in = access.check(target, "192.168.1.5:8000", None)
    assert sign_in is not None
    assert sign_in.status == 303
    headers = dict(sign_in.headers)
    assert headers["Location"] == "/session/a?scenario=greet%2Fhello"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"ooda_view_8000={access.token};")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    # The cookie lets in every page; a wrong one or a wrong token does not.
    jar = f"other=1; ooda_view_8000={access.token}"
    assert access.check("/run/x", "192.168.1.5:8000", jar) is None
    wrong = access.check("/", "192.168.1.5:8000", "ooda_view_8000=guess")
    assert wrong is not None
    assert wrong.status == 401
    guessed = access.check("/?token=guess", "192.168.1.5:8000", None)
    assert guessed is not None
    assert guessed.status == 401
    # A bound address other than the wildcard still checks the Host.
    foreign = access.check("/", "evil.example:8000", jar)
    assert foreign is not None
    assert foreign.status == 403


def test_a_token_on_loopback_when_asked() -> None:
    access = Access.for_address("127.0.0.1", 8000, token=True)
    assert access.token is not None
    refused = access.check("/", "localhost:8000", None)
    assert refused is not None
    assert refused.status == 401


def test_an_unreadable_cookie_header_is_no_cookie() -> None:
    access = Access.for_address("0.0.0.0", 8000)
    refused = access.check("/", "h:8000", 'ooda_view_8000="unterminated; \x00')
    assert refused is not None
    assert refused.status == 401


def test_serving_beyond_this_machine_warns() -> None:
    for host in ("127.0.0.1", "::1", "[::1]", "localhost"):
        assert exposure_warning(host) is None
    warning = exposure_warning("0.0.0.0")
    assert warning is not None
    assert "reachable from other machines" in warning
    assert "token" in warning
    assert "unencrypted" in warning

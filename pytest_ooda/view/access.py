"""Who may read ``ooda view``'s pages: the transcripts it serves hold a project's code,
its prompts and whatever the agent saw, so only the user who started it may read them.

Two rules, both checked before any page is rendered:

- **The Host header names this server.** A web page the user visits elsewhere can point
  its own name at 127.0.0.1 (DNS rebinding) and then read the viewer's pages as its
  own origin; its requests still say ``Host: its-name``. A request is answered only when
  its Host is the bound address or a loopback name (``localhost``, ``127.0.0.1``,
  ``[::1]``), with the bound port. A server bound to every address (``0.0.0.0``,
  ``::``) cannot know every name it is reached by and takes any Host — the token guards
  it.
- **Off loopback, a token.** A server listening on an address other machines reach
  (``--host 0.0.0.0``) — or asked to (``--token``: other users of the same machine
  reach 127.0.0.1 too) — makes a random token, printed once in its URL
  (``/?token=…``). The first visit with it sets a cookie (``HttpOnly``,
  ``SameSite=Strict``, named after the port so two viewers do not overwrite each other's)
  and is redirected to the same page without the token in its address; a request with
  neither is refused (401). The pages still travel as plain HTTP: ``docs/security.md``
  says so.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["Access", "Refusal", "exposure_warning", "is_loopback"]

#: Names a loopback server answers to besides its own address.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: Addresses that listen on every interface.
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str) -> str | None:
    """What to tell the user who serves the pages on ``host`` beyond this machine
    (``None`` on loopback)."""
    if is_loopback(host.strip("[]")):
        return None
    return (
        f"warning: {host} is reachable from other machines; the pages ask for the token in "
        "the URL above (keep it to yourself) and travel unencrypted (plain HTTP): on a "
        "shared network, prefer the default 127.0.0.1 and an SSH tunnel"
    )


def _host_and_port(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` of a Host header; ``None`` when unreadable."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else ""
    elif value.count(":") > 1:
        return None  # an IPv6 address without brackets is not a valid Host
    else:
        name, _, port_text = value.partition(":")
    if not name:
        return None
    if not port_text:
        return name, None
    if not port_text.isdigit():
        return None
    return name, int(port_text)


@dataclass(frozen=True)
class Refusal:
    """What a request that may not read the pages gets instead: a status, a short text,
    and the headers to send with it (a redirect's ``Location`` and ``Set-Cookie``)."""

    status: int
    text: str
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Access:
    """The rules for one server: the Host names it answers to (empty: any), its port,
    and its token (``None`` on loopback)."""

    names: frozenset[str]
    port: int
    token: str | None

    @classmethod
    def for_address(cls, host: str, port: int, *, token: bool = False) -> Access:
        """The rules for a server bound to ``host``:``port`` (the port it really got);
        ``token`` asks for one on loopback too (a machine shared with other users)."""
        bound = host.strip("[]").lower()
        names = frozenset() if bound in WILDCARDS else LOOPBACK_NAMES | {bound}
        made = secrets.token_urlsafe(24) if token or not is_loopback(bound) else None
        return cls(names, port, made)

    @property
    def cookie(self) -> str:
        return f"ooda_view_{self.port}"

    def url(self, base: str) -> str:
        """The URL to print: ``base``, with the token when there is one."""
        return f"{base}?token={self.token}" if self.token else base

    def check(self, target: str, host: str | None, cookie: str | None) -> Refusal | None:
        """``None`` when the request for ``target`` may be answered, else what to send.
        ``host`` and ``cookie`` are the request's headers of those names."""
        refused = self._check_host(host)
        if refused is not None or self.token is None:
            return refused
        if self._has_cookie(cookie or ""):
            return None
        parts = urlsplit(target)
        query = parse_qsl(parts.query, keep_blank_values=True)
        given = [value for key, value in query if key == "token"]
        if not given or not hmac.compare_digest(given[-1].encode(), self.token.encode()):
            return Refusal(
                HTTPStatus.UNAUTHORIZED,
                "this viewer needs its token: open the URL `ooda view` printed when it started\n",
            )
        rest = urlencode([(key, value) for key, value in query if key != "token"])
        location = urlunsplit(("", "", parts.path or "/", rest, ""))
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        return Refusal(
            HTTPStatus.SEE_OTHER,
            "signed in; go on to the page\n",
            (("Location", location), ("Set-Cookie", cookie)),
        )

    def _check_host(self, value: str | None) -> Refusal | None:
        if value is None:
            return Refusal(HTTPStatus.BAD_REQUEST, "a request needs a Host header\n")
        if not self.names:
            return None
        found = _host_and_port(value)
        if found is not None:
            name, port = found
            if name in self.names and (port == self.port or (port is None and self.port == 80)):
                return None
        return Refusal(
            HTTPStatus.FORBIDDEN,
            "refused: this viewer answers only requests addressed to it "
            f"(Host: localhost:{self.port}), not {value[:100]!r}\n",
        )

    def _has_cookie(self, header: str) -> bool:
        assert self.token is not None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header)
        except CookieError:
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self.token.encode()
        )

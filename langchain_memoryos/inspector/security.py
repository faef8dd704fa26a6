"""The inspector's two locks: the per-run token and the loopback ``Host`` (an ASGI middleware, no starlette import).

* **Token.** Every request carries the token the server printed at start:
  first in the URL it printed (``?token=...``), which answers with a
  redirect that keeps it in a ``SameSite=Strict``, ``HttpOnly`` cookie and
  drops it from the address bar; then in that cookie. A POST must also
  carry it in its form (a page of another site can neither read it nor
  send the cookie). Without it: 403.
* **Host.** The ``Host`` header must name the loopback address the server
  listens on (``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT``), so a
  DNS-rebinding page (``evil.example`` resolving to 127.0.0.1) is refused: 400.

Example:
    >>> checker = HostCheck(port=8765)
    >>> checker.allowed("127.0.0.1:8765"), checker.allowed("localhost:8765"), checker.allowed("evil.example:8765")
    (True, True, False)
    >>> checker.allowed("127.0.0.1:9999"), HostCheck(port=None).allowed("localhost:9999")
    (False, True)
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from langchain_memoryos.errors import InvalidInputError

__all__ = ["COOKIE", "HostCheck", "TokenGuard", "new_token"]

#: The cookie the token is kept in.
COOKIE = "memoryos_inspector"
#: The names the loopback address goes by.
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    """A fresh per-run token (32 random bytes, URL-safe).

    Example:
        >>> len(new_token()) >= 43, new_token() != new_token()
        (True, True)
    """
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class HostCheck:
    """Which ``Host`` headers name the loopback address the server listens on.

    Args:
        port: the server's port (``None``: any port, for an app mounted in another server).

    Example:
        >>> HostCheck(port=80).allowed("localhost"), HostCheck(port=80).allowed("127.0.0.1:80")
        (True, True)
    """

    port: int | None = None

    def allowed(self, host: str) -> bool:
        """Whether a ``Host`` header value names the loopback address (and the port, when one is set)."""
        host = host.strip().lower()
        if host.startswith("["):
            name, _, rest = host.partition("]")
            name, port = name + "]", rest.removeprefix(":")
        else:
            name, _, port = host.partition(":")
        if name not in LOOPBACK:
            return False
        if self.port is None:
            return True
        return port == str(self.port) or (not port and self.port == 80)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


def _cookie_token(scope: Scope) -> str:
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(_header(scope, b"cookie"))
    except Exception:  # noqa: BLE001 - a malformed cookie header carries no token
        return ""
    morsel = cookie.get(COOKIE)
    return morsel.value if morsel is not None else ""


class TokenGuard:
    """ASGI middleware: refuse any request without the run's token or with a ``Host`` that is not loopback.

    Args:
        app: the application behind it.
        token: the run's token.
        hosts: which ``Host`` headers are accepted.

    A request with ``?token=<token>`` gets a redirect to the same URL without
    it and the cookie; a POST's form must hold ``token=<token>`` too (the pages'
    forms do), which the guard checks before the app reads the body.

    Example:
        >>> import asyncio
        >>> async def app(scope, receive, send):
        ...     await send({"type": "http.response.start", "status": 200, "headers": []})
        ...     await send({"type": "http.response.body", "body": b"ok"})
        >>> sent = []
        >>> async def send(message): sent.append(message)
        >>> async def receive(): return {"type": "http.request", "body": b""}
        >>> scope = {"type": "http", "method": "GET", "path": "/", "query_string": b"",
        ...          "headers": [(b"host", b"127.0.0.1:8765")]}
        >>> asyncio.run(TokenGuard(app, "s3cret", HostCheck(8765))(scope, receive, send))
        >>> sent[0]["status"]
        403
    """

    def __init__(self, app: ASGIApp, token: str, hosts: HostCheck) -> None:
        self.app = app
        self.token = token
        self.hosts = hosts

    def _is_token(self, value: str) -> bool:
        return bool(value) and hmac.compare_digest(value.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then pass it on (or answer 400 / 403 / a redirect)."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if not self.hosts.allowed(_header(scope, b"host")):
            await _plain(send, 400, "Bad Host header: the inspector answers only to its loopback address.")
            return
        query = parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == "token"]
        if given:
            if not self._is_token(given[-1]):
                await _plain(send, 403, "Wrong token: open the URL that 'memoryos serve' printed.")
                return
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            root, path = str(scope.get("root_path", "")), str(scope.get("path", "/"))
            full = path if path.startswith(root) else root + path  # ASGI: the path includes the mount's root path
            target = full + (f"?{rest}" if rest else "")
            await _redirect(send, target, self.token, scope)
            return
        if not self._is_token(_cookie_token(scope)):
            await _plain(send, 403, "No token: open the URL that 'memoryos serve' printed (it holds the token).")
            return
        if scope.get("method") == "POST":
            body = await _body(receive)
            form = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
            if not any(key == "token" and self._is_token(value) for key, value in form):
                await _plain(send, 403, "A change needs the form's token: use the inspector's own forms.")
                return
            receive = _replay(body)
        await self.app(scope, receive, send)


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = bytes(message.get("body", b""))
        total += len(chunk)
        if total > 1_000_000:
            raise InvalidInputError("inspector: a form of more than 1 MB")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, target: str, token: str, scope: Scope) -> None:
    path = scope.get("root_path", "") or "/"
    cookie = f"{COOKIE}={token}; Path={path}; HttpOnly; SameSite=Strict"
    headers = [
        (b"location", target.encode("latin-1", "replace")),
        (b"set-cookie", cookie.encode()),
        (b"content-length", b"0"),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})

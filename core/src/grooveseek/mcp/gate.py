"""The HTTP gate in front of the Streamable HTTP app: Host and Origin validation against DNS rebinding,
the ``/healthz`` rules, and the session cap's answer (SPEC R7.46-R7.51, R12.2).

GrooveSeek checks Host and Origin itself, in one ASGI middleware, and hands the SDK no allow-lists:
the SDK answers a bad Host with 421 and would check ``/mcp`` only, while GrooveSeek needs 403 with a
fixed body (R7.49), malformed-Host rules (R7.46), entry-without-port semantics for both lists and a
``/healthz`` whose Host check is configurable (R7.48). Host is checked before Origin, and a refused
request never reaches the SDK, so it never takes a session seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

import attrs
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import ConfigError

log = logging.getLogger("grooveseek.mcp.http")

MCP_PATH = "/mcp"
HEALTHZ_PATH = "/healthz"
UI_PATH = "/ui"  # the search page and everything under it (grooveseek.web), gated like /mcp
HOST_REFUSED = "Forbidden: Host header is not allowed"
ORIGIN_REFUSED = "Forbidden: Origin header is not allowed"
SEAT_RETRY_AFTER_SECONDS = 30
REFUSAL_LOG_INTERVAL = 60.0

# A DNS name or IPv4 literal: letters, digits, '-', '.', '_' (some resolvers allow it). Userinfo
# ("user@"), spaces and anything else make the header malformed.
_REG_NAME = re.compile(r"[A-Za-z0-9._-]+")
_LOOPBACK_NAMES = frozenset({"localhost"})


@attrs.frozen
class HostPort:
    """A parsed ``host[:port]``; ``host`` is lowercase, IPv6 literals keep their brackets."""

    host: str
    port: int | None

    @property
    def is_loopback(self) -> bool:
        if self.host in _LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False


def parse_host(value: str) -> HostPort | None:
    """Parse a Host header (or an ``allowed_hosts`` entry); None when malformed (R7.46).

    Refused: empty values, userinfo (``user:pw@h``, ``@h``, ``h@other``), a port that is not 1-5
    digits or is above 65535 (``localhost:abc``, ``127.0.0.1:65536``), an empty port, unbracketed
    IPv6, and characters outside a host name.
    """
    if not value or value != value.strip() or "@" in value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    else:
        host, sep, port_text = value.partition(":")
        rest = sep + port_text
        if not _REG_NAME.fullmatch(host):
            return None
    if not rest:
        return HostPort(host.lower(), None)
    port_text = rest[1:]
    if not rest.startswith(":") or not (port_text.isascii() and port_text.isdigit()) or len(port_text) > 5:
        return None
    port = int(port_text)
    return HostPort(host.lower(), port) if port <= 65535 else None


@attrs.frozen
class Origin:
    """A parsed origin ``scheme://host[:port]``; scheme and host lowercase."""

    scheme: str
    address: HostPort


def parse_origin(value: str) -> Origin | None:
    """Parse an Origin header or an ``allowed_origins`` entry; None when it is not ``scheme://host[:port]``."""
    scheme, sep, rest = value.partition("://")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return None
    address = parse_host(rest.removesuffix("/"))
    return Origin(scheme.lower(), address) if address is not None else None


def _matches(entries: Sequence[HostPort], got: HostPort) -> bool:
    # An entry without a port matches any port; one with a port only that port (R7.46, R7.47).
    return any(e.host == got.host and (e.port is None or e.port == got.port) for e in entries)


@attrs.frozen
class GatePolicy:
    """What the gate enforces. ``hosts`` / ``origins`` None turns that check off (``[]`` in the config)."""

    hosts: tuple[HostPort, ...] | None
    origins: tuple[Origin, ...] | None
    healthz_public: bool = True

    @classmethod
    def from_config(
        cls,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str] | None,
        *,
        port: int,
        healthz_public: bool,
    ) -> GatePolicy:
        """Parse the two allow-lists; ``allowed_origins`` None means the loopback origins of ``port``.

        Raises:
            ConfigError: an entry that is not a host (with optional port) or an origin with a scheme.
        """
        hosts = []
        for entry in allowed_hosts:
            parsed = parse_host(entry)
            if parsed is None:
                raise ConfigError(
                    f'[transport.http].allowed_hosts entry "{entry}" is not a host name or address with an '
                    'optional port; write for example "localhost", "127.0.0.1:3100" or "[::1]"'
                )
            hosts.append(parsed)
        if allowed_origins is None:
            allowed_origins = [f"http://{h}:{port}" for h in ("localhost", "127.0.0.1", "[::1]")]
        origins = []
        for entry in allowed_origins:
            parsed_origin = parse_origin(entry)
            if parsed_origin is None:
                raise ConfigError(
                    f'[transport.http].allowed_origins entry "{entry}" is not an origin; write '
                    'scheme://host[:port], for example "http://localhost:3100"'
                )
            origins.append(parsed_origin)
        return cls(
            hosts=tuple(hosts) if allowed_hosts else None,
            origins=tuple(origins) if allowed_origins else None,
            healthz_public=healthz_public,
        )

    def host_allowed(self, value: str | None) -> bool:
        if self.hosts is None:
            return True
        parsed = parse_host(value) if value is not None else None
        return parsed is not None and _matches(self.hosts, parsed)

    def origin_allowed(self, value: str | None) -> bool:
        # No Origin header: not a browser cross-origin request (RFC 6454), so it passes (R7.47).
        if value is None or self.origins is None:
            return True
        parsed = parse_origin(value)
        if parsed is None:
            return False
        return any(o.scheme == parsed.scheme and _matches([o.address], parsed.address) for o in self.origins)


class RefusalLog:
    """At most one log line a minute per gate, carrying how many refusals it stands for (R7.49).

    The first refusal after a quiet minute is logged at once; later ones are held back and counted.
    A held-back count must not depend on more traffic arriving to be written, so ``flush_due``
    (called by the gate's periodic check) writes it once its minute has passed, and ``close``
    writes whatever is left when the server stops.
    """

    def __init__(self, what: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None
        self._pending = 0
        self._latest: str | None = None

    def refused(self, value: str | None) -> bool:
        """Count one refusal; log it (and returns True) unless a line went out in the last minute."""
        with self._lock:
            self._pending += 1
            self._latest = value
            return self._emit(force=False)

    def flush_due(self) -> bool:
        """Log the held-back count if its minute has passed; True when a line was written."""
        with self._lock:
            return self._emit(force=False)

    def close(self) -> bool:
        """Log the held-back count now, whatever the interval: after this there is no later line."""
        with self._lock:
            return self._emit(force=True)

    def _emit(self, *, force: bool) -> bool:
        # Called with the lock held, so two threads cannot both write the same count.
        if not self._pending:
            return False
        now = self._clock()
        if not force and self._last is not None and now - self._last < REFUSAL_LOG_INTERVAL:
            return False
        count, self._pending, self._last = self._pending, 0, now
        shown = "(missing)" if self._latest is None else repr(self._latest)  # logged, never echoed
        log.warning(
            "refused %d request(s) whose %s header is not allowed; latest: %s", count, self.what, shown
        )
        return True


async def _plain(send: Send, status: int, body: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    data = body.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class Gate:
    """ASGI middleware: Host, then Origin, on ``/mcp`` and ``/ui``; Host on ``/healthz`` unless it is public.

    It also sees the server's lifespan: while the server runs, a background task writes held-back
    refusal counts once their minute has passed, and shutdown writes what is left (R7.49).
    """

    def __init__(
        self,
        app: ASGIApp,
        policy: GatePolicy,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.app = app
        self.policy = policy
        self.host_log = RefusalLog("Host", clock)
        self.origin_log = RefusalLog("Origin", clock)
        self._sleep = sleep

    def flush_due(self) -> None:
        """Write any held-back refusal count whose minute has passed."""
        self.host_log.flush_due()
        self.origin_log.flush_due()

    def close(self) -> None:
        """Write every held-back refusal count; for shutdown."""
        self.host_log.close()
        self.origin_log.close()

    async def _flush_periodically(self) -> None:
        while True:
            await self._sleep(REFUSAL_LOG_INTERVAL)
            self.flush_due()

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The lifespan call lasts from startup to shutdown, so it brackets the periodic check. The
        # counts are written when the shutdown message arrives, not after the call returns: by then
        # the server may be tearing its event loop down.
        flusher = asyncio.create_task(self._flush_periodically())

        async def stop() -> None:
            if not flusher.done():
                flusher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await flusher
            self.close()

        async def watched_receive() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await stop()
            return message

        try:
            await self.app(scope, watched_receive, send)
        finally:
            await stop()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        headers = Headers(scope=scope)
        gated = path == MCP_PATH or is_ui_path(path)
        if gated or (path == HEALTHZ_PATH and not self.policy.healthz_public):
            host = headers.get("host")
            if not self.policy.host_allowed(host):
                self.host_log.refused(host)
                await _plain(send, 403, HOST_REFUSED)
                return
        if gated:
            origin = headers.get("origin")
            if not self.policy.origin_allowed(origin):
                self.origin_log.refused(origin)
                await _plain(send, 403, ORIGIN_REFUSED)
                return
            if path == MCP_PATH and scope["method"] == "POST" and "mcp-session-id" not in headers:
                send = _seat_refusal_as_429(send)
        await self.app(scope, receive, send)


def is_ui_path(path: str) -> bool:
    """``/ui`` and every path below it: the page routes get the same Host and Origin checks as ``/mcp``."""
    return path == UI_PATH or path.startswith(UI_PATH + "/")


def _seat_refusal_as_429(send: Send) -> Send:
    """R7.51: a full session table answers 429 with ``Retry-After: 30``.

    The SDK's session manager enforces ``max_sessions`` (admission under its lock, so concurrent
    initializes cannot overshoot) and answers 503; on a session-opening POST nothing else answers 503,
    so the status is rewritten here.
    """

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 503:
            headers = [*message.get("headers", []), (b"retry-after", str(SEAT_RETRY_AFTER_SECONDS).encode())]
            message = {**message, "status": 429, "headers": headers}
        await send(message)

    return wrapped

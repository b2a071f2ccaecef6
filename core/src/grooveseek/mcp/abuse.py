"""HTTP abuse resistance below the ASGI app: read deadlines, a connection cap, quiet failure logs.

uvicorn (h11) waits forever for a request's headers and accepts connections until the process
runs out of descriptors; Python's accept loop then reports every failed ``accept()`` with a full
traceback, thousands a second. A few hundred half-sent requests (slowloris) stopped all service.
So, in uvicorn's own protocol class:

* **Read deadlines.** A request's headers must arrive within ``HEADER_READ_SECONDS`` of the
  connection opening (or of the first byte of a kept-alive connection's next request), and its
  body within ``BODY_READ_SECONDS`` of the headers; otherwise the connection is closed.
* **A connection cap** (``connection_cap``: 256, lower when the open-file limit is low). Past it,
  a new connection takes the place of the oldest one that is not in the middle of a request
  (waiting for headers, or idle between requests), so a flood of half-open connections cannot
  lock out a client that sends its request at once: ``/healthz`` stays answerable. When every
  connection is serving a request, the new one gets ``503`` and is closed.
* **Counted logs.** Failed ``accept()`` calls, connections refused at the cap and sessions
  refused past ``[http].max_sessions`` are each logged at most once per ``LOG_INTERVAL_SECONDS``
  with a count, never as a traceback per failure.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("grooveseek.mcp")

HEADER_READ_SECONDS = 10.0
BODY_READ_SECONDS = 60.0
MAX_CONNECTIONS = 256
FD_RESERVE = 64  # descriptors kept for the index, the model, logs and the listening socket
LOG_INTERVAL_SECONDS = 60.0
_ACCEPT_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_SERVICE_UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 19\r\nconnection: close\r\n\r\nService Unavailable"
)
SESSION_REFUSAL_PREFIX = "Refusing to open a new session"


@attrs.frozen
class ConnectionLimits:
    """The per-server limits; ``cap`` None means ``connection_cap()``. Tests pass smaller ones."""

    cap: int | None = None
    header_seconds: float = HEADER_READ_SECONDS
    body_seconds: float = BODY_READ_SECONDS


def connection_cap(limit: int = MAX_CONNECTIONS) -> int:
    """``limit``, lowered to leave ``FD_RESERVE`` descriptors free under a low open-file limit."""
    try:
        import resource
    except ImportError:  # Windows: no RLIMIT_NOFILE to respect
        return limit
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limit
    return max(8, min(limit, soft - FD_RESERVE))


class CountedLog:
    """One warning per interval standing for every event counted since the last one.

    The first event after a quiet interval is logged at once; later ones are counted, and
    ``flush_due`` (called periodically) or ``close`` (at shutdown) writes the count, so a held-back
    count never waits for more traffic.
    """

    def __init__(
        self,
        describe: Callable[[int, str], str],
        interval: float = LOG_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._describe = describe
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None
        self._pending = 0
        self._detail = ""
        self.total = 0
        self.seen = threading.Event()  # set by the first event (tests wait on it)

    def hit(self, detail: str = "") -> None:
        self.seen.set()
        with self._lock:
            self.total += 1
            self._pending += 1
            self._detail = detail
            self._emit(force=False)

    def flush_due(self) -> None:
        with self._lock:
            self._emit(force=False)

    def close(self) -> None:
        with self._lock:
            self._emit(force=True)

    def _emit(self, *, force: bool) -> None:
        if not self._pending:
            return
        now = self._clock()
        if not force and self._last is not None and now - self._last < self._interval:
            return
        count, self._pending, self._last = self._pending, 0, now
        log.warning("%s", self._describe(count, self._detail))


class AbuseLogs:
    """The counted logs of one HTTP server; ``install`` hooks them into the loop and the SDK log."""

    def __init__(self, interval: float = LOG_INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.accept_failures = CountedLog(
            lambda n, why: (
                f"could not accept {n} connection(s) ({why}); open connections are still "
                "served. Raise the open-file limit (ulimit -n) if this persists."
            ),
            interval,
            clock,
        )
        self.refused_connections = CountedLog(
            lambda n, why: f"refused {n} connection(s) with 503: {why}",
            interval,
            clock,
        )
        self.refused_sessions = CountedLog(
            lambda n, why: (
                f"refused {n} new MCP session(s) with 503: {why}; raise [http].max_sessions "
                "or let idle sessions expire"
            ),
            interval,
            clock,
        )

    def all(self) -> tuple[CountedLog, ...]:
        return (self.accept_failures, self.refused_connections, self.refused_sessions)

    def loop_exception_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Count ``accept()`` running out of descriptors or memory; pass anything else on."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _ACCEPT_ERRNOS:
            self.accept_failures.hit(f"{errno.errorcode.get(exc.errno or 0, exc.errno)}: {exc.strerror}")
            return
        loop.default_exception_handler(context)

    async def flush_periodically(self, interval: float = LOG_INTERVAL_SECONDS) -> None:
        while True:
            await asyncio.sleep(interval)
            for counted in self.all():
                counted.flush_due()

    def close(self) -> None:
        for counted in self.all():
            counted.close()


class SessionRefusalFilter(logging.Filter):
    """The SDK warns once per session refused past ``max_sessions``; count them instead."""

    def __init__(self, logs: AbuseLogs) -> None:
        super().__init__()
        self.logs = logs

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(SESSION_REFUSAL_PREFIX):
            self.logs.refused_sessions.hit(message[len(SESSION_REFUSAL_PREFIX) :].lstrip(": "))
            return False
        return True


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with read deadlines and the connection cap (see the module docstring).

    ``guarded_protocol`` makes a subclass bound to one server's cap and logs.
    """

    cap: ClassVar[int] = MAX_CONNECTIONS
    logs: ClassVar[AbuseLogs | None] = None
    header_seconds: ClassVar[float] = HEADER_READ_SECONDS
    body_seconds: ClassVar[float] = BODY_READ_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_body = False
        self._opened = 0.0

    # -- the connection cap ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._opened = self.loop.time()
        live = [c for c in self.connections if not c.transport.is_closing()]
        if len(live) > self.cap and not self._evict_oldest_idle(live):
            if self.logs is not None:
                self.logs.refused_connections.hit(f"all {self.cap} connections are serving requests")
            transport.write(_SERVICE_UNAVAILABLE)
            transport.close()
            return
        self._arm(self.header_seconds)

    def _evict_oldest_idle(self, live: list[Any]) -> bool:
        idle = [c for c in live if c is not self and isinstance(c, GuardedH11Protocol) and c._idle()]
        if not idle:
            return False
        min(idle, key=lambda c: c._opened).transport.close()
        return True

    def _idle(self) -> bool:
        """Not in the middle of a request: waiting for headers, or between two requests."""
        return self.cycle is None or self.cycle.response_complete

    # -- the read deadlines ----------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE:  # (part of) the next request's headers on a kept-alive connection
            if self._deadline is None:
                self._reading_body = False
                self._arm(self.header_seconds)
        elif state is h11.SEND_BODY:
            if not self._reading_body:
                self._reading_body = True
                self._arm(self.body_seconds)
        else:  # the whole request is in, or the connection is closing
            self._disarm()
            self._reading_body = False

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # between requests uvicorn's keep-alive timeout applies

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.debug("closed a connection that did not send its request in time")
            self.transport.close()


def guarded_protocol(logs: AbuseLogs, limits: ConnectionLimits | None = None) -> type[GuardedH11Protocol]:
    """A ``GuardedH11Protocol`` subclass for one server (uvicorn instantiates it per connection)."""
    limits = limits or ConnectionLimits()
    return type(
        "GroovedH11Protocol",
        (GuardedH11Protocol,),
        {
            "cap": connection_cap() if limits.cap is None else limits.cap,
            "logs": logs,
            "header_seconds": limits.header_seconds,
            "body_seconds": limits.body_seconds,
        },
    )

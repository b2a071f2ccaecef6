"""Running the MCP server over Streamable HTTP on ``/mcp`` with ``/healthz`` (SPEC R7.42-R7.54,
R12.1-R12.2).

``HttpService`` binds one socket itself (to word a bind failure, R7.53, and to learn the real port of
``--port 0``), puts the ``gate`` in front of the SDK's app and runs uvicorn with GrooveSeek's logging
and the read deadlines, connection cap and counted logs of ``abuse``. The transport plan, stdout's
reservation and the log settings shared with stdio are in ``startup``; stdio itself in ``stdio``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from ..config import HttpConfig
from ..errors import GrooveError
from .abuse import AbuseLogs, ConnectionLimits, SessionRefusalFilter, guarded_protocol
from .gate import HEALTHZ_PATH, MCP_PATH, Gate, GatePolicy
from .startup import IpAddress, TransportPlan, format_address, is_loopback

MAX_BODY_BYTES = 1_048_576  # R7.50
SEAT_IDLE_SECONDS = 3600.0  # R7.51 (design): a session idle for an hour gives its seat back
DEFAULT_ALLOWED_HOSTS = HttpConfig().allowed_hosts
GRACEFUL_SHUTDOWN_SECONDS = 5  # open SSE streams are closed after this instead of holding the exit


def startup_warnings(plan: TransportPlan, http: HttpConfig, policy: GatePolicy, bound: str) -> list[str]:
    """R7.47, R7.52: what an operator must hear before the first request arrives."""
    warnings = []
    assert plan.address is not None
    if not is_loopback(plan.address[0]):
        warnings.append(
            f"GrooveSeek has no authentication: anything that can reach {bound} can read the whole "
            "knowledge base"
        )
        if tuple(http.allowed_hosts) == DEFAULT_ALLOWED_HOSTS:
            warnings.append(
                "non-loopback bind with the default allowed_hosts: requests naming a non-loopback Host will "
                "be refused with 403 until [transport.http].allowed_hosts lists it"
            )
    if policy.hosts is not None and not any(h.is_loopback for h in policy.hosts):
        warnings.append("[transport.http].allowed_hosts has no loopback entry: local clients will be refused")
    if policy.origins is None:
        warnings.append(
            "[transport.http].allowed_origins = [] turns Origin validation off: a web page in a local "
            "browser can send requests to this server (DNS rebinding)"
        )
    elif not any(o.address.is_loopback for o in policy.origins):
        warnings.append(
            "[transport.http].allowed_origins has no loopback entry: local browser clients will be refused"
        )
    return warnings


# -- Streamable HTTP ---------------------------------------------------------------------------------
def bind_socket(ip: IpAddress, port: int) -> socket.socket:
    """Bind the listening socket (R7.53 words the failure); ``port`` 0 lets the system choose."""
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if os.name != "nt":  # on Windows SO_REUSEADDR would let a second server steal the port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((str(ip), port))
    except OSError as exc:
        sock.close()
        raise GrooveError(
            f"failed to bind {format_address(ip, port)}: is another groove instance running, or the port "
            f"occupied?\n{exc.strerror or exc}"
        ) from None
    return sock


async def _healthz(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


def build_http_app(
    server: Server[Any], policy: GatePolicy, *, max_sessions: int, routes: Sequence[Route] = ()
) -> ASGIApp:
    """The SDK's Streamable HTTP app on ``/mcp`` plus ``/healthz`` and ``routes`` (the ``/ui`` pages of
    ``grooveseek.web``), behind the gate (R7.42, R7.46-R7.51).

    The SDK's own DNS-rebinding check is off (the gate owns it); the SDK still enforces the body cap
    before parsing (413), the ``max_sessions`` admission and the idle timeout that frees a seat.
    """
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=MAX_BODY_BYTES,
        session_idle_timeout=SEAT_IDLE_SECONDS,
        max_sessions=max_sessions or None,  # 0 = unlimited (R1.20)
        custom_starlette_routes=[Route(HEALTHZ_PATH, _healthz, methods=["GET"]), *routes],
    )
    app.router.redirect_slashes = False  # "/mcp/" is another path: 404, not a redirect (R7.42)
    return Gate(app, policy)


class _Uvicorn(uvicorn.Server):
    """uvicorn with a ready callback, GrooveSeek's shutdown message, no re-raised signal, and the
    counted abuse logs (``accept()`` failures through the loop's exception handler)."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_ready: Callable[[], None],
        on_signal: Callable[[], None],
        logs: AbuseLogs,
    ) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._on_signal = on_signal
        self._logs = logs
        self._flusher: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self._logs.loop_exception_handler)
        self._flusher = loop.create_task(self._logs.flush_periodically())
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            self._on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().shutdown(sockets=sockets)
        finally:
            if self._flusher is not None:
                self._flusher.cancel()
            self._logs.close()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises a captured signal after shutting down, which would turn a graceful stop
        # into a death by SIGTERM (or a KeyboardInterrupt); GrooveSeek stops and exits 0 instead.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = [signal.SIGINT, signal.SIGTERM]
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: Any) -> None:
        if not self.should_exit:
            self._on_signal()
        super().handle_exit(sig, frame)


class HttpService:
    """One HTTP server on an already bound socket. ``run`` blocks; ``stop`` may be called from any thread."""

    def __init__(
        self,
        app: ASGIApp,
        sock: socket.socket,
        *,
        on_ready: Callable[[], None] = lambda: None,
        on_signal: Callable[[], None] = lambda: None,
        limits: ConnectionLimits | None = None,
    ) -> None:
        self.logs = AbuseLogs()
        limits = limits or ConnectionLimits()
        config = uvicorn.Config(
            app,
            log_config=None,  # keep GrooveSeek's stderr logging; uvicorn's default logs to stdout
            access_log=False,
            lifespan="on",
            ws="none",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            # asyncio's loop, whose accept() failures reach the counted log (abuse.py); the
            # protocol adds read deadlines and the connection cap to uvicorn's h11 one.
            loop="asyncio",
            http=guarded_protocol(self.logs, limits),
        )
        self.sock = sock
        self._server = _Uvicorn(config, on_ready, on_signal, self.logs)
        self._session_filter = SessionRefusalFilter(self.logs)

    @property
    def open_connections(self) -> int:
        """Connections the server holds now (for tests and diagnostics)."""
        return len(self._server.server_state.connections)

    @property
    def address(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return format_address(ipaddress.ip_address(host), port)

    def run(self) -> None:
        sdk_log = logging.getLogger("mcp.server.streamable_http_manager")
        sdk_log.addFilter(self._session_filter)
        try:
            self._server.run(sockets=[self.sock])
        finally:
            sdk_log.removeFilter(self._session_filter)

    def stop(self) -> None:
        self._server.should_exit = True

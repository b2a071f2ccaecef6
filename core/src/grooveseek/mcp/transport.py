"""Running the MCP server: stdio by default, or Streamable HTTP on ``/mcp`` with ``/healthz``
(SPEC R7.41-R7.54, R12.1-R12.2).

``resolve_plan`` decides the transport and bind address from flags and config (R7.43-R7.45) without
touching the network, so a refused command line fails before any model loads. ``serve_stdio`` keeps
stdout for the protocol alone (R0.15); ``HttpService`` binds one socket itself (to word a bind failure,
R7.53, and to learn the real port of ``--port 0``), puts the ``gate`` in front of the SDK's app and runs
uvicorn with GrooveSeek's logging and the read deadlines, connection cap and counted logs of ``abuse``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import anyio
import attrs
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from ..config import HttpConfig, parse_bind
from ..config.model import GrooveConfig
from ..console import echo_err
from ..errors import ConfigError, GrooveError
from .abuse import AbuseLogs, ConnectionLimits, SessionRefusalFilter, guarded_protocol
from .gate import HEALTHZ_PATH, MCP_PATH, Gate, GatePolicy
from .malformed import AnswerMalformed

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_BODY_BYTES = 1_048_576  # R7.50
SEAT_IDLE_SECONDS = 3600.0  # R7.51 (design): a session idle for an hour gives its seat back
DEFAULT_ALLOWED_HOSTS = HttpConfig().allowed_hosts
SHUTDOWN_MESSAGE = "groove: shutdown signal received"
GRACEFUL_SHUTDOWN_SECONDS = 5  # open SSE streams are closed after this instead of holding the exit


@attrs.frozen
class TransportPlan:
    """The resolved transport; ``address`` (ip, port) is None for stdio."""

    kind: str
    address: tuple[IpAddress, int] | None = None


def format_address(ip: IpAddress, port: int) -> str:
    return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"


def is_loopback(ip: IpAddress) -> bool:
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback too
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def resolve_plan(
    config: GrooveConfig, *, transport: str | None, bind: str | None, port: int | None, i_know: bool
) -> TransportPlan:
    """R7.43-R7.45: the transport and bind address, checked, without opening anything.

    Raises:
        ConfigError: ``--bind``/``--port`` while the transport is stdio, a malformed ``--bind``, or a
            non-loopback ``--bind`` without ``--i-know``.
    """
    kind = transport or config.transport.kind
    if kind != "http":
        if bind is not None or port is not None:
            raise ConfigError(
                '--bind / --port require --transport http (or [transport].kind = "http" in groove.toml); '
                "currently resolved to stdio, which does not listen on any port."
            )
        return TransportPlan("stdio")
    if bind is not None:
        try:
            address = parse_bind(bind)
        except ValueError:
            raise ConfigError(
                f"--bind is not a valid socket address: {bind} (write <ip>:<port> or [<ipv6>]:<port>)"
            ) from None
        if not is_loopback(address[0]) and not i_know:
            raise ConfigError(
                f"refusing to bind {format_address(*address)} without --i-know: GrooveSeek has no "
                "authentication, so anything that can reach this address can read the whole knowledge base"
            )
        return TransportPlan("http", address)
    if port is not None:
        return TransportPlan("http", (ipaddress.IPv4Address("127.0.0.1"), port))
    return TransportPlan("http", parse_bind(config.transport.http.bind))


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


# -- stdio -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def stdout_reserved_for_protocol() -> Iterator[int | None]:
    """Point fd 1 at stderr for the whole command and yield a private duplicate of the real stdout.

    Anything a plugin, a native library or a stray ``print`` writes to stdout while the server
    starts or runs then lands on stderr, and the protocol stream stays clean (R0.15). fd 1 is
    restored on exit. Yields None when the descriptors cannot be juggled (no stdout at all).
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield None
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        yield None
        return
    try:
        yield saved
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def serve_stdio(
    server: Server[Any],
    protocol_fd: int | None,
    *,
    on_ready: Callable[[], None],
    on_signal: Callable[[], None],
) -> None:
    """Serve one client over stdin/stdout until stdin closes (R7.41).

    On SIGINT/SIGTERM ``on_signal`` runs (it releases the index) and the process ends at once: the
    SDK reads stdin in a worker thread that no cancellation can interrupt, so waiting for it would
    wait for the client to close the pipe.
    """

    async def main() -> None:
        stdout = None
        if protocol_fd is not None:
            raw = os.fdopen(protocol_fd, "wb", closefd=False)
            stdout = anyio.wrap_file(io.TextIOWrapper(raw, encoding="utf-8", write_through=True))
        async with (
            stdio_server(stdout=stdout) as (read_stream, write_stream),
            anyio.create_task_group() as tg,
        ):
            await tg.start(_exit_on_signal, on_signal)  # handlers are in place before "ready"
            on_ready()
            # Lines the SDK cannot read get an error reply instead of silence (mcp.malformed).
            guarded = AnswerMalformed(read_stream, write_stream)
            await server.run(guarded, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()

    anyio.run(main)


async def _exit_on_signal(
    on_signal: Callable[[], None], *, task_status: Any = anyio.TASK_STATUS_IGNORED
) -> None:
    with contextlib.ExitStack() as stack:
        try:
            signals = stack.enter_context(anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM))
        except NotImplementedError:  # Windows: Ctrl-C arrives as KeyboardInterrupt instead
            task_status.started()
            return
        task_status.started()
        async for _ in signals:
            echo_err(SHUTDOWN_MESSAGE)
            on_signal()
            sys.stderr.flush()
            os._exit(0)


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


class ClientGoneFilter(logging.Filter):
    """The SDK logs a client that hangs up mid-request as an error with a full traceback; that is
    the client's business, and any client could flood the log with it. One debug line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and type(exc).__name__ == "ClientDisconnect":
            logging.getLogger("grooveseek.mcp").debug("a client disconnected before its request body arrived")
            return False
        return True


def quiet_third_party_logs() -> None:
    """The SDK logs every session at info level and uvicorn every start-up step; keep them for debug."""
    logging.getLogger("mcp.server.streamable_http").addFilter(CLIENT_GONE)
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for name in ("mcp", "uvicorn", "httpx", "httpx2"):
            logging.getLogger(name).setLevel(logging.WARNING)


CLIENT_GONE = ClientGoneFilter()  # one instance, so calling quiet_third_party_logs twice adds it once

"""What ``groove serve`` decides and sets up before any transport library is imported (SPEC R7.43-R7.45,
R0.15): the transport plan, stdout reserved for the protocol, quieter third-party logs.

Split from ``transport`` (uvicorn, starlette) and ``stdio`` (the SDK) so that a stdio server pays
for neither before its handshake is answered (issue 24). ``resolve_plan`` decides the transport and
bind address from flags and config without touching the network, so a refused command line fails
before any model loads.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import sys
from collections.abc import Iterator

import attrs

from ..config import parse_bind
from ..config.model import GrooveConfig
from ..errors import ConfigError

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SHUTDOWN_MESSAGE = "groove: shutdown signal received"


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

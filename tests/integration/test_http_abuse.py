"""HTTP abuse resistance (issue 9): slowloris, the connection cap, read deadlines, counted logs.

A real uvicorn server (``HttpService``, GrooveSeek's protocol class) on 127.0.0.1 in this process,
in front of a small ASGI app with ``/healthz`` and a ``/hold`` route that keeps a request open
until the test releases it. Every loop is bounded and every wait has a deadline; the read
deadlines are shortened so a closed connection is observed within seconds. The ``accept()``
failure test runs the server in a child process whose descriptors are used up on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from grooveseek.mcp.abuse import AbuseLogs, ConnectionLimits, CountedLog, SessionRefusalFilter
from grooveseek.mcp.transport import HttpService, bind_socket, format_address

DEADLINE = 20.0
LOOPBACK = __import__("ipaddress").ip_address("127.0.0.1")
posix_only = pytest.mark.skipif(os.name == "nt", reason="needs RLIMIT_NOFILE and fork-free fd games")


def make_app(release: threading.Event, entered: threading.Semaphore | None = None) -> Starlette:
    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def hold(request: Request) -> PlainTextResponse:
        if entered is not None:  # tells the test this request holds its connection now
            entered.release()
        while not release.is_set():  # bounded by the test's release; polls the thread event
            await asyncio.sleep(0.01)
        return PlainTextResponse("released")

    async def echo(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(len(await request.body())))

    return Starlette(
        routes=[Route("/healthz", healthz), Route("/hold", hold), Route("/echo", echo, methods=["POST"])]
    )


@contextlib.contextmanager
def server(
    limits: ConnectionLimits, entered: threading.Semaphore | None = None
) -> Iterator[tuple[str, HttpService, threading.Event]]:
    release = threading.Event()
    sock = bind_socket(LOOPBACK, 0)
    ready = threading.Event()
    runner = HttpService(make_app(release, entered), sock, on_ready=ready.set, limits=limits)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert ready.wait(DEADLINE)
        yield f"http://{runner.address}", runner, release
    finally:
        release.set()
        runner.stop()
        thread.join(DEADLINE)
        sock.close()
    assert not thread.is_alive()


def half_request(port: int) -> socket.socket:
    """A connection that sends part of a request's headers and then nothing (slowloris)."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return conn


def closed_by_server(conn: socket.socket) -> bool:
    """True when the server closed the connection (EOF or reset) before the socket timeout, with no
    response: the request was never served."""
    try:
        return conn.recv(4096) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_slowloris_cannot_starve_healthz_and_connections_stay_capped() -> None:
    cap = 24
    with server(ConnectionLimits(cap=cap, header_seconds=30.0)) as (base, runner, _):
        port = int(base.rsplit(":", 1)[1])
        attackers = [half_request(port) for _ in range(10 * cap)]  # 240 half-sent requests
        try:
            for _ in range(5):  # a prompt client is always served, whatever the flood
                answer = httpx.get(f"{base}/healthz", timeout=DEADLINE)
                assert (answer.status_code, answer.text) == (200, "ok")
                attackers.append(half_request(port))
            assert runner.open_connections <= cap + 1
            evicted = sum(1 for a in attackers[:cap] if closed_by_server(a))
            assert evicted == cap  # the oldest half-open connections made room
        finally:
            for a in attackers:
                a.close()


def test_a_request_whose_headers_never_finish_is_closed_at_the_deadline() -> None:
    with server(ConnectionLimits(cap=8, header_seconds=1.0, body_seconds=1.0)) as (base, _, _):
        port = int(base.rsplit(":", 1)[1])
        slow = half_request(port)
        slow_body = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        slow_body.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nabc")
        try:
            assert closed_by_server(slow) and closed_by_server(slow_body)
            assert httpx.get(f"{base}/healthz", timeout=DEADLINE).text == "ok"
        finally:
            slow.close()
            slow_body.close()


def test_a_kept_alive_connection_trickling_its_next_request_is_closed_too() -> None:
    with server(ConnectionLimits(cap=8, header_seconds=1.0)) as (base, _, _):
        port = int(base.rsplit(":", 1)[1])
        conn = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        try:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            first = b""
            for _ in range(100):  # the whole first response, however the segments fall
                first += conn.recv(4096)
                if first.endswith(b"\r\n\r\nok"):
                    break
            assert first.startswith(b"HTTP/1.1 200 OK") and first.endswith(b"ok")
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 1")  # and then nothing
            data = conn.recv(4096)
            assert data == b""
        finally:
            conn.close()


def test_when_every_connection_is_busy_a_new_one_gets_503_and_healthz_recovers() -> None:
    cap = 4
    entered = threading.Semaphore(0)
    with server(ConnectionLimits(cap=cap), entered) as (base, runner, release):
        results: list[int] = []

        def held() -> None:
            results.append(httpx.get(f"{base}/hold", timeout=DEADLINE).status_code)

        holders = [threading.Thread(target=held) for _ in range(cap)]
        for t in holders:
            t.start()
        try:
            # Probe only once every holder is inside its request: a probe sent earlier could take
            # a holder's slot and leave the server one connection short of its cap (a race).
            assert all(entered.acquire(timeout=DEADLINE) for _ in range(cap))
            refused = httpx.get(f"{base}/healthz", timeout=DEADLINE)
            assert refused.status_code == 503 and refused.text == "Service Unavailable"
        finally:
            release.set()
            for t in holders:
                t.join(DEADLINE)
        assert results == [200] * cap
        assert httpx.get(f"{base}/healthz", timeout=DEADLINE).text == "ok"
        assert runner.open_connections <= cap + 1


def test_counted_log_writes_one_line_per_interval_with_the_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    counted = CountedLog(lambda n, why: f"{n} events ({why})", interval=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="grooveseek.mcp"):
        for _ in range(10_000):
            counted.hit("EMFILE")
        now[0] = 61.0
        counted.flush_due()
        counted.close()
    assert [r.getMessage() for r in caplog.records] == ["1 events (EMFILE)", "9999 events (EMFILE)"]
    assert all(r.exc_info is None for r in caplog.records)


def test_accept_failures_reach_the_counted_log_and_other_errors_the_default_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logs = AbuseLogs()
    loop = asyncio.new_event_loop()
    try:
        loop.set_exception_handler(logs.loop_exception_handler)
        with caplog.at_level(logging.WARNING):
            for _ in range(5_000):
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(errno.EMFILE, "Too many open files"),
                    }
                )
            accept_lines = [r for r in caplog.records if "could not accept" in r.getMessage()]
            assert len(accept_lines) == 1 and "EMFILE" in accept_lines[0].getMessage()
            loop.call_exception_handler({"message": "something else", "exception": ValueError("x")})
            assert any(r.getMessage() == "something else" for r in caplog.records)
    finally:
        loop.close()


def test_refused_sessions_are_counted_not_logged_one_by_one(caplog: pytest.LogCaptureFixture) -> None:
    logs = AbuseLogs()
    sdk = logging.getLogger("mcp.server.streamable_http_manager")
    flt = SessionRefusalFilter(logs)
    sdk.addFilter(flt)
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(1_000):
                sdk.warning("Refusing to open a new session: %d sessions are already open", 4)
            logs.close()
    finally:
        sdk.removeFilter(flt)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "refused 1 new MCP session(s) with 503: 4 sessions are already open; raise [http].max_sessions "
        "or let idle sessions expire",
        "refused 999 new MCP session(s) with 503: 4 sessions are already open; raise [http].max_sessions "
        "or let idle sessions expire",
    ]


_EMFILE_CHILD = r"""
import ipaddress, os, resource, sys, threading
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from grooveseek.mcp.abuse import ConnectionLimits
from grooveseek.mcp.transport import HttpService, bind_socket
import logging
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
async def healthz(request):
    return PlainTextResponse("ok")
sock = bind_socket(ipaddress.ip_address("127.0.0.1"), 0)
ready = threading.Event()
# A cap above what the descriptors allow: this child exists to run out of them.
runner = HttpService(Starlette(routes=[Route("/healthz", healthz)]), sock, on_ready=ready.set,
                     limits=ConnectionLimits(cap=10_000))
threading.Thread(target=runner.run, daemon=True).start()
ready.wait(20)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
hog = []
try:
    while True:
        hog.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
print(sock.getsockname()[1], flush=True)
sys.stdin.readline()  # the parent has connected its clients
print("counted" if runner.logs.accept_failures.seen.wait(20) else "not counted", flush=True)
for fd in hog:
    os.close(fd)
print("freed", flush=True)
sys.stdin.readline()
runner.stop()
"""


@posix_only
def test_running_out_of_descriptors_logs_a_count_not_a_traceback_per_accept() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _EMFILE_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    clients: list[socket.socket] = []
    try:
        assert child.stdout is not None and child.stdin is not None
        port = int(child.stdout.readline())
        for _ in range(100):
            clients.append(socket.create_connection(("127.0.0.1", port), timeout=DEADLINE))
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "counted"
        assert child.stdout.readline().strip() == "freed"
        answer = httpx.get(f"http://{format_address(LOOPBACK, port)}/healthz", timeout=DEADLINE)
        assert answer.text == "ok"  # serving resumes once descriptors are free
        child.stdin.write("stop\n")
        child.stdin.flush()
        _, stderr = child.communicate(timeout=DEADLINE)
    finally:
        for c in clients:
            c.close()
        if child.poll() is None:
            child.kill()
            child.wait(DEADLINE)
    accept_lines = [line for line in stderr.splitlines() if "could not accept" in line]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert 1 <= len(accept_lines) <= 3, stderr[-3000:]
    assert all("EMFILE" in line for line in accept_lines)

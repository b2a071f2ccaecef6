"""Running MCP servers for tests: a real ``groove serve`` process over stdio or Streamable HTTP.

``serve_http`` starts ``groove serve --transport http --port 0`` for a config file, reads the port
from the ready line and waits until ``/healthz`` answers; ``serve_stdio`` starts ``groove serve``
under the MCP SDK's stdio client and hands back an initialised session that synchronous tests drive
through an anyio portal. Both stop the process when the ``with`` block ends. Nothing leaves
127.0.0.1, and every wait is bounded by ``DEADLINE``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, TextIO

import attrs
import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, InitializeResult

DEADLINE = 120.0  # seconds; generous for a loaded CI machine, never reached when things work
_READY = re.compile(r"groove server ready \(http transport, listening on 127\.0\.0\.1:(\d+)\)")


def serve_command(config: Path, *extra: str) -> list[str]:
    """``python -m grooveseek --config <config> serve <extra>`` with this interpreter."""
    return [sys.executable, "-m", "grooveseek", "--config", str(config), "serve", *extra]


def line_queue(stream: IO[bytes], *, text: bool = True) -> queue.Queue[str | bytes | None]:
    """Lines of ``stream`` read on a daemon thread (decoded unless ``text`` is False); None at EOF."""
    out: queue.Queue[str | bytes | None] = queue.Queue()

    def pump() -> None:
        for line in iter(stream.readline, b""):
            out.put(line.decode("utf-8", "replace") if text else line)
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def wait_for_text(path: Path, text: str, timeout: float = DEADLINE) -> str:
    """Poll a log file until ``text`` appears (bounded; returns as soon as it does)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        content = path.read_text(encoding="utf-8", errors="replace")
        if text in content:
            return content
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}:\n{path.read_text(errors='replace')}")


def wait_healthy(base: str) -> None:
    """Poll /healthz until it answers (bounded; returns at the first 200)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError(f"{base}/healthz never answered")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (CTRL_BREAK on Windows), then kill if it does not exit within DEADLINE."""
    if proc.poll() is not None:
        return
    if sys.platform == "win32":
        proc.send_signal(signal.CTRL_BREAK_EVENT)
    else:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=DEADLINE)


@attrs.define
class HttpServer:
    """A running ``groove serve --transport http``: its URLs, process, and stderr (lines read so far
    in ``seen``, the rest still arriving on ``stderr``)."""

    base: str
    port: int
    proc: subprocess.Popen[bytes]
    stderr: queue.Queue[str | bytes | None]
    seen: list[str]

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"


@contextlib.contextmanager
def serve_http(config: Path, *extra: str, watch: bool = False) -> Iterator[HttpServer]:
    """Run ``groove serve --transport http --port 0 --no-watch <extra>`` until the block ends
    (``watch``: without ``--no-watch``, so the watcher runs as the config says)."""
    flags = () if watch else ("--no-watch",)
    cmd = serve_command(config, "--transport", "http", "--port", "0", *flags, *extra)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    stderr = line_queue(proc.stderr)
    seen: list[str] = []
    try:
        while True:
            line = stderr.get(timeout=DEADLINE)
            assert isinstance(line, str), "".join(seen)
            seen.append(line)
            match = _READY.search(line)
            if match:
                break
        port = int(match.group(1))
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base)
        yield HttpServer(base, port, proc, stderr, seen)
    finally:
        stop(proc)


@attrs.frozen
class StdioSession:
    """A live MCP ClientSession over stdio, driven from synchronous tests through an anyio portal."""

    portal: BlockingPortal
    session: ClientSession
    init: InitializeResult
    stderr: Path

    def call(self, method: str, *args: object) -> object:
        return self.portal.call(getattr(self.session, method), *args)

    def tool(self, name: str, arguments: dict[str, object]) -> object:
        """Call a tool and decode its one JSON text content. A refusal keeps its ``{"error": ...}``
        text and sets ``isError`` (the MCP specification; R7.3 as amended): both or neither."""
        result = self.call("call_tool", name, arguments)
        assert isinstance(result, CallToolResult)
        assert len(result.content) == 1 and result.content[0].type == "text"
        value = json.loads(result.content[0].text)
        assert result.is_error == (isinstance(value, dict) and "error" in value), (result.is_error, value)
        return value


@contextlib.asynccontextmanager
async def _session(
    params: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[tuple[ClientSession, InitializeResult]]:
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        yield session, init


@contextlib.contextmanager
def serve_stdio(config: Path, stderr: Path, *extra: str) -> Iterator[StdioSession]:
    """Run ``groove serve <extra>`` over stdio (its stderr goes to the file ``stderr``) and yield an
    initialised session until the block ends."""
    command = serve_command(config, *extra)
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with (
        stderr.open("w", encoding="utf-8") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(params, errlog)) as (session, init),
    ):
        yield StdioSession(portal, session, init, stderr)

"""Serving MCP over stdin/stdout with the SDK (SPEC R7.41, R7.53, R0.15).

``serve_stdio`` runs the SDK's stdio transport: on the stdio front's streams (``front``) when
there is one, so the handshake it answered early and every line it queued reach the SDK in order,
else on the process's own stdin. Lines the SDK cannot read get an error reply (``malformed``).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server

from ..console import echo_err
from .front import StdioFront
from .malformed import AnswerMalformed
from .startup import SHUTDOWN_MESSAGE


def serve_stdio(
    server: Server[Any],
    protocol_fd: int | None,
    front: StdioFront | None,
    *,
    on_ready: Callable[[], None],
    on_signal: Callable[[], None],
) -> None:
    """Serve one client over stdin/stdout until stdin closes (R7.41).

    With a ``front``, the SDK reads the lines it relays and writes through it; without one (no
    descriptors to juggle), the SDK reads stdin itself and writes to ``protocol_fd``.

    On SIGINT/SIGTERM ``on_signal`` runs (it releases the index) and the process ends at once: stdin
    is read in a thread that no cancellation can interrupt, so waiting for it would wait for the
    client to close the pipe.
    """

    async def main() -> None:
        stdin = stdout = None
        if front is not None:
            stdin = anyio.wrap_file(front.sdk_input())
            stdout = anyio.wrap_file(front.sdk_output())
        elif protocol_fd is not None:
            raw = os.fdopen(protocol_fd, "wb", closefd=False)
            stdout = anyio.wrap_file(io.TextIOWrapper(raw, encoding="utf-8", write_through=True))
        async with (
            stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream),
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

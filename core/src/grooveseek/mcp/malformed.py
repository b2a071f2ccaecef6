"""Answering stdio lines the SDK cannot read as JSON-RPC, instead of leaving the client waiting.

The SDK's stdio reader hands a line that fails to parse or validate to the server as an exception,
and the server only logs it at debug level: a client that sent ``"id": 6`` with a lone surrogate
in its arguments, a batch array or ``"jsonrpc": "1.0"`` waits forever for an answer. Over HTTP the
same lines get a 400. ``AnswerMalformed`` wraps the read stream and replies to each such line
with a JSON-RPC error: ``-32700`` (parse error) when the text is not valid JSON for the SDK, else
``-32600`` (invalid request), carrying the request's id whenever a lenient parse can recover it,
else ``null`` as JSON-RPC 2.0 prescribes.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def malformed_reply(exc: Exception) -> types.JSONRPCError:
    """The error reply for one line the SDK refused (``exc`` is what its reader raised)."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    raw = next((e.get("input") for e in errors if e.get("type") == "json_invalid"), None)
    if isinstance(raw, str):
        request_id = _lenient_id(raw)
        message = (
            "Parse error: the line is not JSON this server can read (invalid JSON, or a string "
            "holding a lone UTF-16 surrogate escape such as \\ud800)"
        )
        code = PARSE_ERROR
    else:
        request_id = None
        message = (
            "Invalid request: not a JSON-RPC 2.0 message this server accepts (one object per line, "
            '"jsonrpc": "2.0"; batches are not supported)'
        )
        code = INVALID_REQUEST
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _lenient_id(raw: str) -> int | str | None:
    """The request id, if Python's more lenient JSON reader finds one (it accepts lone surrogates)."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    request_id = obj.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    if isinstance(request_id, str):
        try:
            request_id.encode("utf-8")
        except UnicodeEncodeError:
            return None  # an id the reply could not carry either
    return request_id


class AnswerMalformed:
    """A read stream that answers refused lines itself and passes every valid message on."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the SDK asks read streams for the sender's context this way
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._write.send(SessionMessage(malformed_reply(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnswerMalformed:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnswerMalformed:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)

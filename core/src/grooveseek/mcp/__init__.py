"""The MCP surface of GrooveSeek: tools, prompts and ``kb://`` resources over stdio or Streamable HTTP
(SPEC §7).

``build_server(service)`` makes the server for one ``KBService``; ``stdio`` and ``transport`` run it.
The tool bodies are plain functions in ``tools`` so they can be tested without a protocol in between.
The names below load the SDK on first use, not on ``import grooveseek.mcp``: the stdio front
(``front``) answers the handshake before the SDK is imported (issue 24).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .identity import SERVER_NAME

if TYPE_CHECKING:
    from .server import build_server, run_tool

__all__ = ["SERVER_NAME", "build_server", "run_tool"]


def __getattr__(name: str) -> Any:
    if name in ("build_server", "run_tool"):
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

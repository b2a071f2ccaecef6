"""The MCP surface of GrooveSeek: tools, prompts and ``kb://`` resources over stdio or Streamable HTTP
(SPEC §7).

``build_server(service)`` makes the server for one ``KBService``; ``transport`` runs it. The tool
bodies are plain functions in ``tools`` so they can be tested without a protocol in between.
"""

from .server import SERVER_NAME, build_server, run_tool

__all__ = ["SERVER_NAME", "build_server", "run_tool"]

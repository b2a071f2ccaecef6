"""Who the MCP server says it is: name, version, instructions, capabilities and the ``initialize``
result (SPEC R7.1), without importing the SDK.

Two writers answer ``initialize`` and must answer alike: the SDK's server (``server.build_server``)
and the stdio front (``front``), which answers before the SDK is imported (issue 24). Both take
their values from here; ``initialize_reply`` is the line the SDK's stdio transport writes for the
same request, byte for byte (keys sorted, compact separators, non-ASCII unescaped), which
``tests/unit/test_mcp_front.py`` checks against the SDK for every protocol version.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__

SERVER_NAME = "grooveseek"

INSTRUCTIONS = (
    "GrooveSeek searches a local knowledge base. Start with `search` (hybrid vector + full-text; each hit "
    "is a snippet with a `location` path:line); read the document with `get_document` before relying on "
    "it, using the `path` exactly as search returns it (`from_line`/`to_line` read just the lines around a "
    "hit); use `list_topics` to see the categories and topics that `search` can filter on, and "
    "`get_connection_graph` to find related documents a query's words did not reach. Every tool answers "
    'JSON; a refusal arrives as {"error": "..."} with isError set. Cite the path of every document you '
    "use, and say so when `low_confidence` is true or the knowledge base is silent."
)

# The revisions the SDK negotiates through ``initialize`` (``mcp_types.version``), oldest first; a
# client asking for another gets the newest. A test keeps this equal to the SDK's.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# What the SDK derives from the handlers ``build_server`` registers: tools, prompts and resources,
# no subscription, no list-changed notifications (R7.34).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def core_version() -> str:
    """The ``grooveseek-core`` version (R7.1), falling back to the source tree's.

    The front answers with ``__version__`` instead, which spares it importlib.metadata (40 ms); a
    test keeps the two equal.
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("grooveseek-core")
    except PackageNotFoundError:
        return __version__


def negotiate(requested: str) -> str:
    """The protocol version the server answers a client that asked for ``requested``."""
    return requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1]


def initialize_result(requested: str, version: str = __version__) -> dict[str, Any]:
    """The ``initialize`` result for a client that asked for protocol ``requested``."""
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": negotiate(requested),
        "serverInfo": {"name": SERVER_NAME, "version": version},
    }


def initialize_reply(request_id: int | str, requested: str) -> str:
    """The JSON-RPC response line (no newline) the SDK writes for this ``initialize`` request."""
    result = json.dumps(
        initialize_result(requested), ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )
    ident = json.dumps(request_id, ensure_ascii=False)
    return f'{{"jsonrpc":"2.0","id":{ident},"result":{result}}}'

"""Running one tool call without the MCP SDK: the arguments checked, the tool run, the answer as the
text a ``tools/call`` result carries (SPEC R7.3 as amended, R7.6-R7.26).

``server`` wraps these in the SDK's result types; the stdio front (``front``) uses them directly to
answer the first calls before the SDK has loaded (issue 24), so both paths answer alike.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from ..service import KBService
from . import tools
from .schemas import TOOLS, ArgumentError

log = logging.getLogger("grooveseek.mcp")
_SURROGATE = re.compile("[\ud800-\udfff]")

_HANDLERS: dict[str, Callable[..., Any]] = {
    "search": tools.search,
    "list_topics": tools.list_topics,
    "get_document": tools.get_document,
    "get_best_practice": tools.get_best_practice,
    "rebuild_index": tools.rebuild_index,
    "get_connection_graph": tools.get_connection_graph,
}


def dump(value: Any) -> str:
    """Compact JSON, non-ASCII unescaped (docs/mcp.md, "Answers"; replaces R6.55's indentation on MCP).

    An agent pays for every byte of a tool result in context; indentation was a third of a search
    answer. The CLI keeps pretty-printing for people.
    """
    return wire_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def wire_safe(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD: it cannot be written as UTF-8, and one
    in a reply killed the stdio server and made an HTTP reply invalid JSON. Nothing GrooveSeek
    stores should hold one (the frontmatter refuses them); this is the last line of defence."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def is_failure(value: Any) -> bool:
    """A tool's answer is a refusal or failure: the ``{"error": "..."}`` shape every tool uses."""
    return isinstance(value, dict) and "error" in value


def run_tool(service: KBService, name: str, arguments: dict[str, Any] | None) -> Any:
    """Check the arguments and run one tool synchronously; the JSON value it answers with.

    Unknown tool names raise ``KeyError``; everything else comes back in-band.
    """
    spec = TOOLS[name]
    try:
        kwargs = spec.check_arguments(arguments)
    except ArgumentError as exc:
        return {"error": str(exc)}
    try:
        return _HANDLERS[name](service, **kwargs)
    except Exception as exc:  # the tools answer their own failures; this is the last line of defence
        log.exception("tool %s raised", name)
        return {"error": f"{name} failed: {type(exc).__name__}: {exc}"}


def call_tool_result(value: Any) -> dict[str, Any]:
    """The wire form of a ``tools/call`` result for a tool's answer ``value``: one text item with
    the JSON, ``isError`` set for a refusal (what ``server`` builds with the SDK's types)."""
    return {"content": [{"text": dump(value), "type": "text"}], "isError": is_failure(value)}

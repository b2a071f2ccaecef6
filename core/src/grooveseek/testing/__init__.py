"""``grooveseek.testing``: the kit for plugin authors (SPEC R3.10, R5.24) and for this repository's
tests.

Contract checks (``check_parser``, ``check_embedder``, ``check_grammar``), the deterministic
offline ``FakeEmbedder``, a ParseContext that records warnings, builders for an ``App``, a
``KBService``, a KB folder and an empty index (``apps``), and running MCP servers over stdio and
HTTP (``servers``). The pytest plugin in ``pytest_plugin`` exposes them as fixtures through the
``pytest11`` entry point ``grooveseek`` (``make_kb``, ``temp_store``, ``make_app``,
``make_service``, ``mcp_stdio_server``, ``mcp_http_server``, ``fake_embedder``, ``parse_context``),
and ``plugin_roundtrip`` (index a temporary KB with a parser plugin, search it, read a document
back).
"""

from typing import TYPE_CHECKING

from .apps import make_app, make_service, open_temp_store, write_kb
from .checks import (
    DEFAULT_TEXTS,
    ContractViolation,
    RecordingParseContext,
    check_embedder,
    check_grammar,
    check_parser,
    recording_parse_context,
)
from .fake import FakeEmbedder

if TYPE_CHECKING:
    from .roundtrip import RoundTrip, plugin_roundtrip


def __getattr__(name: str) -> object:
    # The round trip needs the whole application (store, service, MCP tools): imported on first
    # use, so ``from grooveseek.testing import check_parser`` stays light.
    if name in ("RoundTrip", "plugin_roundtrip"):
        from . import roundtrip

        return getattr(roundtrip, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_TEXTS",
    "ContractViolation",
    "FakeEmbedder",
    "RecordingParseContext",
    "RoundTrip",
    "check_embedder",
    "check_grammar",
    "check_parser",
    "make_app",
    "make_service",
    "open_temp_store",
    "plugin_roundtrip",
    "recording_parse_context",
    "write_kb",
]

"""``grooveseek.testing``: the kit for plugin authors (SPEC R3.10, R5.24) and for this repository's
tests.

Contract checks (``check_parser``, ``check_embedder``, ``check_grammar``), the deterministic
offline ``FakeEmbedder``, a ParseContext that records warnings, builders for an ``App``, a
``KBService``, a KB folder and an empty index (``apps``), and running MCP servers over stdio and
HTTP (``servers``). The pytest plugin in ``pytest_plugin`` exposes them as fixtures through the
``pytest11`` entry point ``grooveseek`` (``make_kb``, ``temp_store``, ``make_app``,
``make_service``, ``mcp_stdio_server``, ``mcp_http_server``, ``fake_embedder``, ``parse_context``).
"""

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

__all__ = [
    "DEFAULT_TEXTS",
    "ContractViolation",
    "FakeEmbedder",
    "RecordingParseContext",
    "check_embedder",
    "check_grammar",
    "check_parser",
    "make_app",
    "make_service",
    "open_temp_store",
    "recording_parse_context",
    "write_kb",
]

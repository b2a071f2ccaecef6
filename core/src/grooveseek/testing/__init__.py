"""``grooveseek.testing``: the kit for plugin authors (SPEC R3.10, R5.24).

Contract checks (``check_parser``, ``check_embedder``, ``check_grammar``), the deterministic
offline ``FakeEmbedder``, a ParseContext that records warnings, and ``plugin_roundtrip`` (index a
temporary KB with a parser plugin, search it, read a document back). The pytest plugin in
``pytest_plugin`` exposes them as fixtures through the ``pytest11`` entry point ``grooveseek``.
"""

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
from .roundtrip import RoundTrip, plugin_roundtrip

__all__ = [
    "DEFAULT_TEXTS",
    "ContractViolation",
    "FakeEmbedder",
    "RecordingParseContext",
    "RoundTrip",
    "check_embedder",
    "check_grammar",
    "check_parser",
    "plugin_roundtrip",
    "recording_parse_context",
]

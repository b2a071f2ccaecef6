"""GrooveSeek: hybrid semantic search over a knowledge base.

This facade is the public API for plugin authors: the hook marker, the plugin interfaces and the
values that cross module boundaries, the text helpers every parser needs (``decode_text``,
``raw_text``, ``filename_title``, ``cut_utf8``, ``split_anchor``, and the Markdown fence rules
``fence_marker`` / ``closes_fence`` the chunker applies), the errors a plugin raises, the kit for
binary formats (the decompression budget, budgeted zip reads, metadata dates), the child process
for native code that can abort (``IsolatedWorker``, ``run_isolated``) and the status line that
honours ``--quiet`` (``notice``, ``quiet_notices``); ``docs/plugins.md``
documents each. A built-in plugin imports nothing from ``grooveseek`` that is not exported here
(``tests/unit/test_plugin_imports.py``). Names are imported on first use (PEP 562), so
``import grooveseek`` (and ``groove --version``) stays cheap:
the interfaces pull in numpy and the hook marker pluggy, which a command that needs neither should
not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS = {
    "BudgetExceeded": ".binary",
    "BudgetedZip": ".binary",
    "DecompressionBudget": ".binary",
    "metadata_date": ".binary",
    "GrooveConfig": ".config.model",
    "closes_fence": ".chunking",
    "fence_marker": ".chunking",
    "ConfigError": ".errors",
    "EmbeddingRejected": ".errors",
    "GrooveError": ".errors",
    "ModelError": ".errors",
    "notice": ".notices",
    "quiet_notices": ".notices",
    "ParseError": ".errors",
    "RerankError": ".errors",
    "hookimpl": ".hookspecs",
    "IsolatedWorker": ".isolation",
    "IsolationFailure": ".isolation",
    "IsolationLimits": ".isolation",
    "run_isolated": ".isolation",
    "PLUGIN_API_VERSION": ".interfaces",
    "Chunker": ".interfaces",
    "Embedder": ".interfaces",
    "Grammar": ".interfaces",
    "Parser": ".interfaces",
    "Reranker": ".interfaces",
    "Chunk": ".types",
    "ChunkSettings": ".types",
    "Hit": ".types",
    "ParseContext": ".types",
    "ParsedDocument": ".types",
    "Section": ".types",
    "cut_utf8": ".text",
    "decode_text": ".text",
    "filename_title": ".text",
    "raw_text": ".text",
    "split_anchor": ".text",
}

if TYPE_CHECKING:
    from .binary import BudgetedZip, BudgetExceeded, DecompressionBudget, metadata_date
    from .chunking import closes_fence, fence_marker
    from .config.model import GrooveConfig
    from .errors import ConfigError, EmbeddingRejected, GrooveError, ModelError, ParseError, RerankError
    from .hookspecs import hookimpl
    from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
    from .isolation import IsolatedWorker, IsolationFailure, IsolationLimits, run_isolated
    from .notices import notice, quiet_notices
    from .text import cut_utf8, decode_text, filename_title, raw_text, split_anchor
    from .types import Chunk, ChunkSettings, Hit, ParseContext, ParsedDocument, Section


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'grooveseek' has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "PLUGIN_API_VERSION",
    "BudgetExceeded",
    "BudgetedZip",
    "Chunk",
    "ChunkSettings",
    "Chunker",
    "ConfigError",
    "DecompressionBudget",
    "Embedder",
    "EmbeddingRejected",
    "Grammar",
    "GrooveConfig",
    "GrooveError",
    "Hit",
    "IsolatedWorker",
    "IsolationFailure",
    "IsolationLimits",
    "ModelError",
    "ParseContext",
    "ParseError",
    "ParsedDocument",
    "Parser",
    "RerankError",
    "Reranker",
    "Section",
    "__version__",
    "closes_fence",
    "cut_utf8",
    "decode_text",
    "fence_marker",
    "filename_title",
    "hookimpl",
    "metadata_date",
    "notice",
    "quiet_notices",
    "raw_text",
    "run_isolated",
    "split_anchor",
]

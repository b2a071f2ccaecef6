"""GrooveSeek: hybrid semantic search over a knowledge base.

This facade is the public API for plugin authors: the hook marker, the plugin interfaces and the
values that cross module boundaries. Names are imported on first use (PEP 562), so ``import
grooveseek`` (and ``groove --version``) stays cheap: the interfaces pull in numpy and the hook
marker pluggy, which a command that needs neither should not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS = {
    "GrooveConfig": ".config.model",
    "ConfigError": ".errors",
    "EmbeddingRejected": ".errors",
    "GrooveError": ".errors",
    "ModelError": ".errors",
    "ParseError": ".errors",
    "hookimpl": ".hookspecs",
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
}

if TYPE_CHECKING:
    from .config.model import GrooveConfig
    from .errors import ConfigError, EmbeddingRejected, GrooveError, ModelError, ParseError
    from .hookspecs import hookimpl
    from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
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
    "Chunk",
    "ChunkSettings",
    "Chunker",
    "ConfigError",
    "Embedder",
    "EmbeddingRejected",
    "Grammar",
    "GrooveConfig",
    "GrooveError",
    "Hit",
    "ModelError",
    "ParseContext",
    "ParseError",
    "ParsedDocument",
    "Parser",
    "Reranker",
    "Section",
    "__version__",
    "hookimpl",
]

"""GrooveSeek: hybrid semantic search over a knowledge base.

This facade is the public API for plugin authors: the hook marker, the plugin interfaces and the
values that cross module boundaries.
"""

from .config.model import GrooveConfig
from .errors import ConfigError, EmbeddingRejected, GrooveError, ModelError, ParseError
from .hookspecs import hookimpl
from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
from .types import Chunk, ChunkSettings, Hit, ParseContext, ParsedDocument, Section

__version__ = "0.1.0"

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

"""GrooveSeek: hybrid semantic search over a knowledge base.

This facade is the public API for plugin authors: the hook marker, the plugin interfaces and the
values that cross module boundaries.
"""

from .config.model import GrooveConfig
from .errors import GrooveError, ParseError
from .hookspecs import hookimpl
from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
from .types import Chunk, ChunkSettings, Hit, ParseContext, ParsedDocument, Section

__version__ = "0.1.0"

__all__ = [
    "PLUGIN_API_VERSION",
    "Chunk",
    "ChunkSettings",
    "Chunker",
    "Embedder",
    "Grammar",
    "GrooveConfig",
    "GrooveError",
    "Hit",
    "ParseContext",
    "ParseError",
    "ParsedDocument",
    "Parser",
    "Reranker",
    "Section",
    "__version__",
    "hookimpl",
]

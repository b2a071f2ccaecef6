"""GrooveSeek: hybrid semantic search over a knowledge base.

This facade is the public API for plugin authors: the hook marker, the plugin interfaces and the
values that cross module boundaries, the text helpers every parser needs (``decode_text``,
``raw_text``, ``filename_title``, ``cut_utf8``) and the kit for binary formats (the decompression
budget, budgeted zip reads, metadata dates). ``docs/plugins.md`` documents each.
"""

from .binary import BudgetedZip, BudgetExceeded, DecompressionBudget, metadata_date
from .config.model import GrooveConfig
from .errors import GrooveError, ParseError
from .hookspecs import hookimpl
from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
from .text import cut_utf8, decode_text, filename_title, raw_text
from .types import Chunk, ChunkSettings, Hit, ParseContext, ParsedDocument, Section

__version__ = "0.1.0"

__all__ = [
    "PLUGIN_API_VERSION",
    "BudgetExceeded",
    "BudgetedZip",
    "Chunk",
    "ChunkSettings",
    "Chunker",
    "DecompressionBudget",
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
    "cut_utf8",
    "decode_text",
    "filename_title",
    "hookimpl",
    "metadata_date",
    "raw_text",
]

"""The public kit for store-backend plugins (``register_store_backends``; docs/plugins.md, "Store
backends"): the ``IndexStore`` protocol, the backend seam, the row values that cross it, and the
text rules every backend must apply the same way as the SQLite store so a query ranks alike on
either engine (NFKC folding, CJK bigrams, the ``path_globs`` dialect).

A backend plugin imports from here and from ``grooveseek`` only; the modules behind these names
may move, these names will not.
"""

from __future__ import annotations

from .cjk import CJK_SCRIPTS, bigram_text, char_class, fold, query_bigrams
from .errors import StoreError
from .globs import matcher_for
from .interfaces import FloatArray
from .store.backend import StoreBackend, StoreTarget, redact_url, scrub
from .store.coordination import Coordination, RebuildBusy
from .store.graph import SNIPPET_CHARS, GraphNodeRow
from .store.interface import IndexStore
from .store.jobs import VectorJob, VectorJobs
from .store.records import (
    AWAITING_REPARSE,
    ChunkVectors,
    DocumentRecord,
    HitRow,
    PendingChunk,
    StoredDoc,
    embedding_input,
    per_chunk_vectors,
)
from .store.schema import PRODUCER
from .store.serving import ServingRow
from .store.stages import SiblingRow
from .types import Chunk, SearchFilters

__all__ = [
    "AWAITING_REPARSE",
    "CJK_SCRIPTS",
    "PRODUCER",
    "SNIPPET_CHARS",
    "Chunk",
    "ChunkVectors",
    "Coordination",
    "DocumentRecord",
    "FloatArray",
    "GraphNodeRow",
    "HitRow",
    "IndexStore",
    "PendingChunk",
    "RebuildBusy",
    "SearchFilters",
    "ServingRow",
    "SiblingRow",
    "StoreBackend",
    "StoreError",
    "StoreTarget",
    "StoredDoc",
    "VectorJob",
    "VectorJobs",
    "bigram_text",
    "char_class",
    "embedding_input",
    "fold",
    "matcher_for",
    "per_chunk_vectors",
    "query_bigrams",
    "redact_url",
    "scrub",
]

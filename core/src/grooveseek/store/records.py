"""Values the store hands across its boundary: document records for writes, rows for reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TypeAlias

import attrs

from ..interfaces import FloatArray
from ..types import ChunkMarks

# R4.8/R4.38: the content hash of a row its parser's new policy has not settled yet. It never equals
# a SHA-256, so every later run reads the file as changed until it indexes; it never pairs (R4.21).
AWAITING_REPARSE = "awaiting-reparse"


@attrs.frozen
class DocumentRecord:
    """A document row as the indexer writes it (SPEC R4.8)."""

    path: str
    parser_id: str
    title: str | None
    title_from_filename: bool
    topic: str | None
    topic_from_frontmatter: bool
    category: str | None
    depth: str | None
    tags: tuple[str, ...]
    date: str | None
    content_hash: str
    size_bytes: int
    fields: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class StoredDoc:
    id: int
    path: str
    content_hash: str
    parser_id: str
    title_from_filename: bool
    topic_from_frontmatter: bool
    # No title of its own: the context breadcrumb then falls back to the file name (R3.84), so a
    # contextual rename changes the chunks even though no title column changes (R4.23).
    untitled: bool = False


@attrs.frozen
class HitRow(ChunkMarks):
    """Everything search needs to build a Hit for one chunk; the chunk's marks (lines, symbol kind,
    anchor, table rows) are ``ChunkMarks``', keyword-only."""

    chunk_id: int
    path: str
    title: str | None
    heading: str | None
    topic: str | None
    date: str | None
    tags: tuple[str, ...]
    content: str
    context: str
    token_count: int
    chunk_index: int
    level: int | None


@attrs.frozen
class PendingChunk:
    """A chunk written lexically whose vector is not stored yet (issue 26, ``pending_vectors``).

    ``text`` is the embedding input (``embedding_input(context, content)``), so whoever fills the
    vector (this process, a worker, a remote machine) needs nothing else from the index.
    """

    chunk_id: int
    document_id: int
    text: str


#: What ``replace_document`` takes as vectors: one row per chunk (an array of n rows, or a sequence
#: whose items may be None for a chunk whose vector is filled later), or None: every chunk pending.
ChunkVectors: TypeAlias = "FloatArray | Sequence[FloatArray | None] | None"


def per_chunk_vectors(count: int, vectors: ChunkVectors) -> list[FloatArray | None]:
    """``vectors`` as one optional vector per chunk; raises ValueError when the count differs."""
    if vectors is None:
        return [None] * count
    if len(vectors) != count:
        raise ValueError("one vector (or None) per chunk is required")
    return list(vectors)


def embedding_input(context: str, content: str) -> str:
    """R3.85: the context breadcrumb is prepended to the embedding input."""
    return f"{context}\n\n{content}" if context else content


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

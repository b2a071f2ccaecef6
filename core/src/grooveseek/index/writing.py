"""Writing for an index run: what a parsed file needs before its transaction, and pass 1.

``Prepared`` is a parsed file: its record, its chunks and the stored vectors of chunks whose
embedding input did not change. ``Writer.add`` writes it at once, in one transaction, with its
rows and both lexical legs and those reused vectors, and calls no model (issue 26: lexical first);
its other chunks wait for a vector. ``Writer.flush`` is pass 2: ``fill.VectorFill`` embeds every
pending chunk of the index and stores the vectors. The two are the "write" and "embed" stages of
``index/stages.py``; the watcher's batches call the same two.

Inside ``parallel()`` (an index run, ``index/workers.py``) pass 2 embeds in worker processes while
this process stores the previous batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import attrs

from ..interfaces import Embedder, FloatArray
from ..store.interface import IndexStore
from ..store.records import DocumentRecord, StoredDoc, embedding_input
from ..types import Chunk
from .fill import FILL_BATCH_CHUNKS, VectorFill
from .runstate import FileGuard, RunState
from .workers import EmbedWorkers

__all__ = ["EMBED_BATCH_CHUNKS", "Prepared", "Writer", "embedding_input", "reusable_vectors"]

# Chunks embedded together in pass 2 (kept under its old name for callers that size batches by it).
EMBED_BATCH_CHUNKS = FILL_BATCH_CHUNKS


@attrs.frozen
class Prepared:
    """A parsed file waiting to be written.

    ``reused`` holds the stored vectors of chunks whose embedding input did not change (by chunk
    position): an edit to one section of a long note re-embeds that section, not the file.
    """

    rel: str
    record: DocumentRecord
    chunks: tuple[Chunk, ...]
    reused: dict[int, FloatArray] = attrs.Factory(dict)

    @property
    def texts(self) -> list[str]:
        return [embedding_input(c.context, c.content) for c in self.chunks]

    @property
    def missing(self) -> list[int]:
        """Positions of the chunks that still need a vector."""
        return [i for i in range(len(self.chunks)) if i not in self.reused]


def reusable_vectors(
    store: IndexStore, row: StoredDoc | None, chunks: Sequence[Chunk]
) -> dict[int, FloatArray]:
    """The stored vectors of this file's chunks whose embedding input is unchanged, by position."""
    if row is None:
        return {}
    old = {embedding_input(ctx, content): cid for cid, ctx, content in store.chunk_inputs(row.id)}
    wanted = {
        i: old[t] for i, t in enumerate(embedding_input(c.context, c.content) for c in chunks) if t in old
    }
    stored = store.vectors_for(list(wanted.values()))
    return {i: stored[cid] for i, cid in wanted.items() if cid in stored}


class Writer:
    """The write (pass 1) and embed (pass 2) stages of one run or watcher batch."""

    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        state: RunState,
        guard: FileGuard,
        warn: Callable[[str], None],
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.state = state
        self.guard = guard
        self.warn = warn
        self.workers: EmbedWorkers | None = None
        #: Told how many pending chunks each stored batch of pass 2 covered (progress display).
        self.filled: Callable[[int], None] = lambda n: None
        self.written: list[str] = []  # files pass 1 wrote (``flush(own_only=True)``)

    def add(self, prepared: Prepared) -> None:
        """Pass 1: one file's rows, lexical legs and reused vectors in one transaction, no model call."""
        vectors = [prepared.reused.get(i) for i in range(len(prepared.chunks))]
        self.store.replace_document(prepared.record, prepared.chunks, vectors)
        self.written.append(prepared.rel)
        self.state.settled.add(prepared.rel)
        self.state.counts.updated += 1
        self.state.lines.indexed(prepared.rel, len(prepared.chunks))

    def flush(self, *, own_only: bool = False) -> int:
        """Pass 2: embed and store every pending vector of the index; returns how many were written.

        ``own_only`` (a watcher batch): only the chunks of the files this writer wrote, so a file an
        endpoint keeps refusing is retried by the next ``groove index``, not by every batch the
        watcher applies after it.
        """
        if not self.store.vectors_pending():
            return 0  # nothing waits: the model is not even loaded
        only = self._own() if own_only else None
        if own_only and only is None:
            return 0
        fill = VectorFill(self.store, self.embedder, self.state, self.guard, self.filled)
        return fill.run(self.workers, only)

    def _own(self) -> tuple[int, set[int]] | None:
        """(a chunk id below every chunk of the files written, their document ids), or None."""
        stored = self.store.documents()
        ids = {stored[rel].id for rel in self.written if rel in stored}
        first = [cid for doc in ids for cid, _, _ in self.store.chunk_inputs(doc)[:1]]
        return (min(first) - 1, ids) if first else None

    @contextmanager
    def parallel(self, count: int) -> Iterator[EmbedWorkers]:
        """Embed pass 2 in up to ``count`` worker processes until the block ends (``index/workers.py``).

        A block left by an exception drops what the workers hold (those chunks stay pending).
        """
        self.workers = workers = EmbedWorkers(self.embedder, count, self.warn)
        failed = True
        try:
            yield workers
            failed = False
        finally:
            self.workers = None
            workers.close(now=failed)

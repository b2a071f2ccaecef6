"""Embedding and writing for an index run: what a parsed file needs before its transaction.

``Prepared`` is a parsed file waiting for vectors; ``Writer`` embeds a batch of them (reusing the
stored vectors of chunks whose embedding input did not change, and embedding each distinct text
once), then writes each file in its own transaction. An endpoint's refusal of one file's input
skips that file and keeps its rows (R5.16); any other ``ModelError`` the embedder raises is its
word that the model or endpoint failed, and stops the run (R4.19, R5.16). Any other exception (a
plugin bug, a crash on odd input) and any failed write is a skip through the run's file guard
(``runstate.FileGuard``): a failed batch is retried file by file, and a file whose text fails while
the model still embeds a probe text is skipped; when the probe fails too, no file is at fault and
the run stops (``RunFailed``). The writer updates the run's ``RunState`` (counters, lines, settled
set), so the watcher's own wording applies here.

``add`` collects prepared files until ``EMBED_BATCH_CHUNKS`` chunks wait, then embeds and writes
them as one batch; ``flush`` writes what is left. These are the "embed" and "write" stages of
``index/stages.py``; today one transaction per file writes the rows and their vectors together.

Inside ``parallel()`` (an index run, ``index/workers.py``), a batch goes to the worker processes and is
written at the next flush, so this process parses and writes while they embed; one batch is in
flight at most, and batches are written in the order they were read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import attrs
import numpy as np

from ..errors import EmbeddingRejected, GrooveError, ModelError
from ..interfaces import Embedder, FloatArray
from ..store.interface import IndexStore
from ..store.records import DocumentRecord, StoredDoc
from ..types import Chunk
from ..vectorcheck import BadVectors, checked_documents
from .runstate import FileGuard, RunState
from .safety import PROBE_TEXT, RunFailed, failure_reason
from .workers import EmbedWorkers

__all__ = ["EMBED_BATCH_CHUNKS", "Prepared", "Writer", "embedding_input", "reusable_vectors"]

# Chunks collected across files before one embedding batch.
EMBED_BATCH_CHUNKS = 64


@attrs.frozen
class Prepared:
    """A parsed file waiting for its embeddings.

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


def embedding_input(context: str, content: str) -> str:
    """R3.85: the context breadcrumb is prepended to the embedding input."""
    return f"{context}\n\n{content}" if context else content


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
    """The embed and write stages of one run or watcher batch."""

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
        self._pending: list[Prepared] = []
        # The batch the workers are embedding while this process parses the next one.
        self._inflight: tuple[list[Prepared], list[str], int] | None = None

    def add(self, prepared: Prepared) -> None:
        """Queue one prepared file; embed and write the queue once it holds a batch of chunks."""
        self._pending.append(prepared)
        if sum(len(p.chunks) for p in self._pending) >= EMBED_BATCH_CHUNKS:
            self.flush()

    def flush(self) -> None:
        """Embed and write every queued file (with workers: hand them over, see ``write_batch``)."""
        batch, self._pending = self._pending, []
        if batch:
            self.write_batch(batch)

    @contextmanager
    def parallel(self, count: int) -> Iterator[EmbedWorkers]:
        """Embed in up to ``count`` worker processes until the block ends (``index/workers.py``).

        A batch handed to the workers is written at the next flush, or when the block ends; a block
        left by an exception drops it (the run failed; its files keep their rows).
        """
        self.workers = workers = EmbedWorkers(self.embedder, count, self.warn)
        failed = True
        try:
            yield workers
            self.drain()
            failed = False
        finally:
            self._inflight = None
            self.workers = None
            workers.close(now=failed)

    def write_batch(self, batch: list[Prepared]) -> None:
        """Embed one batch and write each file in its own transaction; with workers, hand it to
        them and write the batch they embedded before."""
        ticket = None
        if self.workers is not None:
            texts = self.fresh_texts(batch)
            ticket = self.workers.submit(texts) if texts else None
        if ticket is None:
            self.drain()
            self.flush_here(batch)
            return
        self.state.counts.accepted_batches += 1
        previous, self._inflight = self._inflight, (batch, texts, ticket)
        if previous is not None:
            self.finish(*previous)

    def drain(self) -> None:
        """Write the batch the workers hold, if any."""
        previous, self._inflight = self._inflight, None
        if previous is not None:
            self.finish(*previous)

    def finish(self, batch: list[Prepared], texts: list[str], ticket: int) -> None:
        assert self.workers is not None
        try:
            vectors = self.workers.collect(ticket, len(texts))
        except (KeyboardInterrupt, SystemExit, GrooveError):
            raise
        except BaseException:  # noqa: BLE001 - which file is at fault? each is embedded on its own
            self.write_each(batch)
            return
        if vectors is None:  # the workers stopped: this batch is embedded here
            self.flush_here(batch)
            return
        try:
            vectors = checked_documents(self.embedder, vectors, len(texts))  # R5.4
        except BadVectors:  # which file is at fault? each is embedded on its own
            self.write_each(batch)
            return
        fresh = dict(zip(texts, vectors, strict=True))
        for prepared, file_vectors in zip(batch, self.assemble(batch, fresh), strict=True):
            with self.guard.file(prepared.rel):
                self.write(prepared, file_vectors)

    def flush_here(self, batch: list[Prepared]) -> None:
        """Embed one batch in this process now and write it."""
        try:
            vectors = self.embed(batch)
        except EmbeddingRejected as exc:
            if len(batch) == 1:
                self.rejected(batch[0], exc.status)
            else:  # which file was refused? each is sent again on its own
                self.write_each(batch)
            return
        except (KeyboardInterrupt, SystemExit, GrooveError):
            raise
        except BaseException:  # noqa: BLE001 - which file is at fault? each is embedded on its own
            self.write_each(batch)
            return
        for prepared, file_vectors in zip(batch, vectors, strict=True):
            with self.guard.file(prepared.rel):
                self.write(prepared, file_vectors)

    def write_each(self, batch: list[Prepared]) -> None:
        for prepared in batch:
            with self.guard.file(prepared.rel):
                self.write_one(prepared)

    def write(self, prepared: Prepared, vectors: FloatArray) -> None:
        """One file's rows and vectors in one transaction."""
        self.store.replace_document(prepared.record, prepared.chunks, vectors)
        self.state.settled.add(prepared.rel)
        self.state.counts.updated += 1
        self.state.lines.indexed(prepared.rel, len(prepared.chunks))

    def embed(self, batch: list[Prepared]) -> list[FloatArray]:
        """Every chunk's vector, per file: reused ones as stored, the rest embedded once per
        distinct text across the batch."""
        unique = self.fresh_texts(batch)
        fresh = dict(zip(unique, self.embed_texts(batch, unique), strict=True)) if unique else {}
        return self.assemble(batch, fresh)

    @staticmethod
    def fresh_texts(batch: list[Prepared]) -> list[str]:
        """The distinct texts of the batch that need a vector, in first-seen order."""
        return list(dict.fromkeys(p.texts[i] for p in batch for i in p.missing))

    @staticmethod
    def assemble(batch: list[Prepared], fresh: dict[str, FloatArray]) -> list[FloatArray]:
        out = []
        for p in batch:
            texts = p.texts
            rows = [p.reused[i] if i in p.reused else fresh[texts[i]] for i in range(len(texts))]
            out.append(np.stack(rows).astype(np.float32, copy=False))
        return out

    def embed_texts(self, batch: list[Prepared], texts: list[str]) -> FloatArray:
        try:
            # In this process: a batch the workers take goes through ``flush``; this is a batch
            # they were not (yet) taking, or one file retried on its own.
            vectors = self.embedder.embed_documents(texts)
        except EmbeddingRejected as exc:
            self.state.counts.accepted_batches += exc.accepted
            raise
        self.state.counts.accepted_batches += 1
        return checked_documents(self.embedder, vectors, len(texts))  # unit length, finite (R5.4)

    def judge(self, prepared: Prepared, exc: BaseException) -> ModelError:
        """The error for one file's failed embedding: the file's own (a skip) when the model still
        embeds a probe text, else ``RunFailed`` is raised, since no file is at fault (R4.19)."""
        try:
            self.embedder.embed_documents([PROBE_TEXT])
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as probe:  # the model itself is broken
            raise RunFailed(f"failed to embed chunks for {prepared.rel}: {probe}") from probe
        return ModelError(f"failed to embed chunks: {failure_reason(exc)}")

    def write_one(self, prepared: Prepared) -> None:
        """Embed and write one file on its own; a refused input skips it and keeps its rows (R5.16)."""
        try:
            vectors = self.embed([prepared])
        except EmbeddingRejected as exc:
            self.rejected(prepared, exc.status)
            return
        except GrooveError as exc:  # the embedder's own word that it failed: past the file guard
            raise RunFailed(str(exc)) from exc
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # judged by a probe text
            raise self.judge(prepared, exc) from exc
        self.write(prepared, vectors[0])

    def rejected(self, prepared: Prepared, status: int) -> None:
        # Vectors of the file's earlier requests went with the exception; its row stays as it was.
        counts = self.state.counts
        counts.skipped += 1
        counts.rejected_paths.append(prepared.rel)
        counts.skips.append((prepared.rel, f"embedding endpoint rejected the input (HTTP {status})"))
        self.state.lines.rejected(prepared.rel, status)
        self.state.settled.add(prepared.rel)

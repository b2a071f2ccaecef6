"""Pass 2 of an index run or watcher batch: the vectors of every chunk written without one (issue 26).

Pass 1 (``writing.Writer.add``) writes each file's rows and both lexical legs without calling the
model, so the folder is searchable by keyword as soon as it commits. ``VectorFill`` then reads the
index's pending chunks (``IndexStore.pending_vectors``, by chunk id, so the chunks of an interrupted
earlier run are filled too and nothing is embedded twice), embeds each distinct text of a batch
once, checks the vectors (R5.4) and stores them with ``fill_vectors``, one transaction per batch; a
chunk re-indexed or deleted meanwhile is passed over by the store.

With worker processes (``index/workers.py``) a batch is handed to them and stored while they embed
the next. Failure rules (R4.19, R5.16 as changed in docs/indexing.md): a batch that fails is
embedded again document by document; a document whose text fails while the model still embeds a
probe text is skipped (``Skipping <rel>: ...``) and an endpoint's refusal is reported as before;
either way its rows stay searchable by keyword and its chunks stay pending, retried by the next
run. A model that fails the probe too, or the embedder's own ``GrooveError``, stops the run.

On a store with a job queue (PostgreSQL) ``index/jobs.py`` embeds one claimed document at a time
through ``embed_chunks``, under these same rules, with a ``sink`` that holds the vectors until the
claim is checked and they are stored with the job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import EmbeddingRejected, GrooveError, ModelError
from ..interfaces import Embedder, FloatArray
from ..store.interface import IndexStore
from ..store.records import PendingChunk
from ..vectorcheck import BadVectors, checked_documents
from .runstate import FileGuard, RunState
from .safety import PROBE_TEXT, RunFailed, failure_reason
from .workers import EmbedWorkers

__all__ = ["FILL_BATCH_CHUNKS", "VectorFill"]

#: Pending chunks read, embedded and stored together. Larger than a file's worth, so one model
#: call batches many short chunks, and the workers get enough pieces to keep every core busy.
FILL_BATCH_CHUNKS = 256

_Inflight = tuple[list[PendingChunk], list[str], int]


class VectorFill:
    """Fill every pending vector of the index (see the module docstring). One per pass."""

    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        state: RunState,
        guard: FileGuard,
        filled: Callable[[int], None] = lambda n: None,
        sink: Callable[[Sequence[tuple[int, FloatArray]]], int] | None = None,
        paths: dict[int, str] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.state = state
        self.guard = guard
        self.filled = filled  # told how many vectors each stored batch wrote (the progress display)
        #: Where vectors go: the store's ``fill_vectors`` unless a job collects them (index/jobs.py).
        self.sink = sink if sink is not None else store.fill_vectors
        self._paths: dict[int, str] | None = paths
        self._failed: set[str] = set()  # documents skipped this pass: their later chunks are not retried

    def run(self, workers: EmbedWorkers | None, only: tuple[int, set[int]] | None = None) -> int:
        """Fill the vectors of every chunk pending now; returns how many were written.

        ``only``: (a chunk id below every chunk of theirs, document ids): fill the chunks of those
        documents alone (a watcher batch fills what it wrote; see ``Writer.flush``).
        """
        written = 0
        after = 0 if only is None else only[0]
        inflight: _Inflight | None = None
        while page := self.store.pending_vectors(FILL_BATCH_CHUNKS, after):
            after = page[-1].chunk_id
            batch = page if only is None else [c for c in page if c.document_id in only[1]]
            if not batch:
                continue
            texts = list(dict.fromkeys(c.text for c in batch))
            ticket = workers.submit(texts) if workers is not None else None
            if ticket is None:
                if inflight is not None:
                    written += self._collect(workers, *inflight)
                    inflight = None
                written += self._embed_here(batch, texts)
                continue
            self.state.counts.accepted_batches += 1
            previous, inflight = inflight, (batch, texts, ticket)
            if previous is not None:
                written += self._collect(workers, *previous)
        if inflight is not None:
            written += self._collect(workers, *inflight)
        return written

    def embed_chunks(self, batch: list[PendingChunk]) -> int:
        """Embed ``batch`` here, under the same failure rules as a batch of ``run``, and hand the
        vectors to the sink; returns what the sink reports written."""
        return self._embed_here(batch, list(dict.fromkeys(c.text for c in batch)))

    # -- one batch -------------------------------------------------------------------------------
    def _collect(
        self, workers: EmbedWorkers | None, batch: list[PendingChunk], texts: list[str], ticket: int
    ) -> int:
        assert workers is not None
        try:
            vectors = workers.collect(ticket, len(texts))
        except (KeyboardInterrupt, SystemExit, GrooveError):
            raise
        except BaseException:  # noqa: BLE001 - which document is at fault? each is embedded on its own
            return self._each(batch)
        if vectors is None:  # the workers stopped: this batch is embedded here
            return self._embed_here(batch, texts)
        try:
            vectors = checked_documents(self.embedder, vectors, len(texts))  # R5.4
        except BadVectors:
            return self._each(batch)
        return self._store(batch, dict(zip(texts, vectors, strict=True)))

    def _embed_here(self, batch: list[PendingChunk], texts: list[str]) -> int:
        try:
            vectors = self._embed(texts)
        except (KeyboardInterrupt, SystemExit):
            raise
        except EmbeddingRejected:
            return self._each(batch)
        except GrooveError:
            raise
        except BaseException:  # noqa: BLE001 - which document is at fault? each is embedded on its own
            return self._each(batch)
        return self._store(batch, dict(zip(texts, vectors, strict=True)))

    def _embed(self, texts: list[str]) -> FloatArray:
        try:
            vectors = self.embedder.embed_documents(texts)
        except EmbeddingRejected as exc:
            self.state.counts.accepted_batches += exc.accepted
            raise
        self.state.counts.accepted_batches += 1
        return checked_documents(self.embedder, vectors, len(texts))  # unit length, finite (R5.4)

    def _store(self, batch: Sequence[PendingChunk], vectors: dict[str, FloatArray]) -> int:
        written = self.sink([(c.chunk_id, vectors[c.text]) for c in batch])
        self.filled(len(batch))
        return written

    # -- document by document, after a batch failed ---------------------------------------------
    def _each(self, batch: list[PendingChunk]) -> int:
        by_doc: dict[int, list[PendingChunk]] = {}
        for chunk in batch:
            by_doc.setdefault(chunk.document_id, []).append(chunk)
        written = 0
        for doc_id, chunks in by_doc.items():
            rel = self._path(doc_id)
            if rel is None or rel in self._failed:  # deleted meanwhile, or already skipped
                self.filled(len(chunks))
                continue
            skipped = self.state.counts.skipped
            with self.guard.file(rel):
                written += self._one(rel, chunks)
            if self.state.counts.skipped > skipped:
                self._failed.add(rel)
                if rel in self.state.settled:  # written by pass 1 of this run: skipped, not updated
                    self.state.counts.updated -= 1
        return written

    def _one(self, rel: str, chunks: list[PendingChunk]) -> int:
        texts = list(dict.fromkeys(c.text for c in chunks))
        try:
            vectors = self._embed(texts)
        except EmbeddingRejected as exc:
            self._rejected(rel, exc.status)
            self.filled(len(chunks))
            return 0
        except GrooveError as exc:  # the embedder's own word that it failed: past the file guard
            raise RunFailed(str(exc)) from exc
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # judged by a probe text
            self.filled(len(chunks))
            raise self._judge(rel, exc) from exc
        return self._store(chunks, dict(zip(texts, vectors, strict=True)))

    def _judge(self, rel: str, exc: BaseException) -> ModelError:
        """The document's own error (a skip) when the model still embeds a probe text; otherwise
        ``RunFailed``, since no document is at fault (R4.19)."""
        try:
            self.embedder.embed_documents([PROBE_TEXT])
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as probe:  # the model itself is broken
            raise RunFailed(f"failed to embed chunks for {rel}: {probe}") from probe
        return ModelError(
            f"failed to embed chunks: {failure_reason(exc)}; it is searchable by keyword, and the next "
            "run tries its vectors again"
        )

    def _rejected(self, rel: str, status: int) -> None:
        counts = self.state.counts
        counts.skipped += 1
        counts.rejected_paths.append(rel)
        counts.skips.append((rel, f"embedding endpoint rejected the input (HTTP {status})"))
        self.state.lines.rejected(rel, status)

    def _path(self, doc_id: int) -> str | None:
        if self._paths is None:
            self._paths = {row.id: path for path, row in self.store.documents().items()}
        return self._paths.get(doc_id)

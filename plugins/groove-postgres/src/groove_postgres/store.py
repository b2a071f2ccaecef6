"""``PostgresStore``: one knowledge base's index in PostgreSQL, the implementation of ``IndexStore``.

Like the SQLite ``Store`` it is one class composed of typed parts sharing a ``PgCore``
(``DocumentWrites``, ``Reads``, ``Legs``) whose public methods are bound by name below, so the
whole surface is listed in one place and mypy checks it against ``IndexStore``. It holds one
pooled connection until ``close``; ``read_snapshot`` is a REPEATABLE READ transaction that also
moves a reader to the knowledge base's current generation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import psycopg
from psycopg import pq

from grooveseek.storekit import AWAITING_REPARSE, IndexStore, StoreError, VectorJobs

from .coordination import CHANNEL
from .core import PgCore
from .jobs import PgJobs
from .legs import Legs
from .reads import Reads
from .writes import DocumentWrites


class PostgresStore:
    """One open index on a server. Not shared between threads that write at the same time."""

    def __init__(
        self,
        conn: psycopg.Connection,
        path: Path,
        kb_id: int,
        gen: int,
        *,
        follow: bool,
        release: Callable[[psycopg.Connection], None],
    ) -> None:
        self.path = path
        self.conn = conn
        self._release = release
        core = self._core = PgCore(conn, kb_id, gen, follow=follow)
        writes = self._writes = DocumentWrites(core)
        self.replace_document = writes.replace_document
        self.replace_documents = writes.replace_documents
        self.replace_fields = writes.replace_fields
        self.update_document_meta = writes.update_document_meta
        self.delete_documents = writes.delete_documents
        self.rename_documents = writes.rename_documents
        self.reset = writes.reset
        self.ensure_vec_table = writes.ensure_vec_table
        self.fill_vectors = writes.fill_vectors
        reads = Reads(core)
        self.documents = reads.documents
        self.chunk_signature = reads.chunk_signature
        self.chunk_inputs = reads.chunk_inputs
        self.counts = reads.counts
        self.awaiting_reparse_count = reads.awaiting_reparse_count
        self.pending_vectors = reads.pending_vectors
        self.vectors_pending = reads.vectors_pending
        self.corpus_digest = reads.corpus_digest
        self.quality_counts = reads.quality_counts
        self.field_row_count = reads.field_row_count
        self.chunk_texts = reads.chunk_texts
        self.any_context = reads.any_context
        self.last_run_skips = reads.last_run_skips
        self.passing_chunk_ids = reads.passing_chunk_ids
        self.hit_rows = reads.hit_rows
        self.document_chunks = reads.document_chunks
        self.chunk_neighbours = reads.chunk_neighbours
        self.graph_seed_chunks = reads.graph_seed_chunks
        self.graph_candidate_paths = reads.graph_candidate_paths
        self.graph_node_rows = reads.graph_node_rows
        self.serving_rows = reads.serving_rows
        self.serving_rows_in_category = reads.serving_rows_in_category
        self.serving_row = reads.serving_row
        self.serving_rows_for = reads.serving_rows_for
        self.documents_with_parsers_outside = reads.documents_with_parsers_outside
        legs = self._legs = Legs(core)
        self.fts_candidates = legs.fts_candidates
        self.fts_rowids = legs.fts_rowids
        self.cjk_candidates = legs.cjk_candidates
        self.knn = legs.knn
        self.knn_many = legs.knn_many
        self.vectors_for = legs.vectors_for
        self.chunk_embeddings = legs.vectors_for
        self.meta = core.meta
        self.set_meta = core.set_meta
        self.declared_fields = core.declared_fields
        self.vec_dimension = core.dimension
        jobs = PgJobs(core)  # the pass-2 job queue (grooveseek.storekit.VectorJobs)
        self.queue_vector_jobs = jobs.queue_vector_jobs
        self.claim_vector_job = jobs.claim_vector_job
        self.extend_vector_job = jobs.extend_vector_job
        self.finish_vector_job = jobs.finish_vector_job
        self.drop_vector_job = jobs.drop_vector_job
        self.release_vector_job = jobs.release_vector_job
        self.vector_jobs_left = jobs.vector_jobs_left

    def use_term_postings(self, on: bool) -> None:
        """Rank plain-word English queries from term postings (the default) or, with False, by the
        ``LIKE`` scan of the text: the same scores, measured side by side by bench/million.py."""
        self._legs.term_postings = on

    @property
    def generation(self) -> int:
        return self._core.gen

    def close(self) -> None:
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is not None:
            self._release(conn)

    @contextlib.contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One REPEATABLE READ transaction for a multi-statement read (a search, a graph walk):
        every statement sees the same index even when a writer commits meanwhile. Nested inside a
        caller's transaction it is a savepoint of that transaction's snapshot."""
        if self.conn.info.transaction_status != pq.TransactionStatus.IDLE:
            with self.conn.transaction():
                yield
            return
        with self.conn.transaction():
            self.conn.execute("set transaction isolation level repeatable read")
            self._core.refresh_generation()
            yield

    def require_writable(self) -> None:
        """Refuse a server that cannot be written (a read-only replica, no INSERT privilege)."""
        row = self.conn.execute(
            "select pg_is_in_recovery(), has_table_privilege('groove_chunks', 'INSERT')"
        ).fetchone()
        if row is None or row[0] or not row[1]:
            raise StoreError(
                "the PostgreSQL index cannot be written from this connection (a read-only replica, or the "
                "user lacks INSERT on the groove_* tables); use a writable server or a user with the "
                "privileges of docs/postgres.md"
            )

    def holds_snapshot(self) -> bool:
        return self.conn.info.transaction_status != pq.TransactionStatus.IDLE

    def is_failure(self, exc: BaseException) -> bool:
        """The server or the connection failed (gone, out of disk, out of resources, refused), or a
        ``StoreError``: the run stops rather than skipping one document for it (R3.7). A data error
        about one document's rows (a constraint, a bad value) is that document's."""
        failures = (
            psycopg.OperationalError,  # connection lost, server shut down, disk full, out of memory
            psycopg.InterfaceError,  # the connection is closed or unusable
            psycopg.errors.InsufficientResources,
            psycopg.errors.InsufficientPrivilege,
            StoreError,
        )
        return isinstance(exc, failures)

    def make_reader(self, mmap_bytes: int) -> None:
        """Nothing to do: a server connection has no file to map (the SQLite store's mmap)."""

    def finish_run(self, meta: dict[str, str | None], awaiting_reparse: Sequence[str]) -> None:
        self._writes.finish_run(meta, awaiting_reparse, AWAITING_REPARSE)
        # Every server of this knowledge base hears that an index run ended (issue 23), whichever
        # process ran it (``groove index`` too); a forced run's switch notifies in its own commit.
        self.conn.execute("select pg_notify(%s, %s)", (CHANNEL, str(self._core.kb_id)))

    def repair_fts(self) -> int:
        """Nothing to repair: a chunk's full-text columns and postings are written with its row."""
        return 0


def as_index_store(store: PostgresStore) -> IndexStore:
    """``store`` as the Protocol: mypy checks the whole surface here."""
    return store


def as_job_queue(store: PostgresStore) -> VectorJobs:
    """``store`` as the job queue Protocol: mypy checks that surface here."""
    return store

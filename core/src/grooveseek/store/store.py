"""The ``Store``: one open SQLite index, the implementation of ``interface.IndexStore``.

``Store.open`` creates or migrates the file and checks the producer (R4.5, R4.7). The store is one
class composed of typed parts, each owning the SQL of one concern and sharing only the ``SqlCore``
(connection, meta, filter SQL, the vector and CJK tables): ``DocumentWrites``, ``Queries``,
``StageQueries``, ``GraphQueries`` and ``ServingQueries``. ``Store`` binds their public methods
by name below, so the whole surface is listed in one place. Callers never see SQL or cursors.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw

from ..errors import StoreError
from ..types import SearchFilters
from . import scan
from .backend import bound
from .core import SqlCore
from .db import (
    connect,
    connect_for_check,
    directory_message,
    is_database_failure,
    is_real_directory,
    unusable_message,
)
from .documents import DocumentWrites
from .graph import GraphQueries
from .interface import IndexStore
from .queries import Queries
from .records import AWAITING_REPARSE, DocumentRecord, HitRow, PendingChunk, StoredDoc
from .schema import MIGRATIONS, PRODUCER, SCHEMA_VERSION
from .serving import ServingQueries
from .stages import StageQueries

__all__ = [
    "AWAITING_REPARSE",
    "SCHEMA_VERSION",
    "DocumentRecord",
    "HitRow",
    "IndexStore",
    "PendingChunk",
    "Store",
    "StoredDoc",
    "index_exists",
    "index_identity",
    "open_store",
    "peek_meta",
    "remove_index_files",
]


class Store:
    """One open index. Not shared between threads that write at the same time."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        core = self._core = SqlCore(conn, path)
        writes = DocumentWrites(core)
        self.replace_document = writes.replace_document
        self.replace_fields = writes.replace_fields
        self.update_document_meta = writes.update_document_meta
        self.delete_documents = writes.delete_documents
        self.rename_documents = writes.rename_documents
        self.reset = writes.reset
        self.repair_fts = writes.repair_fts
        self.fill_vectors = writes.fill_vectors
        reads = Queries(core)
        self.documents = reads.documents
        self.chunk_signature = reads.chunk_signature
        self.chunk_inputs = reads.chunk_inputs
        self.counts = reads.counts
        self.awaiting_reparse_count = reads.awaiting_reparse_count
        self.corpus_digest = reads.corpus_digest
        self.quality_counts = reads.quality_counts
        self.field_row_count = reads.field_row_count
        self.fts_candidates = reads.fts_candidates
        self.fts_rowids = reads.fts_rowids
        self.passing_chunk_ids = reads.passing_chunk_ids
        self.hit_rows = reads.hit_rows
        stages = StageQueries(core)
        self.vectors_for = stages.vectors_for
        self.document_chunks = stages.document_chunks
        self.chunk_neighbours = stages.chunk_neighbours
        graph = GraphQueries(core)
        self.graph_seed_chunks = graph.graph_seed_chunks
        self.chunk_embeddings = graph.chunk_embeddings
        self.graph_candidate_paths = graph.graph_candidate_paths
        self.graph_node_rows = graph.graph_node_rows
        serving = ServingQueries(core)
        self.serving_rows = serving.serving_rows
        self.serving_rows_in_category = serving.serving_rows_in_category
        self.serving_row = serving.serving_row
        self.serving_rows_for = serving.serving_rows_for
        self.documents_with_parsers_outside = serving.documents_with_parsers_outside
        self.meta = core.meta
        self.set_meta = core.set_meta
        self.declared_fields = core.declared_fields
        self.vec_dimension = core.vectors.dimension
        self.ensure_vec_table = core.vectors.ensure
        self.knn = core.vectors.knn
        self.knn_many = core.vectors.knn_many
        self.pending_vectors = core.vectors.pending
        self.vectors_pending = core.vectors.pending_count

    def chunk_texts(self) -> Iterator[tuple[str, str | None, str, str]]:
        """``(path, heading, context, content)`` of every chunk, by path and chunk order (streamed)."""
        return scan.chunk_texts(self.conn)

    def any_context(self) -> bool:
        """Does any chunk carry a non-empty context (breadcrumb or code scope)?"""
        return scan.any_context(self.conn)

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, db_path: Path, *, create: bool = True) -> Store:
        """Open (or create) the index, check the producer and apply migrations (R4.5, R4.7).

        An existing file is judged on a read-only connection first, so a foreign, newer or broken
        file is refused with its bytes untouched (R4.32); only a file that is ours, empty or new is
        opened for writing, which switches it to WAL (R4.3).
        """
        if not create or os.path.lexists(db_path):
            _refuse_unless_ours(db_path)
        else:  # the default location's folder (config/location.py) is made on the first write
            db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn = connect(db_path, create=create)
        store = cls(conn, db_path)
        try:
            store._initialise_or_migrate()
        except BaseException:
            conn.close()
            raise
        return store

    def _initialise_or_migrate(self) -> None:
        version = self._core.count("pragma user_version")
        if version == 0 and not _table_names(self.conn):
            self._migrate(0)
            with self.conn:
                self.conn.execute("insert or replace into index_meta values ('producer', ?)", (PRODUCER,))
            return
        self._migrate(version)

    def _migrate(self, version: int) -> None:
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.conn:
                migration(self.conn)
                self.conn.execute(f"pragma user_version={number}")

    def close(self) -> None:
        self.conn.close()

    def make_reader(self, mmap_bytes: int) -> None:
        """Turn this connection into a pooled reader: writes fail loudly instead of racing the
        writer, and pages are read through mmap rather than copied into SQLite's cache."""
        self.conn.execute(f"pragma query_only=1; pragma mmap_size={int(mmap_bytes)}")

    @contextlib.contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One read transaction for a multi-statement read (a search, a graph walk), so every
        statement sees the same index even when a writer commits meanwhile (WAL readers keep their
        snapshot). apsw's ``with conn`` is a savepoint, so this nests inside a caller's transaction."""
        with self.conn:
            yield

    def require_writable(self) -> None:
        """Refuse an index SQLite could only open read-only (a write-protected file), before a
        run fails on its first write with a library error."""
        if self.conn.readonly("main"):
            raise StoreError(
                f"{self.path}: the index file is read-only, so it cannot be updated. Make it and "
                f"{self.path.parent} writable for this user (for example chmod "
                "u+w), then run the command again."
            )

    def is_failure(self, exc: BaseException) -> bool:
        """SQLite's word that the file failed (full, I/O, locked, corrupt), or a ``StoreError``."""
        return is_database_failure(exc)

    def holds_snapshot(self) -> bool:
        """True while a statement or transaction keeps a read snapshot open on this connection."""
        return self.conn.txn_state() != apsw.SQLITE_TXN_NONE

    # -- meta and search -------------------------------------------------------------------------
    def cjk_candidates(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) for chunks holding any of the bigram ``terms``, best first, filtered."""
        return self._core.cjk.candidates(terms, limit, weights, self._core.filter_sql(filters))

    def last_run_skips(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The files the last completed ``groove index`` run skipped (``groove doctor``'s ``files-skipped``).

        Returns ``(count, ((path, reason), ...))``; the list holds at most 1,000 files while
        ``count`` is the full number. ``(0, ())`` before any run has completed.
        """
        from .health import IndexHealth

        return IndexHealth(self.conn).last_run_skips()

    def finish_run(self, meta: dict[str, str | None], awaiting_reparse: Sequence[str]) -> None:
        """R4.15 step 13 in one transaction: mark the rows a policy pass did not settle (R4.38) and
        record the run's bookkeeping, so a failed run writes neither."""
        with self.conn:
            self.conn.executemany(
                "update documents set content_hash=? where path=?",
                [(AWAITING_REPARSE, p) for p in awaiting_reparse],
            )
            self.set_meta(meta)


def open_store(db_path: Path, *, create: bool = True) -> IndexStore:
    """Open the index at ``db_path`` behind the ``IndexStore`` interface: the one place that picks
    the storage engine. The SQLite ``Store`` unless the command bound ``db_path`` to a database
    server (a trusted ``[index].database_url``, ``backend.bind``; docs/postgres.md)."""
    binding = bound(db_path)
    if binding is not None:
        backend, target = binding
        return backend.open(target, create=create)
    return Store.open(db_path, create=create)


def index_exists(db_path: Path) -> bool:
    """Whether the index at ``db_path`` exists (the file, or the knowledge base's rows on a server)."""
    binding = bound(db_path)
    if binding is not None:
        backend, target = binding
        return backend.exists(target)
    return db_path.exists()


def index_identity(db_path: Path) -> tuple[int, int] | None:
    """A value that changes when the index is replaced (the file's device and inode; a server's
    current generation); None when there is no index."""
    binding = bound(db_path)
    if binding is not None:
        backend, target = binding
        return backend.identity(target) if backend.exists(target) else None
    try:
        st = os.stat(db_path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def peek_meta(db_path: Path, key: str) -> str | None:
    """One ``index_meta`` value, read without changing the file (not even to WAL); None when there
    is no index there or it cannot be read, which the command's own open then reports."""
    binding = bound(db_path)
    if binding is not None:
        backend, target = binding
        return backend.peek_meta(target, key)
    if not os.path.isfile(db_path):
        return None
    try:
        conn = connect_for_check(db_path)
    except StoreError:
        return None
    try:
        if "index_meta" not in _table_names(conn):
            return None
        rows = conn.execute("select value from index_meta where key=?", (key,)).fetchall()
        return str(rows[0][0]) if rows else None
    except apsw.Error:
        return None
    finally:
        conn.close()


def _table_names(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("select name from sqlite_schema where type='table'")}


def _refuse_unless_ours(db_path: Path) -> None:
    """Raise StoreError unless ``db_path`` is empty or an index this program wrote and can read
    (R4.5, R4.7). Runs on a read-only connection: nothing here may change a file it refuses."""
    conn = connect_for_check(db_path)
    try:
        version = int(conn.execute("pragma user_version").fetchall()[0][0] or 0)
        tables = _table_names(conn)
        producer = None
        if "index_meta" in tables:
            rows = conn.execute("select value from index_meta where key='producer'").fetchall()
            producer = rows[0][0] if rows else None
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise StoreError(unusable_message(db_path, str(exc))) from exc
    finally:
        conn.close()
    if version == 0 and not tables:
        return  # an empty file is initialised by the writing connection (R4.7)
    if producer != PRODUCER:
        who = f"written by {producer!r}" if producer else "not written by GrooveSeek (Python)"
        raise StoreError(
            f"{db_path}: this index file was {who}, for example by the Rust GrooveSeek, which uses the "
            "same file name. Run `groove index --force` to replace it; the index is rebuilt from the "
            "files in the knowledge base, so nothing is lost."
        )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{db_path}: written by a newer GrooveSeek (schema {version} > {SCHEMA_VERSION}); "
            "upgrade GrooveSeek or run groove index --force"
        )


def remove_index_files(db_path: Path) -> None:
    """Delete the index, its WAL/SHM files and its vector sidecar (R4.33, ``sidecar.py``); missing
    files are fine.

    Every path is checked before any is removed, so a refusal leaves the set as it was. A directory
    in one of these places is refused rather than deleted: it may hold anything.
    """
    paths = [f"{db_path}{suffix}" for suffix in ("", "-wal", "-shm", ".vectors")]
    for path in paths:
        if is_real_directory(path):
            raise StoreError(directory_message(path))
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(
                f"{path}: cannot be removed: {exc.strerror or exc}. Remove or rename it yourself, "
                "then run `groove index --force` again."
            ) from exc

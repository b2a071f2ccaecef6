"""The ``Store``: one open index. All SQL lives in this package (schema, documents, queries).

``Store.open`` creates or migrates the file and checks the producer (R4.5, R4.7); the write and
read methods come from ``DocumentWrites`` and ``Queries``. Callers never see SQL or cursors.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw

from ..errors import StoreError
from .cjk import CjkQueries
from .db import connect, connect_for_check, directory_message, is_real_directory, unusable_message
from .documents import DocumentWrites
from .graph import GraphQueries
from .queries import Queries
from .records import AWAITING_REPARSE, DocumentRecord, HitRow, StoredDoc
from .schema import MIGRATIONS, PRODUCER, SCHEMA_VERSION, vec_table_sql
from .serving import ServingQueries
from .stages import StageQueries

__all__ = [
    "AWAITING_REPARSE",
    "SCHEMA_VERSION",
    "DocumentRecord",
    "HitRow",
    "Store",
    "StoredDoc",
    "peek_meta",
    "remove_index_files",
]


class Store(DocumentWrites, Queries, StageQueries, GraphQueries, CjkQueries, ServingQueries):
    """One open index. Not shared between threads that write at the same time."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

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
        conn = connect(db_path, create=create)
        store = cls(conn, db_path)
        try:
            store._initialise_or_migrate()
        except BaseException:
            conn.close()
            raise
        return store

    def _initialise_or_migrate(self) -> None:
        version = self.conn.execute("pragma user_version").fetchall()[0][0]
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

    def holds_snapshot(self) -> bool:
        """True while a statement or transaction keeps a read snapshot open on this connection."""
        return self.conn.txn_state() != apsw.SQLITE_TXN_NONE

    # -- meta ----------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        rows = self.conn.execute("select value from index_meta where key=?", (key,)).fetchall()
        return rows[0][0] if rows else None

    def set_meta(self, items: dict[str, str | None]) -> None:
        """Set (or, for None, remove) several meta keys in one transaction."""
        with self.conn:
            for key, value in items.items():
                if value is None:
                    self.conn.execute("delete from index_meta where key=?", (key,))
                else:
                    self.conn.execute("insert or replace into index_meta values (?, ?)", (key, value))

    def finish_run(self, meta: dict[str, str | None], awaiting_reparse: Sequence[str]) -> None:
        """R4.15 step 13 in one transaction: mark the rows a policy pass did not settle (R4.38) and
        record the run's bookkeeping, so a failed run writes neither."""
        with self.conn:
            self.conn.executemany(
                "update documents set content_hash=? where path=?",
                [(AWAITING_REPARSE, p) for p in awaiting_reparse],
            )
            self.set_meta(meta)

    def vec_dimension(self) -> int | None:
        """The dimension the vector table was declared with, or None when it does not exist."""
        rows = self.conn.execute("select sql from sqlite_schema where name='vec_chunks'").fetchall()
        if not rows:
            return None
        sql = rows[0][0]
        start = sql.index("float[") + len("float[")
        return int(sql[start : sql.index("]", start)])

    def ensure_vec_table(self, dimension: int) -> None:
        if self.vec_dimension() is None:
            with self.conn:
                self.conn.execute(vec_table_sql(dimension))


def peek_meta(db_path: Path, key: str) -> str | None:
    """One ``index_meta`` value, read without changing the file (not even to WAL); None when there
    is no index there or it cannot be read, which the command's own open then reports."""
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
        return rows[0][0] if rows else None
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
        version = conn.execute("pragma user_version").fetchall()[0][0]
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
    """Delete the index and its WAL/SHM sidecars (R4.33); missing files are fine.

    Every path is checked before any is removed, so a refusal leaves the set as it was. A directory
    in one of these places is refused rather than deleted: it may hold anything.
    """
    paths = [f"{db_path}{suffix}" for suffix in ("", "-wal", "-shm")]
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

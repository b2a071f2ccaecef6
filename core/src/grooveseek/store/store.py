"""All SQL in GrooveSeek: schema migrations, document/chunk writes, and the search-leg queries.

``Store`` wraps one apsw connection from ``store.db.connect``. Every write that must be atomic
(one file's rows, all renames of a run, the forced reset) is one ``with self.conn:`` transaction
(SPEC R4.4). Callers never see SQL or cursors, only values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import apsw
import attrs
import numpy as np

from ..errors import StoreError
from ..types import Chunk, SearchFilters
from .db import connect

PRODUCER = "grooveseek-python"
FTS_TOKENIZER = "trigram case_sensitive 0 remove_diacritics 1"


def _m001_initial(conn: apsw.Connection) -> None:
    conn.execute(
        f"""
        create table if not exists index_meta(key text primary key, value text not null);
        create table if not exists documents(
            id integer primary key, path text not null unique, parser_id text not null,
            title text, title_from_filename integer not null default 0,
            topic text, topic_from_frontmatter integer not null default 0,
            category text, depth text, tags text not null default '[]', date text,
            content_hash text not null, size_bytes integer not null, last_indexed text not null);
        create table if not exists chunks(
            id integer primary key,
            document_id integer not null references documents(id) on delete cascade,
            chunk_index integer not null, heading text, level integer, content text not null,
            context text not null default '', token_count integer not null, quality_score real not null,
            start_line integer, end_line integer, symbol_kind text, table_rows text,
            unique(document_id, chunk_index));
        create index if not exists chunks_quality on chunks(quality_score);
        create table if not exists document_fields(
            document_id integer not null references documents(id) on delete cascade,
            key text not null, value text not null);
        create index if not exists document_fields_kv on document_fields(key, value);
        create index if not exists document_fields_doc on document_fields(document_id);
        create virtual table if not exists fts_chunks using fts5(
            heading, context, content, tokenize='{FTS_TOKENIZER}');
        insert or ignore into index_meta(key, value) values ('fts_tokenizer', '{FTS_TOKENIZER}');
        """
    )


MIGRATIONS: tuple[Callable[[apsw.Connection], None], ...] = (_m001_initial,)
SCHEMA_VERSION = len(MIGRATIONS)


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


@attrs.frozen
class HitRow:
    """Everything search needs to build a Hit for one chunk."""

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
    start_line: int | None
    end_line: int | None
    symbol_kind: str | None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _vec_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class Store:
    """One open index. Not shared between threads that write at the same time."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, db_path: Path, *, create: bool = True) -> Store:
        """Open (or create) the index, apply migrations and check the producer (R4.5, R4.7)."""
        conn = connect(db_path, create=create)
        store = cls(conn, db_path)
        try:
            store._check_producer_and_migrate()
        except BaseException:
            conn.close()
            raise
        return store

    def _check_producer_and_migrate(self) -> None:
        version = self.conn.execute("pragma user_version").fetchall()[0][0]
        tables = {r[0] for r in self.conn.execute("select name from sqlite_schema where type='table'")}
        if version == 0 and not tables:
            self._migrate(0)
            with self.conn:
                self.conn.execute("insert or replace into index_meta values ('producer', ?)", (PRODUCER,))
            return
        producer = None
        if "index_meta" in tables:
            rows = self.conn.execute("select value from index_meta where key='producer'").fetchall()
            producer = rows[0][0] if rows else None
        if producer != PRODUCER:
            who = f"written by {producer!r}" if producer else "not written by GrooveSeek (Python)"
            raise StoreError(
                f"{self.path}: this index file was {who}, for example by the Rust GrooveSeek, which uses the "
                "same file name. Run `groove index --force` to replace it; the index is rebuilt from the "
                "files in the knowledge base, so nothing is lost."
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer GrooveSeek (schema {version} > {SCHEMA_VERSION}); "
                "upgrade GrooveSeek or run groove index --force"
            )
        self._migrate(version)

    def _migrate(self, version: int) -> None:
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.conn:
                migration(self.conn)
                self.conn.execute(f"pragma user_version={number}")

    def close(self) -> None:
        self.conn.close()

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
                self.conn.execute(
                    "create virtual table vec_chunks using vec0("
                    f"chunk_id integer primary key, embedding float[{dimension}])"
                )

    # -- reading documents ---------------------------------------------------------------------
    def documents(self) -> dict[str, StoredDoc]:
        rows = self.conn.execute(
            "select id, path, content_hash, parser_id, title_from_filename, topic_from_frontmatter from documents"
        )
        return {r[1]: StoredDoc(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5])) for r in rows}

    def chunk_signature(self, doc_id: int) -> list[tuple[str | None, str, str]]:
        """(heading, context, content) in order: the frontmatter-only comparison of R4.20."""
        rows = self.conn.execute(
            "select heading, context, content from chunks where document_id=? order by chunk_index", (doc_id,)
        )
        return [tuple(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        docs = self.conn.execute("select count(*) from documents").fetchall()[0][0]
        chunks = self.conn.execute("select count(*) from chunks").fetchall()[0][0]
        return docs, chunks

    def corpus_digest(self) -> dict[str, object]:
        """R10.19: documents, chunks and a SHA-256 over every chunk's identity and text, in order."""
        import hashlib

        h = hashlib.sha256()
        rows = self.conn.execute(
            "select d.path, c.chunk_index, coalesce(c.heading, ''), c.context, c.content from chunks c "
            "join documents d on d.id = c.document_id order by d.path, c.chunk_index"
        )
        for row in rows:
            for part in row:
                data = str(part).encode("utf-8")
                h.update(len(data).to_bytes(8, "big") + data)
        docs, chunks = self.counts()
        return {"documents": docs, "chunks": chunks, "digest": h.hexdigest()}

    def quality_counts(self, threshold: float) -> tuple[int, int]:
        rows = self.conn.execute(
            "select sum(quality_score >= ?), sum(quality_score < ?) from chunks", (threshold, threshold)
        ).fetchall()[0]
        return int(rows[0] or 0), int(rows[1] or 0)

    # -- writing documents ---------------------------------------------------------------------
    def _delete_chunk_rows(self, doc_id: int) -> None:
        ids = [r[0] for r in self.conn.execute("select id from chunks where document_id=?", (doc_id,))]
        has_vec = self.vec_dimension() is not None
        for chunk_id in ids:
            self.conn.execute("delete from fts_chunks where rowid=?", (chunk_id,))
            if has_vec:
                self.conn.execute("delete from vec_chunks where chunk_id=?", (chunk_id,))
        self.conn.execute("delete from chunks where document_id=?", (doc_id,))

    def _upsert_doc_row(self, rec: DocumentRecord) -> int:
        values = (
            rec.parser_id, rec.title, int(rec.title_from_filename), rec.topic, int(rec.topic_from_frontmatter),
            rec.category, rec.depth, json.dumps(list(rec.tags), ensure_ascii=False), rec.date,
            rec.content_hash, rec.size_bytes, _now(),
        )  # fmt: skip
        rows = self.conn.execute("select id from documents where path=?", (rec.path,)).fetchall()
        if rows:
            doc_id = rows[0][0]
            self.conn.execute(
                "update documents set parser_id=?, title=?, title_from_filename=?, topic=?, "
                "topic_from_frontmatter=?, category=?, depth=?, tags=?, date=?, content_hash=?, size_bytes=?, "
                "last_indexed=? where id=?",
                (*values, doc_id),
            )
        else:
            self.conn.execute(
                "insert into documents(parser_id, title, title_from_filename, topic, topic_from_frontmatter, "
                "category, depth, tags, date, content_hash, size_bytes, last_indexed, path) "
                "values (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, rec.path),
            )
            doc_id = self.conn.last_insert_rowid()
        self.conn.execute("delete from document_fields where document_id=?", (doc_id,))
        self.conn.executemany(
            "insert into document_fields(document_id, key, value) values (?,?,?)",
            [(doc_id, k, v) for k, v in rec.fields],
        )
        return doc_id

    def replace_document(self, rec: DocumentRecord, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Replace one document's row, chunks, FTS rows, vectors and fields in one transaction (R4.4)."""
        if len(chunks) != len(vectors):
            raise ValueError("one vector per chunk is required")
        with self.conn:
            existing = self.conn.execute("select id from documents where path=?", (rec.path,)).fetchall()
            if existing:
                self._delete_chunk_rows(existing[0][0])
            doc_id = self._upsert_doc_row(rec)
            for chunk, vector in zip(chunks, vectors, strict=True):
                self.conn.execute(
                    "insert into chunks(document_id, chunk_index, heading, level, content, context, token_count, "
                    "quality_score, start_line, end_line, symbol_kind) values (?,?,?,?,?,?,?,?,?,?,?)",
                    (doc_id, chunk.chunk_index, chunk.heading, chunk.level, chunk.content, chunk.context,
                     chunk.token_count, chunk.quality_score, chunk.start_line, chunk.end_line, chunk.symbol_kind),
                )  # fmt: skip
                chunk_id = self.conn.last_insert_rowid()
                self.conn.execute(
                    "insert into fts_chunks(rowid, heading, context, content) values (?,?,?,?)",
                    (chunk_id, chunk.heading or "", chunk.context, chunk.content),
                )
                self.conn.execute(
                    "insert into vec_chunks(chunk_id, embedding) values (?, ?)", (chunk_id, _vec_blob(vector))
                )

    def update_document_meta(self, rec: DocumentRecord) -> None:
        """Frontmatter-only change (R4.20): the row and its fields, nothing re-embedded."""
        with self.conn:
            self._upsert_doc_row(rec)

    def delete_documents(self, paths: Iterable[str]) -> None:
        """Delete documents with their chunks, FTS rows, vectors and fields (R4.14), one transaction."""
        with self.conn:
            for path in paths:
                rows = self.conn.execute("select id from documents where path=?", (path,)).fetchall()
                if rows:
                    self._delete_chunk_rows(rows[0][0])
                    self.conn.execute("delete from documents where id=?", (rows[0][0],))

    def rename_documents(self, renames: Sequence[tuple[str, str, dict[str, str | None]]]) -> None:
        """Apply all renames of a run in one transaction (R4.22); chunks and vectors are reused.

        Each item is (old path, new path, column updates among title/topic/category).
        """
        with self.conn:
            for old, new, updates in renames:
                self.conn.execute("update documents set path=? where path=?", (new, old))
                for column in ("title", "topic", "category"):
                    if column in updates:
                        self.conn.execute(f"update documents set {column}=? where path=?", (updates[column], new))

    def reset(self, dimension: int, meta: dict[str, str | None]) -> None:
        """The forced reset of R4.30: empty every table, recreate vec at ``dimension``, record meta."""
        with self.conn:
            self.conn.execute("delete from document_fields; delete from chunks; delete from documents")
            self.conn.execute("delete from fts_chunks")
            self.conn.execute("drop table if exists vec_chunks")
            self.conn.execute(
                f"create virtual table vec_chunks using vec0(chunk_id integer primary key, embedding float[{dimension}])"
            )
            self.conn.execute("delete from index_meta where key like 'parser_policy:%' or key='declared_fields'")
            for key, value in meta.items():
                if value is not None:
                    self.conn.execute("insert or replace into index_meta values (?, ?)", (key, value))

    def repair_fts(self) -> int:
        """Insert FTS rows for chunks that lack one (R4.15 step 6); returns how many were added."""
        with self.conn:
            self.conn.execute(
                "insert into fts_chunks(rowid, heading, context, content) "
                "select c.id, coalesce(c.heading, ''), c.context, c.content from chunks c "
                "where c.id not in (select rowid from fts_chunks)"
            )
            return self.conn.changes()

    # -- search legs ---------------------------------------------------------------------------
    def _filter_sql(self, filters: SearchFilters) -> tuple[str, list[object]]:
        clauses, params = [], []
        if filters.min_quality > 0:
            clauses.append("c.quality_score >= ?")
            params.append(filters.min_quality)
        if filters.category:
            clauses.append("d.category = ?")
            params.append(filters.category)
        if filters.topic:
            clauses.append("d.topic = ?")
            params.append(filters.topic)
        return (" and " + " and ".join(clauses)) if clauses else "", params

    def fts_candidates(
        self, expression: str, limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[int]:
        """Chunk ids matching an FTS5 expression, best bm25 first, filters applied in SQL (R6.18)."""
        where, params = self._filter_sql(filters)
        sql = (
            "select f.rowid from fts_chunks f join chunks c on c.id = f.rowid "
            "join documents d on d.id = c.document_id "
            f"where fts_chunks match ?{where} order by bm25(fts_chunks, ?, ?, ?), f.rowid limit ?"
        )
        try:
            rows = self.conn.execute(sql, (expression, *params, *weights, limit))
            return [r[0] for r in rows]
        except apsw.SQLError as exc:  # a malformed expression must not crash a search
            raise StoreError(f"full-text query failed: {exc}") from exc

    def fts_rowids(self, expression: str) -> set[int]:
        """Every chunk id matching ``expression``: the rowid-only exclusion scan of R6.19."""
        try:
            rows = self.conn.execute("select rowid from fts_chunks where fts_chunks match ?", (expression,))
            return {r[0] for r in rows}
        except apsw.SQLError as exc:
            raise StoreError(f"full-text query failed: {exc}") from exc

    def knn(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest chunks by L2 distance, brute force, k ≤ 4096 (R6.17)."""
        if self.vec_dimension() is None:
            return []
        rows = self.conn.execute(
            "select chunk_id, distance from vec_chunks where embedding match ? and k = ? order by distance",
            (_vec_blob(vector), min(k, 4096)),
        )
        return [(r[0], r[1]) for r in rows]

    def passing_chunk_ids(self, ids: Sequence[int], filters: SearchFilters) -> set[int]:
        """The subset of ``ids`` that passes ``filters``."""
        if not ids:
            return set()
        where, params = self._filter_sql(filters)
        marks = ",".join("?" * len(ids))
        sql = (
            "select c.id from chunks c join documents d on d.id = c.document_id "
            f"where c.id in ({marks}){where}"
        )
        return {r[0] for r in self.conn.execute(sql, (*ids, *params))}

    def hit_rows(self, ids: Sequence[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            "select c.id, d.path, d.title, c.heading, d.topic, d.date, d.tags, c.content, c.context, "
            "c.token_count, c.chunk_index, c.level, c.start_line, c.end_line, c.symbol_kind "
            f"from chunks c join documents d on d.id = c.document_id where c.id in ({marks})",
            tuple(ids),
        )
        out = {}
        for r in rows:
            out[r[0]] = HitRow(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])), *r[7:])
        return out


def remove_index_files(db_path: Path) -> None:
    """Delete the index and its WAL/SHM sidecars (R4.33); missing files are fine."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{db_path}{suffix}")
        except FileNotFoundError:
            pass

"""SQL that writes documents: replace, metadata update, delete, rename, reset and FTS repair (R4.4, R4.14).

Each public method is one transaction. One typed part of ``Store``: it reaches the connection, the
vector table and the CJK table through its ``SqlCore``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import apsw

from ..cjk import fold
from ..interfaces import FloatArray
from ..types import Chunk
from .core import SqlCore
from .records import ChunkVectors, DocumentRecord, now_utc, per_chunk_vectors


#: ``index_meta``: the lowest chunk id never handed out (``_next_chunk_id``); kept by ``reset``.
NEXT_CHUNK_ID = "next_chunk_id"


class DocumentWrites:
    """Write-side SQL of ``Store``."""

    def __init__(self, core: SqlCore) -> None:
        self._core = core
        self.conn = core.conn

    def _doc_id(self, path: str) -> int | None:
        value = self._core.scalar("select id from documents where path=?", (path,))
        return value if isinstance(value, int) else None

    def _delete_chunk_rows(self, doc_id: int) -> None:
        ids = [r[0] for r in self.conn.execute("select id from chunks where document_id=?", (doc_id,))]
        for chunk_id in ids:
            self.conn.execute("delete from fts_chunks where rowid=?", (chunk_id,))
        self._core.cjk.delete(ids)
        self._core.vectors.delete(ids)
        self.conn.execute("delete from chunks where document_id=?", (doc_id,))

    def _upsert_doc_row(self, rec: DocumentRecord) -> int:
        values = (
            rec.parser_id,
            rec.title,
            int(rec.title_from_filename),
            rec.topic,
            int(rec.topic_from_frontmatter),
            rec.category,
            rec.depth,
            json.dumps(list(rec.tags), ensure_ascii=False),
            rec.date,
            rec.content_hash,
            rec.size_bytes,
            now_utc(),
        )
        doc_id = self._doc_id(rec.path)
        if doc_id is not None:
            self.conn.execute(
                "update documents set parser_id=?, title=?, title_from_filename=?, topic=?, "
                "topic_from_frontmatter=?, category=?, depth=?, tags=?, date=?, content_hash=?, "
                "size_bytes=?, last_indexed=? where id=?",
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
        self._write_fields(doc_id, rec.fields)
        return doc_id

    def _write_fields(self, doc_id: int, fields: Sequence[tuple[str, str]]) -> None:
        self.conn.execute("delete from document_fields where document_id=?", (doc_id,))
        self.conn.executemany(
            "insert into document_fields(document_id, key, value) values (?,?,?)",
            [(doc_id, k, v) for k, v in fields],
        )

    def replace_fields(self, doc_id: int, fields: Sequence[tuple[str, str]]) -> None:
        """Rewrite one document's declared-field rows alone, in one transaction (R4.40)."""
        with self.conn:
            self._write_fields(doc_id, fields)

    def replace_document(self, rec: DocumentRecord, chunks: Sequence[Chunk], vectors: ChunkVectors) -> None:
        """Replace one document's row, chunks, FTS rows, vectors and fields in one transaction (R4.4).

        A chunk whose vector is None (all of them for ``vectors=None``) is written without one and
        waits in ``pending_vectors`` (issue 26: lexical first, vectors after).
        """
        rows = per_chunk_vectors(len(chunks), vectors)
        with self.conn:
            existing = self._doc_id(rec.path)
            if existing is not None:
                self._delete_chunk_rows(existing)
            doc_id = self._upsert_doc_row(rec)
            chunk_id = self._next_chunk_id() - 1
            for chunk, vector in zip(chunks, rows, strict=True):
                chunk_id += 1
                self.conn.execute(
                    "insert into chunks(id, document_id, chunk_index, heading, level, content, context, "
                    "token_count, quality_score, start_line, end_line, symbol_kind, anchor, table_rows) "
                    "values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        chunk_id,
                        doc_id,
                        chunk.chunk_index,
                        chunk.heading,
                        chunk.level,
                        chunk.content,
                        chunk.context,
                        chunk.token_count,
                        chunk.quality_score,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.symbol_kind,
                        chunk.anchor,
                        # R3.66: NULL for chunks without table rows, so non-Office rows stay small.
                        json.dumps([list(r) for r in chunk.table_rows]) if chunk.table_rows else None,
                    ),
                )
                self.conn.execute(
                    "insert into fts_chunks(rowid, heading, context, content) values (?,?,?,?)",
                    (chunk_id, fold(chunk.heading or ""), fold(chunk.context), fold(chunk.content)),
                )
                self._core.cjk.insert(chunk_id, chunk.heading or "", chunk.context, chunk.content)
                if vector is not None:
                    self._core.vectors.insert(chunk_id, vector)
            if chunks:
                self.conn.execute(
                    "insert or replace into index_meta values (?, ?)", (NEXT_CHUNK_ID, str(chunk_id + 1))
                )

    def _next_chunk_id(self) -> int:
        """The id of the next chunk: never one a deleted chunk had. SQLite would hand out the
        highest id again once its row is gone, and a vector computed for the old text (a worker
        filling pending chunks while the file was re-indexed) must find its id vanished, not
        reused by other text (``fill_vectors``)."""
        recorded = self._core.meta(NEXT_CHUNK_ID)
        top = self._core.count("select max(id) from chunks")
        return max(int(recorded) if recorded and recorded.isdigit() else 0, top + 1)

    def fill_vectors(self, rows: Sequence[tuple[int, FloatArray]]) -> int:
        """Store the vectors of chunks written without one, in one transaction; ids that no longer
        exist or already have a vector are ignored. Returns how many were written."""
        with self.conn:
            return self._core.vectors.fill(rows)

    def update_document_meta(self, rec: DocumentRecord) -> None:
        """Frontmatter-only change (R4.20): the row and its fields, nothing re-embedded."""
        with self.conn:
            self._upsert_doc_row(rec)

    def delete_documents(self, paths: Iterable[str]) -> None:
        """Delete documents with their chunks, FTS rows, vectors and fields (R4.14), one transaction."""
        with self.conn:
            for path in paths:
                doc_id = self._doc_id(path)
                if doc_id is not None:
                    self._delete_chunk_rows(doc_id)
                    self.conn.execute("delete from documents where id=?", (doc_id,))

    def rename_documents(self, renames: Sequence[tuple[str, str, dict[str, str | None]]]) -> None:
        """Apply all renames of a run in one transaction (R4.22); chunks and vectors are reused.

        Each item is (old path, new path, column updates among title/topic/category).
        """
        with self.conn:
            for old, new, updates in renames:
                self.conn.execute("update documents set path=? where path=?", (new, old))
                for column in ("title", "topic", "category"):
                    if column in updates:
                        self.conn.execute(
                            f"update documents set {column}=? where path=?", (updates[column], new)
                        )

    def reset(self, dimension: int, meta: dict[str, str | None]) -> None:
        """The forced reset of R4.30: empty every table, recreate vec at ``dimension``, record meta."""
        with self.conn:
            self.conn.execute("delete from document_fields; delete from chunks; delete from documents")
            self.conn.execute("delete from fts_chunks")
            self._core.cjk.clear()
            self._core.vectors.recreate(dimension)
            self.conn.execute(
                "delete from index_meta where key like 'parser_policy:%' or key='declared_fields'"
            )
            for key, value in meta.items():
                if value is not None:
                    self.conn.execute("insert or replace into index_meta values (?, ?)", (key, value))

    def repair_fts(self) -> int:
        """Insert FTS rows for chunks that lack one (R4.15 step 6); returns how many were added."""
        with self.conn:
            added = fill_fts_chunks(self.conn) + self._core.cjk.repair()
        return added


def fill_fts_chunks(conn: apsw.Connection) -> int:
    """Write the trigram row of every chunk that lacks one, NFKC-folded like ``replace_document``'s."""
    rows = conn.execute(
        "select id, coalesce(heading, ''), context, content from chunks "
        "where id not in (select rowid from fts_chunks)"
    ).fetchall()
    conn.executemany(
        "insert into fts_chunks(rowid, heading, context, content) values (?,?,?,?)",
        [(cid, fold(str(h)), fold(str(c)), fold(str(t))) for cid, h, c, t in rows],
    )
    return len(rows)

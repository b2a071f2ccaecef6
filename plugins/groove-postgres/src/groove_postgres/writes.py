"""Writes: replace, metadata update, delete, rename, reset (SPEC R4.4, R4.14, R4.22, R4.30).

Each public method is one transaction. A chunk's row carries its folded full text, trigram count
and vector, and its bigram postings are written beside it in the same transaction, so the legs
can never disagree about which chunks exist.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import attrs

from grooveseek.storekit import Chunk, ChunkVectors, DocumentRecord, FloatArray, StoreError, per_chunk_vectors

from .core import PgCore, store_pending_vectors
from .postings import MIN_TERM
from .schema import drop_hnsw_sql, hnsw_index_sql
from .text import bigram_postings, ftext_and_ntok


def now() -> str:
    """``last_indexed`` as the SQLite store writes it (UTC, seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_CHUNK_COLUMNS = (
    "id, gen, document_id, chunk_index, heading, level, content, context, token_count, quality_score, "
    "start_line, end_line, symbol_kind, anchor, table_rows, ftext, ntok, cjk_ntok, embedding"
)
_DOC_COLUMNS = (
    "parser_id, title, title_from_filename, topic, topic_from_frontmatter, category, depth, tags, date, "
    "content_hash, size_bytes, last_indexed"
)


def _doc_values(rec: DocumentRecord, stamp: str) -> tuple[object, ...]:
    """A document row's values in ``_DOC_COLUMNS`` order."""
    return (
        rec.parser_id,
        rec.title,
        rec.title_from_filename,
        rec.topic,
        rec.topic_from_frontmatter,
        rec.category,
        rec.depth,
        json.dumps(list(rec.tags), ensure_ascii=False),
        rec.date,
        rec.content_hash,
        rec.size_bytes,
        stamp,
    )


@attrs.define
class ChunkRows:
    """Rows for ``groove_chunks``, postings for ``groove_bigrams`` (columns: chunk id, term, h, c,
    t) and the token totals for ``groove_gen_stats``."""

    rows: list[tuple[object, ...]] = attrs.Factory(list)
    postings: tuple[list[object], ...] = attrs.Factory(lambda: ([], [], [], [], []))
    tokens: int = 0
    cjk_tokens: int = 0

    def extend(self, other: ChunkRows) -> None:
        self.rows.extend(other.rows)
        for mine, theirs in zip(self.postings, other.postings, strict=True):
            mine.extend(theirs)
        self.tokens += other.tokens
        self.cjk_tokens += other.cjk_tokens


class DocumentWrites:
    """Write-side SQL of ``PostgresStore``."""

    def __init__(self, core: PgCore) -> None:
        self._core = core
        self.conn = core.conn

    def _doc_id(self, path: str) -> int | None:
        value = self._core.scalar(
            "select id from groove_documents where gen = %s and path = %s", (self._core.gen, path)
        )
        return None if value is None else int(value)

    def _upsert_doc_row(self, rec: DocumentRecord) -> int:
        values = _doc_values(rec, now())
        marks = ", ".join(["%s"] * len(values))
        row = self.conn.execute(
            f"insert into groove_documents(gen, path, {_DOC_COLUMNS}) values (%s, %s, {marks}) "
            f"on conflict (gen, path) do update set ({_DOC_COLUMNS}) = ({marks}) returning id",
            (self._core.gen, rec.path, *values, *values),
        ).fetchone()
        assert row is not None
        doc_id = int(row[0])
        self._write_fields(doc_id, rec.fields)
        return doc_id

    def _write_fields(self, doc_id: int, fields: Sequence[tuple[str, str]]) -> None:
        self.conn.execute("delete from groove_fields where document_id = %s", (doc_id,))
        if fields:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "insert into groove_fields(document_id, key, value) values (%s, %s, %s)",
                    [(doc_id, k, v) for k, v in fields],
                )

    def replace_fields(self, doc_id: int, fields: Sequence[tuple[str, str]]) -> None:
        """Rewrite one document's declared-field rows alone, in one transaction (R4.40)."""
        with self.conn.transaction():
            self._write_fields(doc_id, fields)

    def replace_document(self, rec: DocumentRecord, chunks: Sequence[Chunk], vectors: ChunkVectors) -> None:
        """Replace one document's row, chunks, postings, vectors and fields in one transaction (R4.4).

        A chunk whose vector is None (every chunk for ``vectors=None``) is written with a null
        embedding and waits in ``pending_vectors`` (issue 26: lexical first)."""
        rows = per_chunk_vectors(len(chunks), vectors)
        self._check_dimension([v for v in rows if v is not None])
        with self.conn.transaction():
            existing = self._doc_id(rec.path)
            if existing is not None:
                self._subtract_stats([existing])
                self.conn.execute("delete from groove_chunks where document_id = %s", (existing,))
            doc_id = self._upsert_doc_row(rec)
            if chunks:
                self._insert_chunks(doc_id, chunks, rows)

    def _check_dimension(self, vectors: Sequence[FloatArray]) -> None:
        dimension = self._core.dimension()
        for vector in vectors:
            if dimension is not None and vector.shape[-1] != dimension:
                raise StoreError(
                    f"a vector of {vector.shape[-1]} dimensions cannot be stored in an index of {dimension}"
                )

    def fill_vectors(self, rows: Sequence[tuple[int, FloatArray]]) -> int:
        """One transaction: the vector of each chunk of this generation that still exists and has
        none; vanished ids and chunks that have a vector are ignored. Returns how many were written."""
        if not rows:
            return 0
        if self._core.dimension() is None:
            raise StoreError(
                "vectors cannot be filled before the vector dimension is declared (ensure_vec_table)"
            )
        self._check_dimension([v for _, v in rows])
        with self.conn.transaction():
            return store_pending_vectors(self.conn, self._core.gen, rows)

    def _subtract_stats(self, doc_ids: Sequence[int]) -> None:
        """Take these documents' chunks out of the generation's bm25 totals (same transaction)."""
        self.conn.execute(
            "update groove_gen_stats s set chunks = s.chunks - x.n, ntok = s.ntok - x.t, "
            "cjk_ntok = s.cjk_ntok - x.c from (select count(*) as n, coalesce(sum(ntok), 0) as t, "
            "coalesce(sum(cjk_ntok), 0) as c from groove_chunks where document_id = any(%s)) x "
            "where s.gen = %s",
            (list(doc_ids), self._core.gen),
        )

    def _chunk_rows(
        self, doc_id: int, ids: Sequence[int], chunks: Sequence[Chunk], vectors: Sequence[FloatArray | None]
    ) -> ChunkRows:
        """The ``groove_chunks`` rows and bigram postings of one document's chunks: the one place
        both write paths (one document, a batch) build them, so they write identical rows."""
        out = ChunkRows()
        for chunk_id, chunk, vector in zip(ids, chunks, vectors, strict=True):
            heading = chunk.heading or ""
            ftext, ntok = ftext_and_ntok(heading, chunk.context, chunk.content)
            terms, cjk_ntok = bigram_postings(heading, chunk.context, chunk.content)
            out.tokens += ntok
            out.cjk_tokens += cjk_ntok
            for term, h, c, t in terms:
                for column, value in zip(out.postings, (chunk_id, term, h, c, t), strict=True):
                    column.append(value)
            out.rows.append(
                (
                    chunk_id,
                    self._core.gen,
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
                    ftext,
                    ntok,
                    cjk_ntok,
                    vector,
                )
            )
        return out

    def _new_ids(self, sequence: str, count: int) -> list[int]:
        return [
            int(r[0])
            for r in self.conn.execute(
                f"select nextval('{sequence}') from generate_series(1, %s)", (count,)
            ).fetchall()
        ]

    def _add_stats(self, chunks: int, tokens: int, cjk_tokens: int) -> None:
        self.conn.execute(
            "update groove_gen_stats set chunks = chunks + %s, ntok = ntok + %s, cjk_ntok = cjk_ntok + %s "
            "where gen = %s",
            (chunks, tokens, cjk_tokens, self._core.gen),
        )

    def _add_terms(self, terms: Sequence[object]) -> None:
        """Add the postings' terms to the generation's vocabulary (``groove_terms``). Sorted, so two
        writers adding overlapping terms lock them in the same order and cannot deadlock."""
        vocab = sorted({str(t) for t in terms if len(str(t)) >= MIN_TERM})
        if vocab:
            self.conn.execute(
                "insert into groove_terms(gen, term) select %s, t from unnest(%s::text[]) t "
                "on conflict do nothing",
                (self._core.gen, vocab),
            )

    def _insert_chunks(
        self, doc_id: int, chunks: Sequence[Chunk], vectors: Sequence[FloatArray | None]
    ) -> None:
        """All chunks of one document in three round trips: their ids, the rows (pipelined), and
        every bigram posting in one ``unnest`` insert (one statement per posting cost 45 % of a
        write at 40-word chunks)."""
        built = self._chunk_rows(doc_id, self._new_ids("groove_chunks_id_seq", len(chunks)), chunks, vectors)
        with self.conn.cursor() as cur:
            cur.executemany(
                f"insert into groove_chunks({_CHUNK_COLUMNS}) values ({', '.join(['%s'] * 19)})",
                built.rows,
            )
        self._add_stats(len(built.rows), built.tokens, built.cjk_tokens)
        if built.postings[0]:
            self.conn.execute(
                "insert into groove_bigrams(gen, chunk_id, term, h, c, t) select %s, * from "
                "unnest(%s::bigint[], %s::text[], %s::int[], %s::int[], %s::int[])",
                (self._core.gen, *built.postings),
            )
            self._add_terms(built.postings[1])

    def replace_documents(self, items: Sequence[tuple[DocumentRecord, Sequence[Chunk], FloatArray]]) -> None:
        """Replace many documents in ONE transaction, writing exactly the rows ``replace_document``
        writes for each: a bulk load (bench/million.py) at COPY speed. A path already in the
        generation goes through the one-document replace (same transaction); new paths are
        written with COPY. All or nothing, like every write here."""
        dimension = self._core.dimension()
        for rec, chunks, vectors in items:
            if len(chunks) != len(vectors):
                raise ValueError(f"{rec.path}: one vector per chunk is required")
            if len(chunks) and dimension is not None and vectors.shape[1] != dimension:
                raise StoreError(
                    f"{rec.path}: a vector of {vectors.shape[1]} dimensions cannot be stored in an "
                    f"index of {dimension}"
                )
        with self.conn.transaction():
            known = {
                str(r[0])
                for r in self._core.rows(
                    "select path from groove_documents where gen = %s and path = any(%s)",
                    (self._core.gen, [rec.path for rec, _, _ in items]),
                )
            }
            fresh = [item for item in items if item[0].path not in known]
            for rec, chunks, vectors in items:
                if rec.path in known:
                    self.replace_document(rec, chunks, vectors)  # a savepoint of this transaction
            if fresh:
                self._copy_documents(fresh)

    def _copy_documents(self, items: Sequence[tuple[DocumentRecord, Sequence[Chunk], FloatArray]]) -> None:
        doc_ids = self._new_ids("groove_documents_id_seq", len(items))
        chunk_ids = iter(self._new_ids("groove_chunks_id_seq", sum(len(c) for _, c, _ in items)))
        stamp, gen = now(), self._core.gen
        built = ChunkRows()
        with self.conn.cursor() as cur:
            with cur.copy(f"copy groove_documents(id, gen, path, {_DOC_COLUMNS}) from stdin") as copy:
                for doc_id, (rec, _, _) in zip(doc_ids, items, strict=True):
                    copy.write_row((doc_id, gen, rec.path, *_doc_values(rec, stamp)))
            with cur.copy("copy groove_fields(document_id, key, value) from stdin") as copy:
                for doc_id, (rec, _, _) in zip(doc_ids, items, strict=True):
                    for key, value in rec.fields:
                        copy.write_row((doc_id, key, value))
            for doc_id, (_, chunks, vectors) in zip(doc_ids, items, strict=True):
                ids = [next(chunk_ids) for _ in chunks]
                built.extend(self._chunk_rows(doc_id, ids, chunks, per_chunk_vectors(len(chunks), vectors)))
            with cur.copy(f"copy groove_chunks({_CHUNK_COLUMNS}) from stdin") as copy:
                for row in built.rows:
                    copy.write_row(row)
            with cur.copy("copy groove_bigrams(gen, chunk_id, term, h, c, t) from stdin") as copy:
                for posting in zip(*built.postings, strict=True):
                    copy.write_row((gen, *posting))
        self._add_terms(built.postings[1])
        self._add_stats(len(built.rows), built.tokens, built.cjk_tokens)

    def update_document_meta(self, rec: DocumentRecord) -> None:
        """Frontmatter-only change (R4.20): the row and its fields, nothing re-embedded."""
        with self.conn.transaction():
            self._upsert_doc_row(rec)

    def delete_documents(self, paths: Iterable[str]) -> None:
        """Delete documents with their chunks, postings and fields (R4.14), one transaction."""
        wanted = list(paths)
        with self.conn.transaction():
            ids = [
                int(r[0])
                for r in self._core.rows(
                    "select id from groove_documents where gen = %s and path = any(%s)",
                    (self._core.gen, wanted),
                )
            ]
            if ids:
                self._subtract_stats(ids)
                self.conn.execute("delete from groove_documents where id = any(%s)", (ids,))

    def rename_documents(self, renames: Sequence[tuple[str, str, dict[str, str | None]]]) -> None:
        """Apply all renames of a run in one transaction (R4.22); chunks and vectors are reused."""
        with self.conn.transaction():
            for old, new, updates in renames:
                self.conn.execute(
                    "update groove_documents set path = %s where gen = %s and path = %s",
                    (new, self._core.gen, old),
                )
                for column in ("title", "topic", "category"):
                    if column in updates:
                        self.conn.execute(
                            f"update groove_documents set {column} = %s where gen = %s and path = %s",
                            (updates[column], self._core.gen, new),
                        )

    def reset(self, dimension: int, meta: dict[str, str | None]) -> None:
        """The forced reset of R4.30: empty the generation, declare vectors at ``dimension``, record meta."""
        gen = self._core.gen
        with self.conn.transaction():
            self.conn.execute("delete from groove_documents where gen = %s", (gen,))
            self.conn.execute(
                "update groove_gen_stats set chunks = 0, ntok = 0, cjk_ntok = 0 where gen = %s", (gen,)
            )
            self.conn.execute(drop_hnsw_sql(gen))
            self.conn.execute("update groove_generations set dimension = %s where id = %s", (dimension, gen))
            self.conn.execute(hnsw_index_sql(gen, dimension))
            self.conn.execute(
                "delete from groove_meta where gen = %s and (key like 'parser_policy:%%' "
                "or key = 'declared_fields')",
                (gen,),
            )
            self._core.write_meta({k: v for k, v in meta.items() if v is not None})
        self._core.forget_dimension()

    def ensure_vec_table(self, dimension: int) -> None:
        """Declare the generation's vector dimension and build its HNSW index, once."""
        if self._core.dimension() is not None:
            return
        gen = self._core.gen
        with self.conn.transaction():
            self.conn.execute(
                "update groove_generations set dimension = %s where id = %s and dimension is null",
                (dimension, gen),
            )
            self.conn.execute(hnsw_index_sql(gen, dimension))
        self._core.forget_dimension()

    def finish_run(self, meta: dict[str, str | None], awaiting_reparse: Sequence[str], marker: str) -> None:
        """R4.15 step 13 in one transaction: mark rows a policy pass did not settle, record the run."""
        with self.conn.transaction():
            if awaiting_reparse:
                self.conn.execute(
                    "update groove_documents set content_hash = %s where gen = %s and path = any(%s)",
                    (marker, self._core.gen, list(awaiting_reparse)),
                )
            self._core.write_meta(meta)

"""SQL that reads: documents for the indexer, counts, and the two search legs (R6.17–R6.19).

One typed part of ``Store``: it reaches the connection and the shared filter SQL through its
``SqlCore``; the vector leg's KNN is ``vectors.VectorTable``'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from ..errors import StoreError
from ..types import SearchFilters
from .core import SqlCore, marks
from .records import AWAITING_REPARSE, HitRow, StoredDoc

# The FTS leg ranks max(2 * limit, limit + this) rows in FTS5 before joining and filtering them.
FTS_OVERFETCH_MIN = 32


class Queries:
    """Read-side SQL of ``Store``."""

    def __init__(self, core: SqlCore) -> None:
        self._core = core
        self.conn = core.conn

    def documents(self) -> dict[str, StoredDoc]:
        rows = self.conn.execute(
            "select id, path, content_hash, parser_id, title_from_filename, "
            "topic_from_frontmatter, title is null from documents"
        )
        return {r[1]: StoredDoc(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5]), bool(r[6])) for r in rows}

    def chunk_signature(self, doc_id: int) -> list[tuple[str | None, str, str]]:
        """(heading, context, content) in order: the frontmatter-only comparison of R4.20."""
        rows = self.conn.execute(
            "select heading, context, content from chunks where document_id=? order by chunk_index", (doc_id,)
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def chunk_inputs(self, doc_id: int) -> list[tuple[int, str, str]]:
        """(chunk id, context, content) in order: what each chunk's embedding was computed from."""
        rows = self.conn.execute(
            "select id, context, content from chunks where document_id=? order by chunk_index", (doc_id,)
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def counts(self) -> tuple[int, int]:
        docs = self._core.count("select count(*) from documents")
        chunks = self._core.count("select count(*) from chunks")
        return docs, chunks

    def awaiting_reparse_count(self) -> int:
        """Rows marked ``awaiting-reparse`` by a parser-policy pass (R4.38)."""
        return self._core.count("select count(*) from documents where content_hash=?", (AWAITING_REPARSE,))

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
        row = self.conn.execute(
            "select sum(quality_score >= ?), sum(quality_score < ?) from chunks", (threshold, threshold)
        ).fetchall()[0]
        return _int(row[0]), _int(row[1])

    def field_row_count(self) -> int:
        """Rows in ``document_fields``: the value rows ``groove status`` reports (R8.12)."""
        return self._core.count("select count(*) from document_fields")

    def fts_candidates(
        self, expression: str, limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) matching an FTS5 expression, best first, filters applied in SQL (R6.18).

        FTS5 ranks and limits first, then only those rows are joined and filtered (issue 16: the
        join over every matching row cost 1.4-1.75x a bare FTS5 query). The ranked set is
        over-fetched; when fewer than ``limit`` of it pass the filters the whole match set is
        joined, as before. Both orders are the total order (bm25, rowid), so the first ``limit``
        passing rows of the over-fetched prefix are exactly the first ``limit`` passing rows of all.
        """
        where = self._core.filter_sql(filters)
        fetch = max(2 * limit, limit + FTS_OVERFETCH_MIN)
        ranked = (
            "with top as materialized (select rowid as id, bm25(fts_chunks, ?, ?, ?) as rank "
            "from fts_chunks where fts_chunks match ? order by rank, rowid limit ?) "
            "select top.id, top.rank from top join chunks c on c.id = top.id "
            f"join documents d on d.id = c.document_id where 1{where.where} order by top.rank, top.id limit ?"
        )
        try:
            cursor = self.conn.execute(ranked, (*weights, expression, fetch, *where.params, limit))
            rows = [(r[0], r[1]) for r in cursor]
            if len(rows) >= limit:
                return rows
            return self.fts_candidates_joined(expression, limit, weights, filters)
        except apsw.SQLError as exc:  # a malformed expression must not crash a search
            raise StoreError(f"full-text query failed: {exc}") from exc

    def fts_candidates_joined(
        self, expression: str, limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """Every matching row joined and filtered, then limited: the fallback, and the reference."""
        where = self._core.filter_sql(filters)
        sql = (
            "select f.rowid, bm25(fts_chunks, ?, ?, ?) as rank from fts_chunks f "
            "join chunks c on c.id = f.rowid join documents d on d.id = c.document_id "
            f"where fts_chunks match ?{where.where} order by rank, f.rowid limit ?"
        )
        try:
            rows = self.conn.execute(sql, (*weights, expression, *where.params, limit))
            return [(r[0], r[1]) for r in rows]
        except apsw.SQLError as exc:
            raise StoreError(f"full-text query failed: {exc}") from exc

    def fts_rowids(self, expression: str) -> set[int]:
        """Every chunk id matching ``expression``: the rowid-only exclusion scan of R6.19."""
        try:
            rows = self.conn.execute("select rowid from fts_chunks where fts_chunks match ?", (expression,))
            return {r[0] for r in rows}
        except apsw.SQLError as exc:
            raise StoreError(f"full-text query failed: {exc}") from exc

    def passing_chunk_ids(self, ids: Sequence[int], filters: SearchFilters) -> set[int]:
        """The subset of ``ids`` that passes ``filters``."""
        if not ids:
            return set()
        where = self._core.filter_sql(filters)
        sql = (
            "select c.id from chunks c join documents d on d.id = c.document_id "
            f"where c.id in ({marks(len(ids))}){where.where}"
        )
        return {r[0] for r in self.conn.execute(sql, (*ids, *where.params))}

    def hit_rows(self, ids: Sequence[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        rows = self.conn.execute(
            "select c.id, d.path, d.title, c.heading, d.topic, d.date, d.tags, c.content, c.context, "
            "c.token_count, c.chunk_index, c.level, c.start_line, c.end_line, c.symbol_kind, c.anchor, "
            "c.table_rows "
            f"from chunks c join documents d on d.id = c.document_id where c.id in ({marks(len(ids))})",
            tuple(ids),
        )
        out = {}
        for r in rows:
            table_rows = tuple((int(a), int(b)) for a, b in json.loads(r[16])) if r[16] else ()
            out[r[0]] = HitRow(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                tuple(json.loads(r[6])),
                r[7],
                r[8],
                r[9],
                r[10],
                r[11],
                start_line=r[12],
                end_line=r[13],
                symbol_kind=r[14],
                anchor=r[15],
                table_rows=table_rows,
            )
        return out


def _int(value: object) -> int:
    """An aggregate such as ``sum`` as an int; NULL (no rows) is 0."""
    return int(value) if isinstance(value, int | float) else 0

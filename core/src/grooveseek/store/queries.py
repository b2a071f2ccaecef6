"""SQL that reads: documents for the indexer, counts, and the two search legs (R6.17–R6.19).

Mixed into ``Store``; ``self.conn`` is its apsw connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import apsw
import numpy as np

from ..errors import StoreError
from ..types import SearchFilters
from .records import AWAITING_REPARSE, HitRow, StoredDoc, _vec_blob


class Queries:
    """Read-side SQL of ``Store``."""

    conn: apsw.Connection

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
        return [tuple(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        docs = self.conn.execute("select count(*) from documents").fetchall()[0][0]
        chunks = self.conn.execute("select count(*) from chunks").fetchall()[0][0]
        return docs, chunks

    def awaiting_reparse_count(self) -> int:
        """Rows marked ``awaiting-reparse`` by a parser-policy pass (R4.38)."""
        rows = self.conn.execute("select count(*) from documents where content_hash=?", (AWAITING_REPARSE,))
        return int(rows.fetchall()[0][0])

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

    def declared_fields(self) -> tuple[str, ...] | None:
        """The recorded declared-field set (R4.13); None while pending (R4.39) or unreadable."""
        rows = self.conn.execute("select value from index_meta where key='declared_fields'").fetchall()
        if not rows:
            return None
        try:
            keys = json.loads(rows[0][0])
        except ValueError:
            return None  # treated as pending: the next completed run records it afresh
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            return None
        return tuple(keys)

    def field_row_count(self) -> int:
        """Rows in ``document_fields``: the value rows ``groove status`` reports (R8.12)."""
        return self.conn.execute("select count(*) from document_fields").fetchall()[0][0]

    def _filter_sql(self, filters: SearchFilters) -> tuple[str, list[object]]:
        """The WHERE fragment (`` and ...``) for every filter of R6.23-R6.29, over ``c`` and ``d``.

        Both legs use it, so a filter cannot apply to one leg and not the other (R6.22).
        """
        clauses: list[str] = []
        params: list[object] = []

        def add(clause: str, *values: object) -> None:
            clauses.append(clause)
            params.extend(values)

        if filters.min_quality > 0:
            add("c.quality_score >= ?", filters.min_quality)
        if filters.category:
            add("d.category = ?", filters.category)
        if filters.topic:
            add("d.topic = ?", filters.topic)
        if filters.path_globs:
            add("groove_path_ok(?, d.path)", json.dumps(list(filters.path_globs), ensure_ascii=False))
        if filters.tags_any:
            tags = _unique(filters.tags_any)
            add(f"exists (select 1 from json_each(d.tags) t where t.value in ({_marks(tags)}))", *tags)
        if filters.tags_all:
            tags = _unique(filters.tags_all)
            add(
                "(select count(distinct t.value) from json_each(d.tags) t where "
                f"t.value in ({_marks(tags)})) = ?",
                *tags,
                len(tags),
            )
        # R6.28: inclusive string comparison; a NULL date fails either bound.
        if filters.date_from:
            add("d.date is not null and d.date >= ?", filters.date_from)
        if filters.date_to:
            add("d.date is not null and d.date <= ?", filters.date_to)
        if filters.fields or filters.fields_not:
            self._fields_sql(filters, add)
        return (" and " + " and ".join(clauses)) if clauses else "", params

    def _fields_sql(self, filters: SearchFilters, add: Callable[..., None]) -> None:
        """R6.29: a key the index did not declare matches nothing under ``fields`` and excludes
        nothing under ``fields_not``, even if a row for it exists (an interrupted run can leave
        rows of a newer schema behind before the declared set is recorded)."""
        declared = set(self.declared_fields() or ())
        held = "select 1 from document_fields f where f.document_id = d.id and f.key = ? and f.value in ({})"
        for key, values in filters.fields.items():
            wanted = _unique(values)
            if key not in declared or not wanted:
                add("0")
            else:
                add(f"exists ({held.format(_marks(wanted))})", key, *wanted)
        for key, values in filters.fields_not.items():
            unwanted = _unique(values)
            if key in declared and unwanted:
                add(f"not exists ({held.format(_marks(unwanted))})", key, *unwanted)

    def fts_candidates(
        self, expression: str, limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) matching an FTS5 expression, best first, filters applied in SQL (R6.18)."""
        where, params = self._filter_sql(filters)
        sql = (
            "select f.rowid, bm25(fts_chunks, ?, ?, ?) as rank from fts_chunks f "
            "join chunks c on c.id = f.rowid join documents d on d.id = c.document_id "
            f"where fts_chunks match ?{where} order by rank, f.rowid limit ?"
        )
        try:
            rows = self.conn.execute(sql, (*weights, expression, *params, limit))
            return [(r[0], r[1]) for r in rows]
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
            "c.token_count, c.chunk_index, c.level, c.start_line, c.end_line, c.symbol_kind, c.table_rows "
            f"from chunks c join documents d on d.id = c.document_id where c.id in ({marks})",
            tuple(ids),
        )
        out = {}
        for r in rows:
            table_rows = tuple((int(a), int(b)) for a, b in json.loads(r[15])) if r[15] else ()
            out[r[0]] = HitRow(
                r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])), *r[7:15], table_rows=table_rows
            )
        return out


def _unique(values: Sequence[str]) -> list[str]:
    """Distinct values in first-seen order (``tags_all`` counts distinct matches)."""
    return list(dict.fromkeys(values))


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))

"""Reads outside the search legs: the indexer's and status's reads, hit rows, the stages' sibling
chunks, the graph's rows and the serving rows (the SQLite store's ``queries``, ``stages``,
``graph``, ``serving`` and ``scan`` parts, in PostgreSQL). Paths sort in code-point order
(``collate "C"``), as SQLite's BINARY collation sorts them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from grooveseek.storekit import (
    AWAITING_REPARSE,
    SNIPPET_CHARS,
    GraphNodeRow,
    HitRow,
    PendingChunk,
    SearchFilters,
    ServingRow,
    SiblingRow,
    StoredDoc,
    embedding_input,
)

from .core import PgCore

_SERVING = "path, parser_id, title, category, topic, size_bytes, last_indexed"
_SIBLING = "c.id, c.chunk_index, c.level, c.content, c.token_count, c.start_line, c.end_line"
_JOIN = "groove_chunks c join groove_documents d on d.id = c.document_id"
_SCAN_BATCH = 1000


def _serving(r: Sequence[Any]) -> ServingRow:
    path, parser_id, title, category, topic, size_bytes, last_indexed = r
    return ServingRow(
        str(path),
        str(parser_id),
        title,
        category,
        topic,
        int(size_bytes) if size_bytes is not None else None,
        str(last_indexed),
    )


class Reads:
    """Read-side SQL of ``PostgresStore`` other than the legs."""

    def __init__(self, core: PgCore) -> None:
        self._core = core

    @property
    def _gen(self) -> int:
        return self._core.gen

    # -- the indexer and status --------------------------------------------------------------------
    def documents(self) -> dict[str, StoredDoc]:
        rows = self._core.rows(
            "select id, path, content_hash, parser_id, title_from_filename, topic_from_frontmatter, "
            "title is null from groove_documents where gen = %s",
            (self._gen,),
        )
        return {r[1]: StoredDoc(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows}

    def chunk_signature(self, doc_id: int) -> list[tuple[str | None, str, str]]:
        rows = self._core.rows(
            "select heading, context, content from groove_chunks where document_id = %s order by chunk_index",
            (doc_id,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def chunk_inputs(self, doc_id: int) -> list[tuple[int, str, str]]:
        rows = self._core.rows(
            "select id, context, content from groove_chunks where document_id = %s order by chunk_index",
            (doc_id,),
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def counts(self) -> tuple[int, int]:
        docs = self._core.count("select count(*) from groove_documents where gen = %s", (self._gen,))
        chunks = self._core.count("select count(*) from groove_chunks where gen = %s", (self._gen,))
        return docs, chunks

    def pending_vectors(self, limit: int, after_chunk_id: int = 0) -> list[PendingChunk]:
        """Chunks of this generation with no vector and id > ``after_chunk_id``, by id."""
        if limit <= 0:
            return []
        rows = self._core.rows(
            "select id, document_id, context, content from groove_chunks where gen = %s "
            "and embedding is null and id > %s order by id limit %s",
            (self._gen, int(after_chunk_id), int(limit)),
        )
        return [PendingChunk(int(r[0]), int(r[1]), embedding_input(str(r[2]), str(r[3]))) for r in rows]

    def vectors_pending(self) -> int:
        return self._core.count(
            "select count(*) from groove_chunks where gen = %s and embedding is null", (self._gen,)
        )

    def awaiting_reparse_count(self) -> int:
        return self._core.count(
            "select count(*) from groove_documents where gen = %s and content_hash = %s",
            (self._gen, AWAITING_REPARSE),
        )

    def corpus_digest(self) -> dict[str, object]:
        """R10.19: the same digest as the SQLite store's over the same chunks."""
        h = hashlib.sha256()
        for path, index, heading, context, content in self.chunk_rows():
            for part in (path, index, heading or "", context, content):
                data = str(part).encode("utf-8")
                h.update(len(data).to_bytes(8, "big") + data)
        docs, chunks = self.counts()
        return {"documents": docs, "chunks": chunks, "digest": h.hexdigest()}

    def chunk_rows(self) -> Iterator[tuple[str, int, str | None, str, str]]:
        """(path, chunk_index, heading, context, content) by path and chunk order, in batches."""
        after: tuple[str, int] | None = None
        while True:
            where = "" if after is None else "and (d.path, c.chunk_index) > (%s, %s)"
            rows = self._core.rows(
                f"select d.path, c.chunk_index, c.heading, c.context, c.content from {_JOIN} "
                f"where c.gen = %s {where} order by d.path, c.chunk_index limit {_SCAN_BATCH}",
                (self._gen, *(after or ())),
            )
            yield from rows
            if len(rows) < _SCAN_BATCH:
                return
            after = (rows[-1][0], rows[-1][1])

    def chunk_texts(self) -> Iterator[tuple[str, str | None, str, str]]:
        """``(path, heading, context, content)`` of every chunk, by path and chunk order (streamed)."""
        for path, _index, heading, context, content in self.chunk_rows():
            yield str(path), heading, str(context), str(content)

    def any_context(self) -> bool:
        return bool(
            self._core.scalar(
                "select exists(select 1 from groove_chunks where gen = %s and context != '')", (self._gen,)
            )
        )

    def quality_counts(self, threshold: float) -> tuple[int, int]:
        row = self._core.rows(
            "select count(*) filter (where quality_score >= %s), count(*) filter (where quality_score < %s) "
            "from groove_chunks where gen = %s",
            (threshold, threshold, self._gen),
        )[0]
        return int(row[0]), int(row[1])

    def field_row_count(self) -> int:
        return self._core.count(
            "select count(*) from groove_fields f join groove_documents d on d.id = f.document_id "
            "where d.gen = %s",
            (self._gen,),
        )

    def last_run_skips(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        raw = self._core.meta("last_run_skips")
        if raw is None:
            return 0, ()
        data = json.loads(raw)
        return int(data["count"]), tuple((f["path"], f["reason"]) for f in data["files"])

    # -- hits and stages ---------------------------------------------------------------------------
    def passing_chunk_ids(self, ids: Sequence[int], filters: SearchFilters) -> set[int]:
        if not ids:
            return set()
        where = self._core.filter_sql(filters)
        rows = self._core.rows(
            f"select c.id from {_JOIN} where c.gen = %s and c.id = any(%s){where.where}",
            (self._gen, list(ids), *where.params),
        )
        return {int(r[0]) for r in rows}

    def hit_rows(self, ids: Sequence[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        rows = self._core.rows(
            "select c.id, d.path, d.title, c.heading, d.topic, d.date, d.tags, c.content, c.context, "
            "c.token_count, c.chunk_index, c.level, c.start_line, c.end_line, c.symbol_kind, c.anchor, "
            f"c.table_rows from {_JOIN} where c.gen = %s and c.id = any(%s)",
            (self._gen, list(ids)),
        )
        out = {}
        for r in rows:
            table_rows = tuple((int(a), int(b)) for a, b in json.loads(r[16])) if r[16] else ()
            out[int(r[0])] = HitRow(
                int(r[0]), r[1], r[2], r[3], r[4], r[5], tuple(r[6]), r[7], r[8], r[9], r[10], r[11],
                start_line=r[12], end_line=r[13], symbol_kind=r[14], anchor=r[15], table_rows=table_rows,
            )  # fmt: skip
        return out

    def document_chunks(self, chunk_id: int, limit: int) -> list[SiblingRow]:
        rows = self._core.rows(
            f"select {_SIBLING} from groove_chunks h join groove_chunks c on c.document_id = h.document_id "
            "where h.id = %s and h.gen = %s order by c.chunk_index limit %s",
            (chunk_id, self._gen, max(0, limit)),
        )
        return [SiblingRow(*r) for r in rows]

    def chunk_neighbours(self, chunk_id: int) -> list[SiblingRow]:
        rows = self._core.rows(
            f"select {_SIBLING} from groove_chunks h join groove_chunks c on c.document_id = h.document_id "
            "where h.id = %s and h.gen = %s "
            "and c.chunk_index between h.chunk_index - 1 and h.chunk_index + 1 "
            "order by c.chunk_index",
            (chunk_id, self._gen),
        )
        return [SiblingRow(*r) for r in rows]

    # -- the graph ---------------------------------------------------------------------------------
    def graph_seed_chunks(self, path: str, limit: int) -> list[int]:
        rows = self._core.rows(
            f"select c.id from {_JOIN} where d.gen = %s and d.path = %s order by c.chunk_index limit %s",
            (self._gen, path, limit),
        )
        return [int(r[0]) for r in rows]

    def graph_candidate_paths(self, ids: Sequence[int], filters: SearchFilters) -> dict[int, str]:
        if not ids:
            return {}
        where = self._core.filter_sql(filters)
        rows = self._core.rows(
            f"select c.id, d.path from {_JOIN} where c.gen = %s and c.id = any(%s){where.where}",
            (self._gen, list(ids), *where.params),
        )
        return {int(r[0]): str(r[1]) for r in rows}

    def graph_node_rows(self, ids: Sequence[int]) -> dict[int, GraphNodeRow]:
        if not ids:
            return {}
        rows = self._core.rows(
            "select c.id, d.path, c.heading, d.title, d.topic, substr(c.content, 1, %s) "
            f"from {_JOIN} where c.gen = %s and c.id = any(%s)",
            (SNIPPET_CHARS + 1, self._gen, list(ids)),
        )
        return {int(r[0]): GraphNodeRow(int(r[0]), *r[1:]) for r in rows}

    # -- serving -----------------------------------------------------------------------------------
    def serving_rows(self) -> list[ServingRow]:
        rows = self._core.rows(
            f"select {_SERVING} from groove_documents where gen = %s order by path", (self._gen,)
        )
        return [_serving(r) for r in rows]

    def serving_rows_in_category(self, category: str | None) -> list[ServingRow]:
        where = "category is null" if category is None else "category = %s"
        params = (self._gen,) if category is None else (self._gen, category)
        rows = self._core.rows(
            f"select {_SERVING} from groove_documents where gen = %s and {where} order by path", params
        )
        return [_serving(r) for r in rows]

    def serving_row(self, path: str) -> ServingRow | None:
        rows = self._core.rows(
            f"select {_SERVING} from groove_documents where gen = %s and path = %s", (self._gen, path)
        )
        return _serving(rows[0]) if rows else None

    def serving_rows_for(self, paths: Sequence[str]) -> dict[str, ServingRow]:
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        rows = self._core.rows(
            f"select {_SERVING} from groove_documents where gen = %s and path = any(%s)", (self._gen, wanted)
        )
        return {str(r[0]): _serving(r) for r in rows}

    def documents_with_parsers_outside(self, active: Sequence[str]) -> tuple[int, str | None]:
        row = self._core.rows(
            "select count(*), min(path) from groove_documents where gen = %s and not (parser_id = any(%s))",
            (self._gen, list(dict.fromkeys(active))),
        )[0]
        return int(row[0] or 0), None if row[1] is None else str(row[1])

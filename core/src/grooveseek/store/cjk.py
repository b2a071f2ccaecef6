"""The CJK short-word table ``fts_cjk``: bigram rows per chunk and the ranked query of the CJK leg
(design; docs/retrieval.md).

All SQL that touches ``fts_cjk`` lives here (its creation and backfill are migration 2 in
``schema.py``), so the table can be replaced without touching the document writes or the other
legs. Filters arrive as the ``FilterSql`` fragment every leg shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

from ..cjk import bigram_text
from ..errors import StoreError

if TYPE_CHECKING:
    from .core import FilterSql

_INSERT = "insert into fts_cjk(rowid, heading, context, content) values (?,?,?,?)"


class CjkTable:
    """``fts_cjk`` on one connection. Writes join the caller's transaction."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn

    def insert(self, chunk_id: int, heading: str, context: str, content: str) -> None:
        self._conn.execute(
            _INSERT, (chunk_id, bigram_text(heading), bigram_text(context), bigram_text(content))
        )

    def delete(self, chunk_ids: Sequence[int]) -> None:
        for chunk_id in chunk_ids:
            self._conn.execute("delete from fts_cjk where rowid=?", (chunk_id,))

    def clear(self) -> None:
        self._conn.execute("delete from fts_cjk")

    def repair(self) -> int:
        """Insert rows for chunks that lack one; returns how many were added."""
        rows = self._conn.execute(
            "select id, coalesce(heading, ''), context, content from chunks "
            "where id not in (select rowid from fts_cjk)"
        ).fetchall()
        self._conn.executemany(
            _INSERT,
            [(cid, bigram_text(str(h)), bigram_text(str(c)), bigram_text(str(t))) for cid, h, c, t in rows],
        )
        return len(rows)

    def candidates(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float, float], filters: FilterSql
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) for chunks holding any of the bigram ``terms``, best first."""
        if not terms:
            return []
        expression = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        sql = (
            "select f.rowid, bm25(fts_cjk, ?, ?, ?) as rank from fts_cjk f "
            "join chunks c on c.id = f.rowid join documents d on d.id = c.document_id "
            f"where fts_cjk match ?{filters.where} order by rank, f.rowid limit ?"
        )
        try:
            rows = self._conn.execute(sql, (*weights, expression, *filters.params, limit))
            return [(r[0], r[1]) for r in rows]
        except apsw.SQLError as exc:
            raise StoreError(f"CJK full-text query failed: {exc}") from exc

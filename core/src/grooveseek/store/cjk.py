"""SQL for the CJK bigram leg: the bigram FTS table and its ranked query (design; docs/retrieval.md).

Mixed into ``Store``; ``self.conn`` is its apsw connection. Rows are written with the chunk in
``documents.py``; filters reuse ``Queries._filter_sql`` so this leg is filtered like the others.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from ..cjk import CJK_SCRIPTS, char_class
from ..errors import StoreError
from ..types import SearchFilters


class CjkQueries:
    """SQL of the CJK bigram leg."""

    conn: apsw.Connection

    def cjk_candidates(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) for chunks holding any of the bigram ``terms``, best first.

        A one-character kanji or kana term is a prefix query, so it matches every bigram that starts
        with it; a word of the non-CJK rest matches that word.
        """
        if not terms:
            return []
        expression = " OR ".join(
            '"' + t.replace('"', '""') + '"' + (" *" if len(t) == 1 and char_class(t) in CJK_SCRIPTS else "")
            for t in terms
        )
        where, params = self._filter_sql(filters)  # type: ignore[attr-defined]
        sql = (
            "select f.rowid, bm25(fts_cjk, ?, ?, ?) as rank from fts_cjk f "
            "join chunks c on c.id = f.rowid join documents d on d.id = c.document_id "
            f"where fts_cjk match ?{where} order by rank, f.rowid limit ?"
        )
        try:
            return [(r[0], r[1]) for r in self.conn.execute(sql, (*weights, expression, *params, limit))]
        except apsw.SQLError as exc:
            raise StoreError(f"CJK full-text query failed: {exc}") from exc

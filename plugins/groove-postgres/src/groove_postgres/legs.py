"""The three search legs in PostgreSQL, ranked as the SQLite store ranks them (SPEC R6.17-R6.22).

- Full text: the phrases of the compiled FTS5 expression are found with ``LIKE`` on the folded
  text (a pg_trgm GIN index), then ranked with FTS5's bm25 over trigram counts: the phrase's
  hits per column, the column weights, the row's trigram count against the generation's average,
  and each phrase's IDF over the whole generation (``text.py``).
- CJK bigrams: postings looked up through a B-tree on (generation, term), a one-character kanji or
  kana term as a prefix range; bm25 over the postings' per-column counts, as FTS5 ranks
  ``fts_cjk``.
- Vectors: pgvector HNSW on the generation's partial index, ``hnsw.iterative_scan =
  relaxed_order`` so a quality threshold never returns a short page, re-sorted by exact distance.

Every leg appends the same filter fragment (``PgCore.filter_sql``), so a filter cannot apply to
one leg and not another. Scores are returned as SQLite returns them (bm25 negated, L2 distance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from grooveseek.storekit import CJK_SCRIPTS, FloatArray, SearchFilters, StoreError, char_class

from .core import PgCore, name_positional
from .postings import fts_from_postings, has_vocabulary, plain_words
from .text import BM25_SQL, K1, B, like_pattern, parse_expression, trigram_fold

MAX_KNN_K = 4096
#: HNSW candidate list: at least this many, and twice k (pgvector caps it at 1000). The composite
#: default model queries one part's slots of a vector with the other slots zero, which HNSW's graph
#: (built on whole vectors) answers less well: on npm-docs, ef 100 lost one of the 50 nearest in 2
#: queries of 30 (nDCG@10 moved by 0.01); ef 200 lost none.
EF_SEARCH = 200
_MAX_EF = 1000
_TRIGRAM_FLOOR = 3  # FTS5's trigram tokenizer matches no phrase shorter than this


def _count(column: str) -> str:
    """Non-overlapping occurrences of ``ph.s`` in ``column`` (bytes: cheaper than characters)."""
    return f"((octet_length({column}) - octet_length(replace({column}, ph.s, ''))) / octet_length(ph.s))"


# A row's bm25 sums its phrases in query order (``order by f.i``), as FTS5 does: another order can
# move the last bit and swap two near-equal rows (the postings path sums in the same order).
# ``f`` (a phrase's weighted hits in a row) is materialised once per (row, phrase): written inline,
# the planner copied it into both halves of the bm25 fraction and counted every phrase twice.
_FTS_SQL = f"""
with m as materialized (
    select c.id, c.ntok, split_part(c.ftext, chr(31), 1) as h, split_part(c.ftext, chr(31), 2) as x,
           split_part(c.ftext, chr(31), 3) as t
    from groove_chunks c join groove_documents d on d.id = c.document_id
    where c.gen = %(gen)s and ({{match}}){{exclude}}{{filters}}),
ph(s, idf, i) as (select * from unnest(%(phrases)s::text[], %(idfs)s::float8[]) with ordinality),
n as materialized (
    select m.id, m.ntok, ph.i, ph.idf, {_count("m.h")} as nh, {_count("m.x")} as nx, {_count("m.t")} as nt
    from m cross join ph),
f as (select id, ntok, i, idf, (%(wh)s * nh + %(wc)s * nx + %(wt)s * nt)::float8 as f from n
      where nh + nx + nt > 0)
select f.id, -sum({BM25_SQL} order by f.i) as rank from f
group by f.id order by rank, f.id limit %(limit)s
"""

_CJK_SQL = """
with q(i, term, prefix) as (select * from unnest(%(idx)s::int[], %(terms)s::text[], %(prefix)s::bool[])),
post as (
    select q.i, b.chunk_id, sum(%(wh)s * b.h + %(wc)s * b.c + %(wt)s * b.t)::float8 as f
    from q join groove_bigrams b on b.gen = %(gen)s and b.term = q.term where not q.prefix
    group by q.i, b.chunk_id
    union all
    select q.i, b.chunk_id, sum(%(wh)s * b.h + %(wc)s * b.c + %(wt)s * b.t)::float8
    from q join groove_bigrams b on b.gen = %(gen)s and b.term >= q.term and b.term < q.term || U&'\\+10FFFF'
    where q.prefix group by q.i, b.chunk_id),
nh as (select i, count(*)::float8 as n from post group by i),
scored as (
    select p.chunk_id as id, sum(greatest(ln((%(n)s - nh.n + 0.5) / (nh.n + 0.5)), 1e-6) * p.f * %(k1p)s
        / (p.f + %(k1)s * (%(one_b)s + %(b)s * c.cjk_ntok / %(avgdl)s))) as score
    from post p join nh using (i) join groove_chunks c on c.id = p.chunk_id group by p.chunk_id)
select s.id, -s.score as rank from scored s join groove_chunks c on c.id = s.id
join groove_documents d on d.id = c.document_id where true {filters}
order by rank, s.id limit %(limit)s
"""


class Legs:
    """The search legs and the vector reads of ``PostgresStore``."""

    def __init__(self, core: PgCore) -> None:
        self._core = core
        #: Rank plain-word English queries from term postings (``postings.py``) when the
        #: generation has its vocabulary; False forces the ``LIKE`` path (bench/million.py
        #: measures both; the scores are the same).
        self.term_postings = True

    # -- full text ---------------------------------------------------------------------------------
    def _like_any(self, phrases: Sequence[str], params: list[Any]) -> str:
        params.extend(like_pattern(p) for p in phrases)
        return " or ".join(["c.ftext like %s"] * len(phrases))

    def _stats(self, column: str) -> tuple[float, float]:
        """(chunks, average token count) of the generation: bm25's N and avgdl, from the totals the
        writes keep (``groove_gen_stats``); a generation written before they existed is counted."""
        row = self._core.rows(
            f"select chunks, {column} from groove_gen_stats where gen = %s", (self._core.gen,)
        )
        if not row:
            row = self._core.rows(
                f"select count(*), coalesce(sum({column}), 0) from groove_chunks where gen = %s",
                (self._core.gen,),
            )
        total, tokens = float(row[0][0]), float(row[0][1])
        return total, (tokens / total if total else 0.0)

    def fts_candidates(
        self, expression: str, limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) for chunks matching the expression, best first, filtered (R6.18)."""
        positive, negative = parse_expression(expression)
        positive = [p for p in dict.fromkeys(positive) if len(p) >= _TRIGRAM_FLOOR]
        negative = [p for p in negative if len(p) >= _TRIGRAM_FLOOR]
        if not positive or limit <= 0:
            return []
        total, avgdl = self._stats("ntok")
        where = self._core.filter_sql(filters)
        if self.term_postings and plain_words(positive) and has_vocabulary(self._core):
            return fts_from_postings(self._core, positive, negative, (total, avgdl), (limit, weights, where))
        hits = self._phrase_hits(positive)
        idfs = [max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6) for n in hits]
        params: list[Any] = []
        match = self._like_any(positive, params)
        match_params = list(params)
        params.clear()
        exclude = f" and not ({self._like_any(negative, params)})" if negative else ""
        sql = _FTS_SQL.format(match=match, exclude=exclude, filters=where.where)
        # Named and positional parameters cannot mix: the fragments' %s become numbered names.
        named, sql = name_positional(sql, [*match_params, *params, *where.params])
        named.update(
            gen=self._core.gen,
            phrases=positive,
            idfs=idfs,
            avgdl=max(avgdl, 1e-9),
            wh=weights[0],
            wc=weights[1],
            wt=weights[2],
            limit=limit,
        )
        return [(int(r[0]), float(r[1])) for r in self._core.rows(sql, named)]

    def _phrase_hits(self, phrases: Sequence[str]) -> list[int]:
        """Rows of the generation holding each phrase (bm25's n(q) for its IDF)."""
        params: list[Any] = [like_pattern(p) for p in phrases]
        counts = ", ".join("count(*) filter (where c.ftext like %s)" for _ in phrases)
        where_params: list[Any] = []
        match = self._like_any(phrases, where_params)
        row = self._core.rows(
            f"select {counts} from groove_chunks c where c.gen = %s and ({match})",
            (*params, self._core.gen, *where_params),
        )[0]
        return [int(v) for v in row]

    def fts_rowids(self, expression: str) -> set[int]:
        """Every chunk id matching ``expression``: the exclusion scan of R6.19."""
        positive, negative = parse_expression(expression)
        positive = [p for p in positive if len(p) >= _TRIGRAM_FLOOR]
        negative = [p for p in negative if len(p) >= _TRIGRAM_FLOOR]
        if not positive:
            return set()
        params: list[Any] = [self._core.gen]
        match = self._like_any(positive, params)
        exclude = f" and not ({self._like_any(negative, params)})" if negative else ""
        rows = self._core.rows(
            f"select c.id from groove_chunks c where c.gen = %s and ({match}){exclude}", params
        )
        return {int(r[0]) for r in rows}

    # -- CJK bigrams -------------------------------------------------------------------------------
    def cjk_candidates(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float, float], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) for chunks holding any of the bigram ``terms``, best first, filtered."""
        folded = list(dict.fromkeys(trigram_fold(t) for t in terms if t))
        if not folded or limit <= 0:
            return []
        total, avgdl = self._stats("cjk_ntok")
        if total == 0:
            return []
        where = self._core.filter_sql(filters)
        named, fragment = name_positional(where.where, list(where.params))
        named.update(
            idx=list(range(len(folded))),
            terms=folded,
            prefix=[len(t) == 1 and char_class(t) in CJK_SCRIPTS for t in folded],
            gen=self._core.gen,
            wh=weights[0],
            wc=weights[1],
            wt=weights[2],
            n=total,
            k1=K1,
            k1p=K1 + 1,
            b=B,
            one_b=1 - B,
            avgdl=max(avgdl, 1e-9),
            limit=limit,
        )
        try:
            rows = self._core.rows(_CJK_SQL.format(filters=fragment), named)
        except Exception as exc:
            raise StoreError(f"CJK full-text query failed: {exc}") from exc
        return [(int(r[0]), float(r[1])) for r in rows]

    # -- vectors -----------------------------------------------------------------------------------
    def knn(self, vector: FloatArray, k: int, min_quality: float = 0.0) -> list[tuple[int, float]]:
        """Nearest chunks by L2 distance through HNSW with iterative scans, k <= 4096 (R6.17);
        chunks under ``min_quality`` are left out inside the scan."""
        dimension = self._core.dimension()
        k = min(k, MAX_KNN_K)
        if dimension is None or k <= 0:
            return []
        query = np.ascontiguousarray(vector, dtype=np.float32)
        if query.shape != (dimension,):
            raise StoreError(
                f"a query vector of {query.shape} cannot search an index of {dimension} dimensions"
            )
        gen = int(self._core.gen)
        distance = f"embedding::vector({dimension}) <-> %(q)s::vector({dimension})"
        conn = self._core.conn
        with conn.transaction():
            conn.execute(f"set local hnsw.ef_search = {min(_MAX_EF, max(EF_SEARCH, 2 * k))}")
            conn.execute("set local hnsw.iterative_scan = relaxed_order")
            rows = conn.execute(
                f"select id, {distance} from groove_chunks where gen = {gen} "
                f"and vector_dims(embedding) = {dimension} "
                "and quality_score >= %(mq)s "
                f"order by {distance} limit %(k)s",
                {"q": query, "mq": min_quality, "k": k},
            ).fetchall()
        # relaxed_order may return neighbours slightly out of order: sort by exact distance.
        return sorted(((int(r[0]), float(r[1])) for r in rows), key=lambda hit: (hit[1], hit[0]))

    def knn_many(
        self, vectors: FloatArray, k: int, min_quality: float = 0.0
    ) -> list[list[tuple[int, float]]]:
        return [self.knn(vector, k, min_quality) for vector in vectors]

    def vectors_for(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored embeddings of ``ids`` (float32); ids without a row are absent (R6.35)."""
        unique = list(dict.fromkeys(ids))
        if not unique or self._core.dimension() is None:
            return {}
        rows = self._core.rows(
            "select id, embedding from groove_chunks "
            "where gen = %s and id = any(%s) and embedding is not null",
            (self._core.gen, unique),
        )
        return {int(r[0]): np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows}

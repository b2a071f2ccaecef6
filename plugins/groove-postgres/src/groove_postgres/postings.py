"""The English full-text leg from term postings: FTS5's trigram bm25 without scanning the text.

A query of plain words (each phrase ASCII letters and digits, as ``compile_query`` writes a query
of words) is answered from ``groove_bigrams``, the postings the CJK leg already keeps, which hold
every chunk's lower-cased words with their count per column. FTS5's trigram MATCH is a substring
test, so a phrase is found in every vocabulary term that holds it (``groove_terms``, a pg_trgm GIN
index over each generation's distinct terms): ``pack`` in ``package`` and ``unpack``. A phrase of
letters and digits cannot cross a word boundary, so its occurrences in a column are the sum over
the column's words of (occurrences in the word) x (the word's count): the same numbers the ``LIKE``
path counts in the folded text, hence the same bm25 (``legs.py``; parity is tested). The cost is
one B-tree range per matching term and one row per (chunk, phrase), where the ``LIKE`` path
rechecked and re-counted the whole text of every candidate row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .core import FilterSql, PgCore, name_positional
from .text import BM25_SQL, like_pattern

#: Terms shorter than a trigram are never looked up (FTS5 matches no phrase under 3 characters).
MIN_TERM = 3
_PLAIN = re.compile(r"[a-z0-9]+")

_SQL = f"""
with ph(i, s, pat) as (select * from unnest(%(idx)s::int[], %(phrases)s::text[], %(patterns)s::text[])),
t as (select ph.i, v.term, (length(v.term) - length(replace(v.term, ph.s, ''))) / length(ph.s) as k
      from ph join groove_terms v on v.gen = %(gen)s and v.term like ph.pat),
p as materialized (
    select t.i, b.chunk_id, sum(t.k * b.h) as nh, sum(t.k * b.c) as nx, sum(t.k * b.t) as nt
    from t join groove_bigrams b on b.gen = %(gen)s and b.term = t.term group by t.i, b.chunk_id),
df as (select i, count(*)::float8 as n from p group by i),
-- The candidates' rows by primary key (an array, so the planner probes the index rather than
-- hashing the whole table, which it did for a CTE of unknown size).
c as materialized (
    select c.id, c.ntok from groove_chunks c join groove_documents d on d.id = c.document_id
    where c.id = any(array(select distinct chunk_id from p order by 1)){{exclude}}{{filters}}),
f as (
    select p.chunk_id as id, p.i, c.ntok, greatest(ln((%(total)s - df.n + 0.5) / (df.n + 0.5)), 1e-6) as idf,
           (%(wh)s * p.nh + %(wc)s * p.nx + %(wt)s * p.nt)::float8 as f
    from p join df using (i) join c on c.id = p.chunk_id)
select f.id, -sum({BM25_SQL} order by f.i) as rank from f group by f.id order by rank, f.id limit %(limit)s
"""


def plain_words(phrases: Sequence[str]) -> bool:
    """Whether every phrase is ASCII letters and digits (folded), the case postings answer."""
    return all(_PLAIN.fullmatch(p) for p in phrases)


def has_vocabulary(core: PgCore) -> bool:
    """Whether the generation's ``groove_terms`` is complete (created since the table existed)."""
    return bool(core.scalar("select term_vocab from groove_gen_stats where gen = %s", (core.gen,)))


def fts_from_postings(
    core: PgCore,
    positive: Sequence[str],
    negative: Sequence[str],
    stats: tuple[float, float],
    query: tuple[int, tuple[float, float, float], FilterSql],
) -> list[tuple[int, float]]:
    """(chunk id, bm25 negated) best first, as ``Legs.fts_candidates`` ranks them; ``stats`` is
    (chunks, average trigram count) of the generation, ``query`` (limit, column weights, filter)."""
    limit, weights, where = query
    total, avgdl = stats
    exclude = (" and not (" + " or ".join(["c.ftext like %s"] * len(negative)) + ")") if negative else ""
    sql = _SQL.format(exclude=exclude, filters=where.where)
    named, sql = name_positional(sql, [*(like_pattern(p) for p in negative), *where.params])
    named.update(
        idx=list(range(len(positive))),
        phrases=list(positive),
        patterns=[like_pattern(p) for p in positive],
        gen=core.gen,
        total=total,
        avgdl=max(avgdl, 1e-9),
        wh=weights[0],
        wc=weights[1],
        wt=weights[2],
        limit=limit,
    )
    return [(int(r[0]), float(r[1])) for r in core.rows(sql, named)]

"""The retrieval legs: FTS5 trigram, sqlite-vec KNN, and the CJK bigram leg (SPEC R6.17–R6.22).

Each leg returns a ranked ``LegResult`` after filters and exclusions, so fusion sees identically
filtered lists (R6.22). With a filter active each leg over-fetches and stops at n survivors (R6.21).
"""

from __future__ import annotations

import attrs

from ..cjk import query_bigrams
from ..langmix import routed_knn
from ..store.interface import IndexStore
from .query import CompiledQuery
from .queryvectors import QueryVectors
from .request import SearchRequest

MAX_KNN = 4096


@attrs.frozen
class LegResult:
    """Chunk ids best first, with the leg's raw score per id (bm25, L2 distance, ...)."""

    name: str
    ids: tuple[int, ...]
    scores: dict[int, float] = attrs.field(factory=dict)


def fetch_size(n: int, filtered: bool) -> int:
    """R6.21: with a filter active each leg over-fetches, then stops at n survivors."""
    return min(n * 10, 10_000) if filtered else n


def fts_leg(store: IndexStore, compiled: CompiledQuery, n: int, req: SearchRequest) -> LegResult:
    if compiled.expression is None or "fts" not in req.legs:
        return LegResult("fts", ())
    ranked = store.fts_candidates(compiled.expression, n, req.fusion.weights, req.filters)
    return LegResult("fts", tuple(cid for cid, _ in ranked), dict(ranked))


def excluded_ids(store: IndexStore, compiled: CompiledQuery) -> set[int]:
    """R6.19: the rowid-only scan of the negative expression, computed only when there are negatives."""
    return store.fts_rowids(compiled.negative_expression) if compiled.negative_expression else set()


def vector_leg(
    store: IndexStore,
    queries: QueryVectors,
    compiled: CompiledQuery,
    n: int,
    req: SearchRequest,
    excluded: set[int],
) -> LegResult:
    if "vector" not in req.legs or not compiled.positive_text.strip():
        return LegResult("vector", ())
    # The quality threshold is applied inside the scan, before the top k: 99 % of chunks pass it,
    # so counting it as a filter would fetch ten times the neighbours for nothing (issue 16).
    quality = req.filters.min_quality
    filtered = attrs.evolve(req.filters, min_quality=0.0).active or bool(excluded)
    vector = queries.vector(compiled.positive_text)  # checked where a model made it (R5.4)
    # issue 26: a query routed to several composite parts is scored over the parts each row has
    candidates = routed_knn(store, queries.composite, vector, min(fetch_size(n, filtered), MAX_KNN), quality)
    if filtered:
        passing = store.passing_chunk_ids([cid for cid, _ in candidates], req.filters)
        candidates = [(cid, d) for cid, d in candidates if cid in passing and cid not in excluded]
    candidates = candidates[:n]
    return LegResult("vector", tuple(cid for cid, _ in candidates), dict(candidates))


def cjk_leg(
    store: IndexStore, compiled: CompiledQuery, n: int, req: SearchRequest, excluded: set[int]
) -> LegResult:
    """Bigram BM25 over kanji and kana, which the trigram leg cannot split (design; docs/retrieval.md).

    Empty (and free) unless the positive text holds kanji or kana; at most 64 bigrams are OR-ed.
    Exclusions are FTS5's judgement, as for the vector leg (R6.19); over-fetch when anything is
    excluded so the leg still yields n.
    """
    terms = query_bigrams(compiled.positive_text)
    if "cjk" not in req.legs or not terms:
        return LegResult("cjk", ())
    fetch = fetch_size(n, True) if excluded else n
    ranked = [
        (cid, s)
        for cid, s in store.cjk_candidates(terms, fetch, req.fusion.weights, req.filters)
        if cid not in excluded
    ][:n]
    return LegResult("cjk", tuple(cid for cid, _ in ranked), dict(ranked))

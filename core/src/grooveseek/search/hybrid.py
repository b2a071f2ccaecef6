"""Hybrid retrieval: the vector leg, the FTS leg, and Reciprocal Rank Fusion (SPEC §6.4–6.6, R6.40).

``hybrid_search`` is the basic pipeline: compile → both legs with filters and exclusions →
RRF → ``low_confidence`` → wrap. Later stages (rerank, MMR, parent retriever, match_spans) plug in
between fusion and wrapping.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..interfaces import Embedder
from ..store.store import HitRow, Store
from ..types import Hit, SearchFilters, SearchResponse
from .query import CompiledQuery, compile_query

MAX_LIMIT = 1000
MAX_KNN = 4096


@attrs.frozen
class FusionSettings:
    rrf_k: float = 60.0
    heading_weight: float = 2.0
    context_weight: float = 1.0
    content_weight: float = 1.0


@attrs.frozen
class SearchRequest:
    query: str
    limit: int = 5
    filters: SearchFilters = attrs.field(factory=SearchFilters)
    min_confidence_ratio: float = 1.5
    fusion: FusionSettings = attrs.field(factory=FusionSettings)
    legs: tuple[str, ...] = ("fts", "vector")  # eval ablations run one leg alone


def clamp_limit(limit: int) -> int:
    """R6.4: clamp to [1, 1000] without error."""
    return max(1, min(MAX_LIMIT, int(limit)))


def rrf(legs: Sequence[Sequence[int]], k: float) -> list[tuple[int, float]]:
    """R6.31: sum of 1/(k + r + 1) over legs, 0-based r; ties broken by ascending chunk id."""
    scores: dict[int, float] = {}
    for ranked in legs:
        for rank, chunk_id in enumerate(ranked):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def low_confidence(scores: Sequence[float], ratio: float) -> bool:
    """R6.40: n ≥ 2, ratio ≠ 0, mean > 0 and max/mean < ratio."""
    if len(scores) < 2 or ratio == 0:
        return False
    mean = sum(scores) / len(scores)
    return mean > 0 and max(scores) / mean < ratio


def _fetch_size(n: int, filtered: bool) -> int:
    """R6.21: with a filter active each leg over-fetches, then stops at n survivors."""
    return min(n * 10, 10_000) if filtered else n


def _fts_leg(store: Store, compiled: CompiledQuery, n: int, req: SearchRequest) -> list[int]:
    if compiled.expression is None or "fts" not in req.legs:
        return []
    f = req.fusion
    return store.fts_candidates(
        compiled.expression, n, (f.heading_weight, f.context_weight, f.content_weight), req.filters
    )


def _vector_leg(
    store: Store, embedder: Embedder, compiled: CompiledQuery, n: int, req: SearchRequest
) -> list[int]:
    if "vector" not in req.legs or not compiled.positive_text.strip():
        return []
    filtered = req.filters.active or bool(compiled.negative)
    vector = embedder.embed_query(compiled.positive_text)
    candidates = [cid for cid, _ in store.knn(vector, min(_fetch_size(n, filtered), MAX_KNN))]
    if not filtered:
        return candidates[:n]
    passing = store.passing_chunk_ids(candidates, req.filters)
    excluded: set[int] = set()
    if compiled.negative_expression:
        excluded = store.fts_rowids(compiled.negative_expression)
    return [cid for cid in candidates if cid in passing and cid not in excluded][:n]


def _hit(row: HitRow, score: float) -> Hit:
    return Hit(
        chunk_id=row.chunk_id,
        score=score,
        path=row.path,
        title=row.title,
        heading=row.heading,
        topic=row.topic,
        date=row.date,
        tags=row.tags,
        content=row.content,
        start_line=row.start_line,
        end_line=row.end_line,
        symbol_kind=row.symbol_kind,
    )


def filter_applied(req: SearchRequest, compiled: CompiledQuery, ratio_given: bool) -> dict[str, object]:
    """R6.54: echo only what arrived with an effect."""
    out: dict[str, object] = {}
    if req.filters.category:
        out["category"] = req.filters.category
    if req.filters.topic:
        out["topic"] = req.filters.topic
    if ratio_given:
        out["min_confidence_ratio"] = req.min_confidence_ratio
    if compiled.negative:
        out["excluded_terms"] = list(compiled.negative)
    return out


def hybrid_search(
    store: Store, embedder: Embedder, req: SearchRequest, *, ratio_given: bool = False
) -> SearchResponse:
    """Run the basic hybrid pipeline and return the R6.52 wrapper."""
    compiled = compile_query(req.query)
    limit = clamp_limit(req.limit)
    pool = max(limit * 5, 50)
    fts_ids = _fts_leg(store, compiled, pool, req)
    vec_ids = _vector_leg(store, embedder, compiled, pool, req)
    fused = rrf([fts_ids, vec_ids], req.fusion.rrf_k)[:limit]
    rows = store.hit_rows([cid for cid, _ in fused])
    hits = tuple(_hit(rows[cid], score) for cid, score in fused if cid in rows)
    return SearchResponse(
        results=hits,
        low_confidence=low_confidence([h.score for h in hits], req.min_confidence_ratio),
        filter_applied=filter_applied(req, compiled, ratio_given),
    )

"""The search pipeline in its fixed order (SPEC R6.1): compile → legs → fusion → section grouping →
rerank → MMR →
low_confidence → parent retriever → match_spans → wrap. A stage that is off is a no-op.

Every surface (CLI, MCP, eval, tune) calls ``run_search``; nothing else orchestrates stages.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..interfaces import Reranker
from ..store.interface import IndexStore
from ..store.records import HitRow
from ..types import Hit, SearchResponse
from .confidence import low_confidence
from .filters import require_declared_fields, validate_filters
from .fusion import LegWeights, fuse, fusion_method, leg_weights
from .legs import LegResult, cjk_leg, excluded_ids, fts_leg, vector_leg
from .mmr import mmr_select
from .parent import expand
from .query import CompiledQuery, compile_query
from .queryvectors import QueryVectors
from .request import SearchRequest
from .rerank import rerank
from .sections import GroupedPool, group_pool, section_lines
from .spans import match_spans, span_terms


def pool_sizes(limit: int, *, mmr: bool, rerank: bool) -> tuple[int, int]:
    """R6.20: (per-leg fetch size, fused pool size)."""
    p = max(limit * 5, 50)
    if mmr:
        return p, p
    if rerank:
        return max(p * 5, 50), p
    return p, limit


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
        **row.marks(),  # type: ignore[arg-type]
    )


def filter_applied(req: SearchRequest, compiled: CompiledQuery) -> dict[str, object]:
    """R6.54: echo only what arrived with an effect, in a fixed order."""
    f = req.filters
    out: dict[str, object] = {}
    for key in ("category", "topic", "path_globs", "tags_any", "tags_all", "date_from", "date_to"):
        value = getattr(f, key)
        if value:
            out[key] = list(value) if isinstance(value, tuple) else value
    if req.ratio_given:
        out["min_confidence_ratio"] = req.min_confidence_ratio
    if compiled.negative:
        out["excluded_terms"] = list(compiled.negative)
    for key in ("fields", "fields_not"):
        value = getattr(f, key)
        if value:
            out[key] = {k: list(v) for k, v in value.items()}
    return out


def _explain(
    legs: Sequence[LegResult],
    cid: int,
    rrf_score: float,
    rerank_score: float | None,
    weights: LegWeights,
    k: float,
    method: str = "rrf",
) -> dict[str, object]:
    """Per leg: rank, raw score, weight and, for RRF, its share of the fused score (``w / (k + rank)``);
    the fused score under its method's name (``rrf`` or ``convex``)."""
    out: dict[str, object] = {}
    for leg in legs:
        if cid in leg.ids:
            rank = leg.ids.index(cid) + 1
            weight = weights.weights[leg.name]
            entry: dict[str, object] = {"rank": rank, "score": leg.scores.get(cid), "weight": weight}
            if method == "rrf":
                entry["rrf"] = weight / (k + rank)
            out[leg.name] = entry
    out[method] = rrf_score
    if weights.rule is not None:
        out["fusion_rule"] = weights.rule
    if rerank_score is not None:
        out["rerank"] = rerank_score
    return out


def _fused_pool(
    store: IndexStore,
    legs: Sequence[LegResult],
    weights: LegWeights,
    req: SearchRequest,
    method: str,
    pool_size: int,
) -> GroupedPool:
    """Fuse the legs by ``method``, then keep ``pool_size`` hits: sections when grouping is on
    (issue 27, ``sections``), else chunks."""
    fused = fuse(
        [(leg.name, leg.ids, leg.scores) for leg in legs],
        [weights.weights[leg.name] for leg in legs],
        method=method,
        k=req.fusion.rrf_k,
    )
    if req.sections:
        return group_pool(store, fused, pool_size)
    fused = fused[:pool_size]
    return GroupedPool(fused, store.hit_rows([cid for cid, _ in fused]), {})


def _legs(
    store: IndexStore, queries: QueryVectors, compiled: CompiledQuery, fetch: int, req: SearchRequest
) -> list[LegResult]:
    excluded = excluded_ids(store, compiled)
    return [
        fts_leg(store, compiled, fetch, req),
        vector_leg(store, queries, compiled, fetch, req, excluded),
        cjk_leg(store, compiled, fetch, req, excluded),
    ]


def run_search(
    store: IndexStore, queries: QueryVectors, req: SearchRequest, *, reranker: Reranker | None = None
) -> SearchResponse:
    """Run the whole pipeline for one request and return the R6.52 wrapper.

    ``queries`` gives the query vector and the languages fusion weighs the vector leg by; every
    surface passes one (``ModelQueries`` over the embedder, or ``CachedQueries`` holding vectors
    computed beforehand), so the same query ranks identically wherever it is asked.
    """
    validate_filters(req.filters)  # R6.30: every surface is bound, not only the MCP boundary
    require_declared_fields(store, req.filters)
    queries = queries.over(store)  # the composite routes a query by this index's language mix
    compiled = compile_query(req.query)
    do_rerank = req.rerank and reranker is not None
    fetch, pool_size = pool_sizes(req.limit, mmr=req.mmr is not None, rerank=do_rerank)
    legs = _legs(store, queries, compiled, fetch, req)
    # Issue 26: while an index run fills vectors, the lexical legs see every chunk and the vector
    # leg those that have a vector; the answer says how many it could not see.
    pending = store.vectors_pending()
    weights = leg_weights(
        req.fusion.explicit_leg_weights,
        queries.languages,
        compiled.positive_text,
        lexical_hits=any(leg.ids for leg in legs if leg.name != "vector"),
    )
    method = fusion_method(req.fusion.method, compiled.positive_text)
    grouped = _fused_pool(store, legs, weights, req, method, pool_size)
    fused, rows, members = grouped.fused, grouped.rows, grouped.members
    pool = [(rows[cid], score) for cid, score in fused if cid in rows]
    rrf_scores = {row.chunk_id: score for row, score in pool}
    rerank_scores: dict[int, float] = {}
    if do_rerank and reranker is not None:  # do_rerank implies it; spelled out for the type checker
        pool = rerank(reranker, compiled.positive_text, pool, req.limit if req.mmr is None else len(pool))
        rerank_scores = {row.chunk_id: score for row, score in pool}
    if req.mmr is not None:
        pool = mmr_select(store, pool, req.mmr, req.limit)
    pool = pool[: req.limit]
    # R6.49: the positive FTS phrases (a quoted phrase is one term), else the positive text's words,
    # less the stopwords and particles that would highlight every hit (span_terms).
    terms = (
        span_terms(compiled.positive, phrases=True)
        if compiled.positive
        else span_terms(compiled.positive_text.split())
    )
    top = pool[0][0] if pool else None
    top_text = f"{top.title or ''}\n{top.heading or ''}\n{top.content}" if top else None
    flag = low_confidence(terms, top_text, req.min_confidence_ratio)
    hits = []
    for row, score in pool:
        hit = _hit(row, score)
        if row.chunk_id in members:
            start, end = section_lines(rows, members[row.chunk_id])
            section = {"start_line": start, "end_line": end, "pieces": len(members[row.chunk_id])}
            hit = attrs.evolve(hit, section=section)
        if req.parent is not None:
            hit = expand(store, hit, row, req.parent)
        spans = match_spans(hit.content, terms) if compiled.positive_text.strip() else None
        hit = attrs.evolve(hit, match_spans=spans)
        if req.explain:
            hit = attrs.evolve(
                hit,
                explain=_explain(
                    legs,
                    row.chunk_id,
                    rrf_scores[row.chunk_id],
                    rerank_scores.get(row.chunk_id),
                    weights,
                    req.fusion.rrf_k,
                    method,
                ),
            )
        hits.append(hit)
    return SearchResponse(
        results=tuple(hits),
        low_confidence=flag,
        filter_applied=filter_applied(req, compiled),
        vectors_pending=pending,
    )

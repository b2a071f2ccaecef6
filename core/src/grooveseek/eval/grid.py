"""``groove tune``'s searches: the golden queries under every grid condition (SPEC §10.6, R10.24).

Every condition runs the golden queries through the production pipeline (``run_search``) with no
reranker, MMR, parent retriever or filters. The 384 conditions share most of their work: the query
embedding, the vector leg and the hit rows never depend on the fusion settings, and the full-text
legs depend only on the bm25 weights. ``memoised`` puts a memo in front of the store and
``CachedQueries`` embeds each query once, so tune costs about 64 full-text queries per golden query,
not 384 searches. The decision rules over the scores live in ``eval/tune.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import attrs
import numpy as np

from ..search.pipeline import run_search
from ..search.query import compile_query
from ..search.queryvectors import QueryVectors
from ..search.request import FusionSettings, SearchRequest, clamp_limit
from ..store.interface import IndexStore
from ..types import Hit, SearchFilters
from .golden import GoldenSet
from .runner import SearchFn, run_eval
from .tune import GRID, Condition

__all__ = ["candidates", "condition_search", "fusion_settings", "memoised", "score_grid"]


def _key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(_key(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    try:
        hash(value)
    except TypeError:  # e.g. SearchFilters holds dicts; its repr is complete and deterministic
        return (type(value).__name__, repr(value))
    return value


class _Memo:
    """Memoises every method call of a read-only object (the store during tune)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self._cache: dict[Any, Any] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            key = (name, _key(args), _key(tuple(sorted(kwargs.items()))))
            if key not in self._cache:
                self._cache[key] = attr(*args, **kwargs)
            return self._cache[key]

        return call


def memoised(store: IndexStore) -> IndexStore:
    """``store`` with every read answered once per distinct arguments (read-only use only)."""
    return cast(IndexStore, _Memo(store))


def candidates(store: IndexStore, query: str) -> int:
    """R10.24: full-text candidates of the positive expression, minus the excluded rows."""
    compiled = compile_query(query)
    if compiled.expression is None:
        return 0
    rows = store.fts_rowids(compiled.expression)
    if compiled.negative_expression:
        rows = rows - store.fts_rowids(compiled.negative_expression)
    return len(rows)


def fusion_settings(c: Condition, base: FusionSettings | None = None) -> FusionSettings:
    """``base`` (the config's ``[search.fusion]``: method, leg weights) with the condition's RRF
    constant and bm25 column weights, so tune ranks as ``search`` and ``eval`` do (issue 27)."""
    return attrs.evolve(
        base or FusionSettings(),
        rrf_k=c.rrf_k,
        heading_weight=c.heading,
        context_weight=c.context,
        content_weight=c.content,
    )


def condition_search(
    store: IndexStore,
    queries: QueryVectors,
    condition: Condition,
    limit: int,
    base: SearchRequest | None = None,
) -> SearchFn:
    """The search one grid condition ranks golden queries with (no filters, reranker, MMR or parent).

    ``base`` is the request the config resolves to (fusion method, leg weights, section grouping);
    only the condition's fusion knobs replace its own.
    """
    if base is None:
        base = SearchRequest(query="", filters=SearchFilters())
    base = attrs.evolve(base, limit=limit, fusion=fusion_settings(condition, base.fusion))

    def search(query: str, k: int) -> tuple[Hit, ...]:
        request = attrs.evolve(base, query=query, limit=clamp_limit(k))
        return run_search(store, queries, request).results

    return search


def score_grid(
    store: IndexStore,
    queries: QueryVectors,
    golden: GoldenSet,
    ks: tuple[int, ...],
    limit: int,
    progress: Callable[[int], None],
    base: SearchRequest | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """nDCG@5 and the secondary metrics for every condition (rows) and query (columns), each
    condition over ``base`` (``condition_search``)."""
    n = len(golden.queries)
    primary = np.zeros((len(GRID), n))
    secondary = {f"recall@{k}": np.zeros((len(GRID), n)) for k in ks} | {"MRR": np.zeros((len(GRID), n))}
    for i, condition in enumerate(GRID):
        search = condition_search(store, queries, condition, limit, base)
        run = run_eval(golden, search, k_values=ks, limit=limit, fingerprint={}, corpus={})
        for j, result in enumerate(run.per_query):
            primary[i, j] = result.metrics.ndcg_at_k[5]
            secondary["MRR"][i, j] = result.metrics.reciprocal_rank
            for k in ks:
                secondary[f"recall@{k}"][i, j] = result.metrics.recall_at_k[k]
        progress(i + 1)
    return primary, secondary

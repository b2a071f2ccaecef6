"""Running a golden set against a search function and scoring it (SPEC R10.4–R10.9, R10.14).

The runner owns the per-query loop, the effective limit, the metrics per query and their means.
It does not know how search is configured: the caller passes a ``search(query, limit)`` that is
already the production pipeline with no filters and the eval reranker / MMR / parent settings
(R10.4), plus the fingerprint and corpus it built. That keeps this module free of the index, the
models and the CLI, and lets tests drive it with a fake search.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import GrooveError
from ..search.request import MAX_LIMIT
from ..types import Hit
from .errors import EvalError
from .golden import GoldenQuery, GoldenSet
from .metrics import first_match_ranks, ndcg_at_k, recall_at_k, reciprocal_rank
from .results import Aggregate, EvalRun, QueryMetrics, QueryResult, RankedHit

SearchFn = Callable[[str, int], Sequence[Hit]]


def normalize_k_values(k_values: Sequence[int]) -> tuple[int, ...]:
    """Ascending distinct k values, each at most ``MAX_LIMIT``; refuses an empty list or a k below 1.

    A k above ``MAX_LIMIT`` is clamped to it, as a search's limit is (R6.4): no search returns more
    hits, so recall@5000 could only ever repeat recall@1000, and recording 5000 in the fingerprint
    would claim a cut-off the run never had.
    """
    if not k_values:
        raise EvalError("no k values to evaluate", "pass --k with at least one value, e.g. --k 1,5,10")
    for k in k_values:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvalError(f"invalid k value: {k!r}", "every --k value must be a whole number of at least 1")
    return tuple(sorted({min(k, MAX_LIMIT) for k in k_values}))


def effective_limit(k_values: Sequence[int], limit: int | None) -> int:
    """R10.4: ``max(max(k_values), --limit)``, clamped to ``MAX_LIMIT`` as every search is (R6.4).

    Without --limit it is the largest k. Clamping here, before the fingerprint is built, keeps the
    recorded limit equal to the one the searches actually ran with.
    """
    largest = max(k_values)
    return min(MAX_LIMIT, largest if limit is None else max(largest, limit))


def utc_timestamp(now: _dt.datetime | None = None) -> str:
    """UTC RFC 3339 with a ``Z`` suffix, to the second (R10.14)."""
    moment = (now or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_eval(
    golden: GoldenSet,
    search: SearchFn,
    *,
    k_values: Sequence[int],
    limit: int | None,
    fingerprint: Mapping[str, Any],
    corpus: Mapping[str, Any],
    clock: Callable[[], _dt.datetime] | None = None,
) -> EvalRun:
    """Run every golden query once and return the scored run (comparison fields left empty).

    ``fingerprint`` and ``corpus`` are recorded as given; the caller builds them (R10.15, R10.19)
    and should put ``effective_limit(...)`` and ``normalize_k_values(...)`` into the fingerprint so
    it describes what actually ran. A ``GrooveError`` from ``search`` stops the run and is re-raised
    naming the query it happened on. ``clock`` exists for tests; it defaults to the current time.
    """
    ks = normalize_k_values(k_values)
    run_limit = effective_limit(ks, limit)
    # The timestamp marks when the run started, so history ordering follows start order.
    timestamp = utc_timestamp(clock() if clock is not None else None)
    per_query = tuple(_run_query(query, search, ks, run_limit) for query in golden.queries)
    return EvalRun(
        timestamp=timestamp,
        fingerprint=dict(fingerprint),
        corpus=dict(corpus),
        k_values=ks,
        limit=run_limit,
        per_query=per_query,
        aggregate=aggregate(per_query, ks),
    )


def _run_query(query: GoldenQuery, search: SearchFn, ks: tuple[int, ...], limit: int) -> QueryResult:
    try:
        hits = list(search(query.query, limit))
    except GrooveError as exc:
        raise EvalError(f'golden query "{query.id}" failed', str(exc)) from exc
    # A search never returns more than it was asked for; slicing keeps a misbehaving one from
    # inflating recall with hits a real run could not have shown.
    hits = hits[:limit]
    top_k = tuple(
        RankedHit(rank=rank, path=hit.path, heading=hit.heading, score=float(hit.score))
        for rank, hit in enumerate(hits, start=1)
    )
    ranks = first_match_ranks([(h.path, h.heading) for h in top_k], query.expected)
    metrics = QueryMetrics(
        recall_at_k={k: recall_at_k(ranks, k) for k in ks},
        reciprocal_rank=reciprocal_rank(ranks),
        ndcg_at_k={k: ndcg_at_k(ranks, k) for k in ks},
    )
    return QueryResult(id=query.id, query=query.query, expected=query.expected, top_k=top_k, metrics=metrics)


def aggregate(per_query: Sequence[QueryResult], k_values: Sequence[int]) -> Aggregate:
    """R10.9: the mean of each metric over the queries (0 for an empty run), plus the count."""
    count = len(per_query)

    def mean(values: list[float]) -> float:
        # fsum: a 4,000-query golden set should not drift in the last digits with query order.
        return math.fsum(values) / count if count else 0.0

    return Aggregate(
        recall_at_k={k: mean([q.metrics.recall_at_k[k] for q in per_query]) for k in k_values},
        mrr=mean([q.metrics.reciprocal_rank for q in per_query]),
        ndcg_at_k={k: mean([q.metrics.ndcg_at_k[k] for q in per_query]) for k in k_values},
        query_count=count,
    )

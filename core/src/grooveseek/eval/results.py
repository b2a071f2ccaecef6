"""The values one eval run produces and their JSON shape (SPEC R10.12, R10.14).

``EvalRun`` is both what the reports render and what history stores, so its ``as_dict`` is the one
place the run's JSON keys are spelled. Metric maps are keyed by int k in Python and by the string
form of k in JSON ("1", "5", "10"), because JSON object keys are strings and history written
today must compare with history read back later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .golden import GoldenExpected


def _k_map(values: Mapping[int, float]) -> dict[int, float]:
    """Converter: a plain dict ordered by k, so output order never depends on insertion order."""
    return {int(k): float(values[k]) for k in sorted(values)}


def k_map_json(values: Mapping[int, float]) -> dict[str, float]:
    """A metric-by-k map with JSON (string) keys, in ascending k."""
    return {str(k): v for k, v in sorted(values.items())}


@attrs.frozen
class RankedHit:
    """One entry of a query's ``top_k`` (R10.5): what the search returned, at which rank."""

    rank: int
    path: str
    heading: str | None
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "path": self.path, "heading": self.heading, "score": self.score}


@attrs.frozen
class QueryMetrics:
    """A query's metrics (R10.14): recall@k and nDCG@k for every k, and its reciprocal rank."""

    recall_at_k: Mapping[int, float] = attrs.field(converter=_k_map)
    reciprocal_rank: float
    ndcg_at_k: Mapping[int, float] = attrs.field(converter=_k_map)

    def as_dict(self) -> dict[str, Any]:
        return {
            "recall_at_k": k_map_json(self.recall_at_k),
            "reciprocal_rank": self.reciprocal_rank,
            "ndcg_at_k": k_map_json(self.ndcg_at_k),
        }


@attrs.frozen
class QueryResult:
    """One golden query's outcome: the query, what was expected, what came back, its metrics."""

    id: str
    query: str
    expected: tuple[GoldenExpected, ...]
    top_k: tuple[RankedHit, ...]
    metrics: QueryMetrics

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            # An entry without heading is written without the key, exactly as in the golden file,
            # so "any chunk of the file" never reads as "a chunk whose heading is null".
            "expected": [
                {"path": e.path} if e.heading is None else {"path": e.path, "heading": e.heading}
                for e in self.expected
            ],
            "top_k": [hit.as_dict() for hit in self.top_k],
            "metrics": self.metrics.as_dict(),
        }


@attrs.frozen
class Aggregate:
    """Means over the queries (R10.9, R10.14)."""

    recall_at_k: Mapping[int, float] = attrs.field(converter=_k_map)
    mrr: float
    ndcg_at_k: Mapping[int, float] = attrs.field(converter=_k_map)
    query_count: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "recall_at_k": k_map_json(self.recall_at_k),
            "mrr": self.mrr,
            "ndcg_at_k": k_map_json(self.ndcg_at_k),
            "query_count": self.query_count,
        }


@attrs.frozen
class EvalRun:
    """One complete run.

    ``k_values`` (ascending, distinct) and ``limit`` (the effective one, R10.4) are what the run
    actually used; the reports need them even where the fingerprint is absent or partial. The
    comparison fields (``previous``, ``diff``, ``corpus_changed``, ``findings``) stay empty until
    history and the golden-quote check fill them (``attrs.evolve``) — R10.12 keeps them in the JSON
    as null / [] so the shape never changes with the flags.
    """

    timestamp: str
    fingerprint: Mapping[str, Any]
    corpus: Mapping[str, Any]
    k_values: tuple[int, ...]
    limit: int
    per_query: tuple[QueryResult, ...]
    aggregate: Aggregate
    previous: Mapping[str, Any] | None = None
    diff: Mapping[str, Any] | None = None
    corpus_changed: bool | None = None
    findings: tuple[Mapping[str, Any], ...] = ()
    # Text-report only (not in the R10.12 JSON): notes such as "golden changed", the per-query
    # drops against the compared run ``(id, before, now)`` and the threshold that colours deltas.
    notes: tuple[str, ...] = ()
    query_drops: tuple[tuple[str, float, float], ...] = ()
    threshold: float = 0.05

    def as_dict(self) -> dict[str, Any]:
        """The R10.12 report shape, keys in that order."""
        return {
            "timestamp": self.timestamp,
            "fingerprint": dict(self.fingerprint),
            "aggregate": self.aggregate.as_dict(),
            "per_query": [result.as_dict() for result in self.per_query],
            "previous": None if self.previous is None else dict(self.previous),
            "diff": None if self.diff is None else dict(self.diff),
            "corpus": dict(self.corpus),
            "corpus_changed": self.corpus_changed,
            "findings": [dict(finding) for finding in self.findings],
        }

    def history_record(self) -> dict[str, Any]:
        """The R10.14 record history stores: the run without the comparison fields."""
        return {
            "timestamp": self.timestamp,
            "fingerprint": dict(self.fingerprint),
            "corpus": dict(self.corpus),
            "per_query": [result.as_dict() for result in self.per_query],
            "aggregate": self.aggregate.as_dict(),
        }

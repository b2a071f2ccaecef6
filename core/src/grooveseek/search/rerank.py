"""The reranker stage (SPEC R6.33–R6.34): cross-encoder scores replace RRF scores. Not built yet."""

from __future__ import annotations

from collections.abc import Sequence

from ..interfaces import Reranker
from ..store.records import HitRow


def rerank(reranker: Reranker, positive_text: str, pool: Sequence[tuple[HitRow, float]], keep: int):
    """Return ``(row, score)`` pairs re-sorted by the reranker's raw score, cut to ``keep``."""
    return list(pool)[:keep]

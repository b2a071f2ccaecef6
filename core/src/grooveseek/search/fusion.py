"""Reciprocal Rank Fusion (SPEC R6.31); the ``low_confidence`` flag lives in ``confidence``."""

from __future__ import annotations

from collections.abc import Sequence


def rrf(legs: Sequence[Sequence[int]], k: float) -> list[tuple[int, float]]:
    """R6.31: sum of 1/(k + r + 1) over legs, 0-based r; ties broken by ascending chunk id."""
    scores: dict[int, float] = {}
    for ranked in legs:
        for rank, chunk_id in enumerate(ranked):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

"""Reciprocal Rank Fusion and the ``low_confidence`` flag (SPEC R6.31, R6.40)."""

from __future__ import annotations

from collections.abc import Sequence


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

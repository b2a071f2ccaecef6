"""Maximal Marginal Relevance re-selection (SPEC R6.35–R6.39). Not built yet."""

from __future__ import annotations

from collections.abc import Sequence

from ..store.records import HitRow
from .request import MmrSettings


def mmr_select(store, pool: Sequence[tuple[HitRow, float]], settings: MmrSettings, limit: int):
    """Greedy selection of ``min(limit, len(pool))`` items; returns them in selection order."""
    return list(pool)[:limit]

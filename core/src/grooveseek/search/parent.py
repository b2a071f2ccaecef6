"""The parent retriever (SPEC R6.42–R6.47): widen short hits to neighbours or the whole document. Not built yet."""

from __future__ import annotations

from ..types import Hit
from .request import ParentSettings


def expand(store, hit: Hit, row, settings: ParentSettings) -> Hit:
    """Return the hit with widened ``content`` and ``expanded_from`` set."""
    return hit

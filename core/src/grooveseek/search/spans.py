"""``match_spans``: byte ranges of query terms in a hit's final content (SPEC R6.48–R6.51). Not built yet."""

from __future__ import annotations

from collections.abc import Sequence


def match_spans(content: str, terms: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """Sorted, disjoint, non-empty UTF-8 byte spans, or None when not computed."""
    return None

"""``match_spans``: byte ranges of query terms in a hit's final content (SPEC R6.48–R6.51).

The last stage before wrapping: it runs on each hit's ``content`` after the parent retriever. The
search is ASCII-only on purpose. Terms must be ASCII, and the content is lowercased byte-wise
(``bytes.lower`` touches only A–Z), so no byte length changes and an ASCII term can never match
inside a multi-byte UTF-8 sequence: every offset is a character boundary of the UTF-8 text, which
is what clients slicing ``content.encode()`` need. Full Unicode case folding would break both.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_CONTENT_BYTES = 262_144  # 256 KiB: larger content is not scanned (R6.49)
MAX_TERMS = 100
MAX_SPANS = 100


def match_spans(content: str, terms: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """Sorted, disjoint, non-empty ``(start, end)`` UTF-8 byte spans of ``terms`` in ``content``.

    Args:
        content: the hit's final content.
        terms: the positive FTS phrases of the query, else its positive text split on whitespace
            (R6.49); the caller chooses them.

    Returns:
        None when not computed (no non-empty term, a non-ASCII term, or content over 256 KiB);
        ``()`` when computed and nothing matched. Otherwise at most 100 spans, ``end`` exclusive.
    """
    words = [term for term in terms if term]
    if not words or not all(term.isascii() for term in words):
        return None
    raw = content.encode("utf-8")
    if len(raw) > MAX_CONTENT_BYTES:
        return None
    haystack = raw.lower()
    # Sorting makes the result independent of query order; the cap bounds the work per hit.
    needles = sorted({term.encode("ascii").lower() for term in words})[:MAX_TERMS]
    quota = max(1, MAX_SPANS // len(needles))  # k·floor(100/k) ≤ 100, so the span cap holds
    found: list[tuple[int, int]] = []
    for needle in needles:
        found.extend(_occurrences(haystack, needle, quota))
    return _merge(sorted(found))


def _occurrences(haystack: bytes, needle: bytes, quota: int) -> list[tuple[int, int]]:
    """Up to ``quota`` non-overlapping occurrences, left to right (``aaa`` holds ``aa`` once)."""
    out: list[tuple[int, int]] = []
    pos = 0
    while len(out) < quota:
        at = haystack.find(needle, pos)
        if at < 0:
            break
        out.append((at, at + len(needle)))
        pos = at + len(needle)
    return out


def _merge(spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Merge overlapping sorted spans (``next.start < cur.end``); touching spans stay separate."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)

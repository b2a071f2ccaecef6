"""``match_spans``: byte ranges of query terms in a hit's final content (SPEC R6.48–R6.51).

The last stage before wrapping: it runs on each hit's ``content`` after the parent retriever. Only
A–Z are case-folded (to a–z), on the text, so no character changes length and every offset is a
character boundary of the UTF-8 text, which is what clients slicing ``content.encode()`` need. Full
Unicode case folding would break both.

``span_terms`` keeps the words worth highlighting (docs/retrieval.md, "match_spans"): English
stopwords and one- or two-letter Latin words are dropped, and a Japanese word is cut at its
hiragana (particles and inflections: ``配列の長さを取得`` -> ``配列``, ``取得``), keeping pieces of
two characters or more. Quoted phrases are kept as written: the user chose them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_CONTENT_BYTES = 262_144  # 256 KiB: larger content is not scanned (R6.49)
MAX_TERMS = 100
MAX_SPANS = 100

#: Function words that match everywhere and say nothing about why a hit matched.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "must",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Hiragana (particles, okurigana) and CJK punctuation separate the content words of a Japanese term.
# The long-vowel mark ー is part of katakana words (コピー, データ), so it does not cut them.
_KANA_SPLIT = re.compile(r"[\u3040-\u309f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+")
_TRIM = re.compile(r"^[^\w]+|[^\w]+$")


def span_terms(terms: Sequence[str], *, phrases: bool = False) -> list[str]:
    """The terms worth highlighting (see the module docstring); ``phrases`` marks quoted FTS phrases."""
    out: list[str] = []
    for term in terms:
        if phrases and " " in term.strip():
            out.append(term)
            continue
        word = _TRIM.sub("", term)
        if word.isascii():
            if len(word) > 2 and word.translate(_LOWER) not in STOPWORDS:
                out.append(word)
            continue
        out.extend(piece for piece in _KANA_SPLIT.split(word) if len(piece) >= 2)
    return out


def match_spans(content: str, terms: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """Sorted, disjoint, non-empty ``(start, end)`` UTF-8 byte spans of ``terms`` in ``content``.

    Args:
        content: the hit's final content.
        terms: the positive FTS phrases of the query, else its positive text split on whitespace
            (R6.49); the caller chooses them.

    Returns:
        None when not computed (no non-empty term, or content over 256 KiB); ``()`` when computed
        and nothing matched. Otherwise at most 100 spans, ``end`` exclusive.
    """
    words = [term for term in terms if term]
    if not words:
        return None
    raw = content.encode("utf-8")
    if len(raw) > MAX_CONTENT_BYTES:
        return None
    if all(term.isascii() for term in words):
        haystack = raw.lower()  # bytes.lower folds A-Z only, so byte offsets need no mapping
        needles = sorted({term.encode("ascii").lower() for term in words})[:MAX_TERMS]
        return _merge(sorted(_find_all(haystack, needles)))
    # Sorting makes the result independent of query order; the cap bounds the work per hit.
    text_needles = sorted({term.translate(_LOWER) for term in words})[:MAX_TERMS]
    found = _find_all(content.translate(_LOWER), text_needles)
    return _merge(sorted(_to_bytes(content, found)))


def _find_all(haystack, needles) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    quota = max(1, MAX_SPANS // len(needles))  # k·floor(100/k) ≤ 100, so the span cap holds
    found: list[tuple[int, int]] = []
    for needle in needles:
        found.extend(_occurrences(haystack, needle, quota))
    return found


def _to_bytes(content: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character offsets to UTF-8 byte offsets, in one pass over the sorted offsets."""
    points = sorted({p for span in spans for p in span})
    at: dict[int, int] = {}
    pos = size = 0
    for point in points:
        size += len(content[pos:point].encode("utf-8"))
        pos = point
        at[point] = size
    return [(at[s], at[e]) for s, e in spans]


def _occurrences(haystack, needle, quota: int) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Up to ``quota`` non-overlapping occurrences, left to right (``aaa`` holds ``aa`` once).

    ``haystack`` and ``needle`` are both bytes or both str: the same search serves both paths.
    """
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

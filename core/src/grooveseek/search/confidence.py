"""The ``low_confidence`` flag (SPEC R6.40 as changed in docs/retrieval.md, "low_confidence").

The flag fires when the top hit holds at most half of the query's content words: the words
``spans.span_terms`` keeps (no English stopwords, no one- or two-letter Latin words, Japanese
words cut at their particles), looked for case-insensitively (A–Z) in the hit's title, heading and
content. R6.40's top-score / mean-score ratio measured how far the legs agree, not whether the
answer is there: on the bench golden sets it fired on 83–100 % of queries whose top hit was right.
Word coverage separates the two (``bench/low_confidence.py``), works the same for every language
the spans understand, and does not depend on the embedding model or on a reranker's score scale.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The flag fires when the top hit holds this share of the query's content words or less.
MAX_COVERAGE = 0.5

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def coverage(terms: Sequence[str], text: str) -> float | None:
    """The share of distinct ``terms`` found in ``text`` (A–Z case-folded); None without terms."""
    wanted = {term.translate(_LOWER) for term in terms if term}
    if not wanted:
        return None
    haystack = text.translate(_LOWER)
    return sum(1 for term in wanted if term in haystack) / len(wanted)


def low_confidence(terms: Sequence[str], top_text: str | None, ratio: float) -> bool:
    """True when a top hit exists, the flag is on (``ratio`` ≠ 0) and its coverage is ≤ 0.5.

    ``ratio`` is the old ``min_confidence_ratio``: 0 still turns the flag off; any other value
    leaves the rule as it is. A query with no content words (only stopwords) never fires.
    """
    if top_text is None or ratio == 0:
        return False
    share = coverage(terms, top_text)
    return share is not None and share <= MAX_COVERAGE

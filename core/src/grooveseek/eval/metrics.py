"""Retrieval metrics of ``groove eval``: matching and recall@k, reciprocal rank, nDCG@k (R10.5–R10.8).

Pure functions, no I/O. The metrics take *first-match ranks*: one entry per expected entry, the
1-based rank of the first hit that matches it, or None when no returned hit does. Computing the
ranks once (``first_match_ranks``) and deriving every metric from them is what makes "each expected
entry counted once at the rank of its first match" hold for all three metrics by construction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..text import split_anchor
from .golden import GoldenExpected

#: R10.10: bumped whenever a metric's definition changes, so history never compares runs scored
#: differently. It lives next to the definitions so a change to one is a reminder to bump the other.
#: 2: headings are matched without a trailing ``{#anchor}`` (issue 10).
METRIC_VERSION = 2

#: A hit as the metrics see it: (path, heading). Heading is None for chunks without one.
HitKey = tuple[str, str | None]


def normalize_heading(heading: str) -> str:
    """R10.5: headings are compared after trimming and lowercasing both sides, and without a
    trailing ``{#anchor}`` on either side (docs/retrieval.md), so golden files written when headings
    kept their anchors (``真偽値を取得 {#get-boolean}``) match the stripped headings of today."""
    return split_anchor(heading.strip())[0].strip().lower()


def matches(hit_path: str, hit_heading: str | None, expected: GoldenExpected) -> bool:
    """Whether one hit matches one expected entry (R10.5).

    Paths must be equal as written (both are KB-relative with "/" separators). An entry without a
    heading accepts any chunk of the file; a heading-pinned entry never matches a hit without one.
    """
    if hit_path != expected.path:
        return False
    if expected.heading is None:
        return True
    if hit_heading is None:
        return False
    return normalize_heading(hit_heading) == normalize_heading(expected.heading)


def first_match_ranks(hits: Sequence[HitKey], expected: Sequence[GoldenExpected]) -> tuple[int | None, ...]:
    """For each expected entry, the 1-based rank of the first hit matching it, else None.

    One hit may match several entries (a path-only entry and a heading-pinned one of the same file);
    each entry still gets its own rank, as R10.8 defines.
    """
    ranks: list[int | None] = []
    for entry in expected:
        rank = next(
            (i for i, (path, heading) in enumerate(hits, start=1) if matches(path, heading, entry)),
            None,
        )
        ranks.append(rank)
    return tuple(ranks)


def recall_at_k(ranks: Sequence[int | None], k: int) -> float:
    """R10.6: share of expected entries matched within the first k hits (0 with no entries)."""
    if not ranks:
        return 0.0
    found = sum(1 for r in ranks if r is not None and r <= k)
    return found / len(ranks)


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """R10.7: 1 / rank of the first hit matching any entry, 0 when none matches.

    The first hit matching *any* entry is the smallest first-match rank, so this is 1 / min(ranks).
    """
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_at_k(ranks: Sequence[int | None], k: int) -> float:
    """R10.8: binary-relevance nDCG@k over first-match ranks; IDCG over min(|expected|, k) slots.

    One hit can be the first match of two entries (see ``first_match_ranks``), which lets DCG
    exceed IDCG (two entries both at rank 1 give DCG 2 against IDCG 1 + 1/log2 3). R10.8 also says
    every metric lies in [0, 1], so the ratio is capped at 1: a query whose every expected entry is
    found at the very top scores exactly 1, never more.
    """
    ideal_slots = min(len(ranks), k)
    if ideal_slots <= 0:
        return 0.0
    dcg = math.fsum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    idcg = math.fsum(1.0 / math.log2(i + 1) for i in range(1, ideal_slots + 1))
    return min(1.0, dcg / idcg)

"""The parent retriever (SPEC R6.42–R6.47): widen each returned hit to its document or its siblings.

Runs after ``low_confidence`` and before ``match_spans``, so it is display-only: it rewrites
``content`` (and the line range and ``symbol_kind`` that describe it) and records what it did in
``expanded_from``; score, rank, path, title and heading never change.

A short hit (``token_count`` under ``whole_doc_threshold_tokens``) becomes its whole document when
the document fits ``max_expanded_tokens``; otherwise the hit is merged with the chunks just before
and after it that sit at the same heading level. Upstream merged neighbours whatever their level;
SPEC R6.44 diverges on purpose: a level-2 section followed by a level-1 heading belongs to a
different part of the document and is not context for the hit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from ..errors import StoreError
from ..store.records import HitRow
from ..store.stages import SiblingRow
from ..types import Hit
from .request import ParentSettings

if TYPE_CHECKING:
    from ..store.interface import IndexStore

log = logging.getLogger(__name__)

JOINER = "\n\n"


def estimated_tokens(token_count: int | None, content: str) -> int:
    """R6.42: the stored ``token_count``, or the UTF-8 length / 4 when it is missing.

    A count of 0 or less is treated as missing too (as upstream did when summing): R3.28 gives 0
    only for content under 4 bytes, whose estimate is 0 anyway, so this only matters for a chunker
    that failed to count, and then the estimate is the better number.
    """
    if token_count is not None and token_count > 0:
        return token_count
    return len(content.encode("utf-8")) // 4


def row_cap(settings: ParentSettings) -> int:
    """R6.43: how many rows the whole-document read may return before falling back."""
    return settings.max_expanded_tokens * 2 + 64


def expand(store: IndexStore, hit: Hit, row: HitRow, settings: ParentSettings) -> Hit:
    """Return ``hit`` with widened ``content`` and ``expanded_from`` set (R6.42–R6.46).

    Any database error, or a hit whose chunk vanished since it was found, leaves the hit exactly as
    it was (logged at debug): expansion is a courtesy and must never fail a search.
    """
    try:
        if estimated_tokens(row.token_count, row.content) < settings.whole_doc_threshold_tokens:
            whole = _whole_document(store, hit, settings)
            if whole is not None:
                return whole
        return _adjacent(store, hit, settings)
    except StoreError as exc:
        log.debug("parent retriever: chunk %s of %s left unexpanded: %s", hit.chunk_id, hit.path, exc)
        return hit


def _whole_document(store: IndexStore, hit: Hit, settings: ParentSettings) -> Hit | None:
    """R6.43, or None when the document is too long (rows or tokens) and R6.44 applies instead."""
    cap = row_cap(settings)
    rows = store.document_chunks(hit.chunk_id, cap)
    if not rows or len(rows) >= cap:
        return None
    if sum(estimated_tokens(r.token_count, r.content) for r in rows) > settings.max_expanded_tokens:
        return None
    return _merged(hit, rows, {"kind": "whole_document", "total_chunks": len(rows)})


def _adjacent(store: IndexStore, hit: Hit, settings: ParentSettings) -> Hit:
    """R6.44: merge chunks i − 1 and i + 1 of the same level, unless that exceeds the token budget."""
    window = store.chunk_neighbours(hit.chunk_id)
    own = next((r for r in window if r.chunk_id == hit.chunk_id), None)
    if own is None:
        log.debug(
            "parent retriever: chunk %s of %s no longer exists; left unexpanded", hit.chunk_id, hit.path
        )
        return hit
    # ``==`` on Optional[int] is the rule as written: no level equals no level.
    merged = [r for r in window if r.chunk_id == own.chunk_id or r.level == own.level]
    if sum(estimated_tokens(r.token_count, r.content) for r in merged) > settings.max_expanded_tokens:
        merged = [own]
    span = {"kind": "adjacent", "from_index": merged[0].chunk_index, "to_index": merged[-1].chunk_index}
    return _merged(hit, merged, span)


def _merged(hit: Hit, rows: Sequence[SiblingRow], expanded_from: dict[str, object]) -> Hit:
    """The hit rewritten over ``rows`` (index order): joined content and R6.46 line range and symbol."""
    if len(rows) == 1:
        # Considered, not expanded (or a one-chunk document): the content is the hit's own, so its
        # line range and symbol_kind still describe it.
        return attrs.evolve(hit, expanded_from=expanded_from)
    starts = [r.start_line for r in rows if r.start_line is not None]
    ends = [r.end_line for r in rows if r.end_line is not None]
    complete = len(starts) == len(ends) == len(rows)  # one chunk without a range voids the range
    return attrs.evolve(
        hit,
        content=JOINER.join(r.content for r in rows),
        expanded_from=expanded_from,
        start_line=min(starts) if complete else None,
        end_line=max(ends) if complete else None,
        symbol_kind=None,  # R6.46: a merge of several chunks has no single symbol kind
        match_spans=None,  # offsets into the old content would be stale; the spans stage recomputes
    )

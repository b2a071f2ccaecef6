"""Section grouping (issue 27): the pieces of one section come back as one hit.

A section cut into pieces to fit the embedder's window (docs/retrieval.md, "Chunk size") keeps its
document, heading, breadcrumb context and level on every piece, so those four name the section.
Without grouping the pieces of one long section took on average 2.7 of the top 10 slots on the
Japanese bench sets; grouped, the section takes one slot at its best piece's fused score, and the
slots it held go to other sections. The best piece is the hit (its snippet, its chunk id); the hit
also says which pieces matched and the lines they span.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import attrs

from ..store.interface import IndexStore
from ..store.records import HitRow


@attrs.frozen
class SectionHit:
    """One section in fused order: its best piece, that piece's score, and every piece that matched
    (best first)."""

    chunk_id: int
    score: float
    members: tuple[int, ...]


def section_key(row: HitRow) -> Hashable:
    """What names a section: the document, heading, breadcrumb context and heading level."""
    return (row.path, row.heading, row.context, row.level)


def section_keys_from(store: IndexStore, ids: Sequence[int]) -> dict[int, Hashable]:
    """The section key of every chunk id that still exists."""
    return {cid: section_key(row) for cid, row in store.hit_rows(ids).items()}


def group_sections(fused: Sequence[tuple[int, float]], keys: Mapping[int, Hashable]) -> list[SectionHit]:
    """``fused`` (best first) with every later piece of an already listed section folded into it.

    A chunk without a key (deleted since the legs ran) stays a hit of its own.
    """
    order: list[Hashable] = []
    groups: dict[Hashable, list[tuple[int, float]]] = {}
    for cid, score in fused:
        key = keys.get(cid, ("chunk", cid))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((cid, score))
    out = []
    for key in order:
        members = groups[key]
        out.append(SectionHit(members[0][0], members[0][1], tuple(cid for cid, _ in members)))
    return out


@attrs.frozen
class GroupedPool:
    """The fused pool after grouping: (best piece, score) per section, the rows read for it, and
    each section's matched pieces."""

    fused: list[tuple[int, float]]
    rows: dict[int, HitRow]
    members: dict[int, tuple[int, ...]]


def group_pool(store: IndexStore, fused: Sequence[tuple[int, float]], pool_size: int) -> GroupedPool:
    """Group the whole fused list by section, then keep the first ``pool_size`` sections."""
    rows = store.hit_rows([cid for cid, _ in fused])
    groups = group_sections(fused, {cid: section_key(row) for cid, row in rows.items()})[:pool_size]
    return GroupedPool(
        [(g.chunk_id, g.score) for g in groups],
        rows,
        {g.chunk_id: g.members for g in groups if len(g.members) > 1},
    )


def section_lines(rows: Mapping[int, HitRow], members: Sequence[int]) -> tuple[int | None, int | None]:
    """The first and last file line of a section's matched pieces (None where not known)."""
    starts = [line for m in members if m in rows and (line := rows[m].start_line) is not None]
    ends = [line for m in members if m in rows and (line := rows[m].end_line) is not None]
    return (min(starts) if starts else None, max(ends) if ends else None)

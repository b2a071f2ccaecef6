"""``groove eval --explain-fusion``: each leg's share of every golden query's top hits (issue 11).

The eval run is unchanged; with the flag every search also returns its per-hit explain (the legs'
ranks, their weights and ``w / (k + rank)``), and this module lays those out per query next to the
expected chunks, so a reader sees which leg put a relevant chunk into the top k and which one
pushed it out. It computes no new metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..types import Hit
from .golden import GoldenSet
from .metrics import matches

LEG_ORDER = ("fts", "vector", "cjk")
SHOWN_HITS = 5  # per query in the text report; the JSON keeps every hit of the run


def collect(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """The explain of each hit of one search, in rank order."""
    return [{"path": h.path, "heading": h.heading, "explain": dict(h.explain or {})} for h in hits]


def fusion_rows(golden: GoldenSet, explains: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per golden query, in order; ``explains`` holds each query's ``collect`` in the same order."""
    rows = []
    for query, hits in zip(golden.queries, explains, strict=True):
        out_hits = []
        for rank, hit in enumerate(hits, start=1):
            relevant = any(matches(hit["path"], hit["heading"], e) for e in query.expected)
            legs = {leg: hit["explain"][leg] for leg in LEG_ORDER if leg in hit["explain"]}
            out_hits.append(
                {
                    "rank": rank,
                    "path": hit["path"],
                    "heading": hit["heading"],
                    "relevant": relevant,
                    "legs": legs,
                }
            )
        rule = next((h["explain"].get("fusion_rule") for h in hits if h["explain"].get("fusion_rule")), None)
        rows.append({"id": query.id, "query": query.query, "fusion_rule": rule, "hits": out_hits})
    return rows


def _leg_cell(leg: str, info: Mapping[str, Any] | None) -> str:
    if info is None:
        return f"{leg} -"
    return f"{leg} #{info['rank']} w{info['weight']:g} +{info['rrf']:.4f}"


def render_fusion_text(golden: GoldenSet, explains: Sequence[list[dict[str, Any]]]) -> str:
    """Per query: the rule in force, then the top hits with each leg's rank, weight and RRF share."""
    lines = ["Fusion per query (* = an expected chunk; leg #rank w<weight> +<w/(k+rank)>):"]
    for row in fusion_rows(golden, explains):
        rule = f"    [{row['fusion_rule']}]" if row["fusion_rule"] else ""
        lines.append(f"  {row['id']}: {row['query']}{rule}")
        if not row["hits"]:
            lines.append("      (no hits)")
        for hit in row["hits"][:SHOWN_HITS]:
            mark = "*" if hit["relevant"] else " "
            cells = "  ".join(_leg_cell(leg, hit["legs"].get(leg)) for leg in LEG_ORDER)
            where = hit["path"] + (f" # {hit['heading']}" if hit["heading"] else "")
            lines.append(f"    {mark}{hit['rank']:>2} {cells}  {where}")
    return "\n".join(lines)

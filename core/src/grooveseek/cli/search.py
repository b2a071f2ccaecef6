"""``groove search QUERY``: the hybrid search on the command line (SPEC §8.5, R8.14–R8.16)."""

from __future__ import annotations

import math

import click

from ..app import build_app
from ..index.guard import open_for_search
from ..search.hybrid import FusionSettings, SearchRequest, hybrid_search
from ..types import SearchFilters, SearchResponse
from .options import config_option, dump_json, effective_config_path, format_option, kb_option, model_option


def _finite(name: str, value: float | None, *, low: float | None = None) -> None:
    if value is None:
        return
    if not math.isfinite(value) or (low is not None and value < low):
        bound = f" and >= {low}" if low is not None else ""
        raise click.BadParameter(f"must be a finite number{bound}, got {value}", param_hint=name)


def render_text(response: SearchResponse, ratio: float) -> str:
    """R8.15: optional low-confidence line, then one block per hit separated by ``\\n---\\n``."""
    blocks = []
    for hit in response.results:
        lines = [f"# {hit.title or '(no title)'}", f"{hit.path}#{hit.heading}" if hit.heading else hit.path]
        lines.append(f"score: {hit.score:.4f}")
        if hit.tags:
            lines.append(f"tags: {', '.join(hit.tags)}")
        if hit.start_line is not None and hit.end_line is not None:
            lines.append(f"lines: {hit.start_line}-{hit.end_line}")
        if hit.match_spans:
            raw = hit.content.encode("utf-8")
            shown = [raw[s:e].decode("utf-8") for s, e in hit.match_spans[:3]]
            lines.append("match_spans: " + ", ".join(f'"{t}"' for t in shown))
        lines += ["", hit.content]
        blocks.append("\n".join(lines))
    head = f"[low_confidence: top1 / mean ratio < {ratio}]\n" if response.low_confidence else ""
    return head + "\n---\n".join(blocks)


@click.command("search")
@click.argument("query")
@kb_option
@model_option
@config_option
@click.option("--limit", type=int, default=5, show_default=True, help="Number of results (clamped to 1..1000).")
@click.option("--category", help="Only documents in this category (first path segment).")
@click.option("--topic", help="Only documents with this topic (second path segment or frontmatter topic).")
@click.option("--min-quality", type=float, help="Quality threshold, clamped to [0, 1].")
@click.option("--include-low-quality", is_flag=True, help="Disable the quality filter for this search.")
@click.option("--min-confidence-ratio", type=float, help="low_confidence ratio (finite, >= 0; 0 disables).")
@format_option(("json", "text"), "json")
@click.pass_context
def search_command(ctx: click.Context, query: str, kb_path: str | None, model: str | None,
                   config_path: str | None, limit: int, category: str | None, topic: str | None,
                   min_quality: float | None, include_low_quality: bool, min_confidence_ratio: float | None,
                   fmt: str) -> None:  # fmt: skip
    """Hybrid (vector + full-text) search. A query starting with '-' needs '--' first."""
    _finite("--min-quality", min_quality)
    _finite("--min-confidence-ratio", min_confidence_ratio, low=0.0)
    app = build_app(effective_config_path(ctx, config_path), kb_path, model=model)
    cfg = app.config
    if include_low_quality:
        threshold = 0.0
    elif min_quality is not None:
        threshold = max(0.0, min(1.0, min_quality))
    else:
        threshold = cfg.quality_filter.effective_threshold
    ratio = cfg.search.min_confidence_ratio if min_confidence_ratio is None else min_confidence_ratio
    fusion = cfg.search.fusion
    request = SearchRequest(
        query=query,
        limit=limit,
        filters=SearchFilters(category=category, topic=topic, min_quality=threshold),
        min_confidence_ratio=ratio,
        fusion=FusionSettings(
            fusion.rrf_k, fusion.bm25_heading_weight, fusion.bm25_context_weight, fusion.bm25_content_weight
        ),
    )
    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        response = hybrid_search(store, app.embedder, request, ratio_given=min_confidence_ratio is not None)
    finally:
        store.close()
    click.echo(dump_json(response.as_dict()) if fmt == "json" else render_text(response, ratio))

"""``groove search QUERY``: the whole retrieval pipeline on the command line (SPEC §8.5, R8.14–R8.16)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from ..text import terminal_safe
from .options import (
    BOOL,
    config_option,
    effective_config_path,
    finite,
    format_option,
    index_path_of,
    kb_option,
    model_option,
)

if TYPE_CHECKING:
    from ..types import Hit, SearchResponse


def _explain_lines(explain: Mapping[str, Any]) -> list[str]:
    parts = []
    for leg in ("fts", "vector", "cjk"):
        if leg in explain:
            info = explain[leg]
            # Significant digits, not decimals: bm25 on a small KB is about -1e-6, which %.4f
            # would print as -0.0000 and hide which hit matched better.
            weight = f" x{info['weight']:g}" if info.get("weight", 1.0) != 1.0 else ""
            parts.append(f"{leg} #{info['rank']} ({info['score']:.4g}){weight}")
        else:
            parts.append(f"{leg} -")
    line = "explain: " + ", ".join(parts) + f"; rrf {explain['rrf']:.4f}"
    if "rerank" in explain:
        line += f"; rerank {explain['rerank']:.4f}"
    if "fusion_rule" in explain:
        line += f"; {explain['fusion_rule']}"
    return [line]


def _where(hit: Hit, shown: Hit) -> str:
    """``path:first-last``: the file lines the printed text covers (the snippet's, or with
    ``--full`` the whole chunk's), so an editor can open them; the bare path when lines are unknown."""
    if shown.start_line is None:
        return hit.path
    first = shown.start_line
    if shown.location and shown.location.rpartition(":")[2].isdigit():
        first = int(shown.location.rpartition(":")[2])  # the snippet's first line
    body = shown.content.strip("\n")
    last = first + body.count("\n")
    if hit.end_line is not None:
        last = min(last, hit.end_line)
    return f"{hit.path}:{first}-{last}" if last > first else f"{hit.path}:{first}"


def render_text(response: SearchResponse, ratio: float, *, full: bool = False) -> str:
    """R8.15 (reworded by issue 24): optional low-confidence line, then one block per hit separated
    by ``\n---\n``: ``<rank>. <title>``, ``path:first-last  #heading``, tags and matched text when
    present, then a bounded snippet around the best match (``full``: the whole chunk). The fused
    score is printed only with ``--explain``, beside the per-leg figures it comes from (docs/cli.md).
    """
    from ..search.snippet import compact_hit

    blocks = []
    for rank, hit in enumerate(response.results, start=1):
        shown_hit = hit if full else compact_hit(hit)
        where = _where(hit, shown_hit)
        lines = [f"{rank}. {hit.title or '(no title)'}", f"{where}  #{hit.heading}" if hit.heading else where]
        if hit.tags:
            lines.append(f"tags: {', '.join(hit.tags)}")
        if hit.match_spans:
            raw = hit.content.encode("utf-8")
            shown = [raw[s:e].decode("utf-8") for s, e in hit.match_spans[:3]]
            lines.append("matches: " + ", ".join(f'"{t}"' for t in shown))
        if hit.explain is not None:
            lines.append(f"score: {hit.score:.4f}")
            lines += _explain_lines(dict(hit.explain))
        lines += ["", shown_hit.content]
        blocks.append("\n".join(lines))
    head = (
        "[low_confidence: the top hit holds at most half of the query's words]\n"
        if response.low_confidence
        else ""
    )
    return terminal_safe(head + "\n---\n".join(blocks))  # KB text must not drive the terminal


def _check_fields(values: tuple[str, ...], flag: str) -> None:
    for value in values:
        key, sep, _ = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=flag)


@click.command("search")
@click.argument("query")
@kb_option
@model_option
@config_option
@click.option(
    "--reranker", metavar="ID", help="Rerank with this model for this query ('none' turns reranking off)."
)
@click.option(
    "--limit", type=int, default=5, show_default=True, help="Number of results (clamped to 1..1000)."
)
@click.option("--category", help="Only documents in this category (first path segment).")
@click.option("--topic", help="Only documents with this topic (second path segment or frontmatter topic).")
@click.option("--min-quality", type=float, help="Quality threshold, clamped to [0, 1].")
@click.option("--include-low-quality", is_flag=True, help="Disable the quality filter for this search.")
@click.option("--path-glob", "path_globs", multiple=True, help="Path glob; '!' excludes. Repeatable.")
@click.option(
    "--tag-any", "tags_any", multiple=True, help="Documents with any of these tags (a,b). Repeatable."
)
@click.option(
    "--tag-all", "tags_all", multiple=True, help="Documents with all of these tags (a,b). Repeatable."
)
@click.option("--date-from", help="Documents dated on or after this (string comparison).")
@click.option("--date-to", help="Documents dated on or before this (string comparison).")
@click.option(
    "--field", "fields", multiple=True, metavar="KEY=VALUE", help="Declared field filter. Repeatable."
)
@click.option(
    "--field-not", "fields_not", multiple=True, metavar="KEY=VALUE", help="Exclude by declared field."
)
@click.option(
    "--min-confidence-ratio",
    type=float,
    help="0 turns low_confidence off (finite, >= 0; other values no longer change it).",
)
@click.option("--mmr", type=BOOL, help="MMR re-selection on or off for this query.")
@click.option("--mmr-lambda", type=float, help="MMR relevance weight in [0, 1].")
@click.option("--mmr-same-doc-penalty", type=float, help="MMR same-document penalty in [0, 1].")
@click.option("--parent-retriever", type=BOOL, help="Parent retriever on or off for this query.")
@click.option(
    "--pieces",
    is_flag=True,
    help="Return every matching piece of a long section as its own hit (default: one hit per section).",
)
@click.option(
    "--explain", is_flag=True, help="Show each hit's per-leg ranks and scores, the fusion and the reranker."
)
@click.option(
    "--full", is_flag=True, help="--format text: print each hit's whole chunk instead of a snippet."
)
@click.option(
    "--span-units",
    type=click.Choice(("bytes", "chars")),
    default="bytes",
    show_default=True,
    help="JSON match_spans as UTF-8 byte offsets, or as character (code point) offsets for str slicing.",
)
@format_option(("json", "text"), "json")
@click.pass_context
def search_command(
    ctx: click.Context,
    query: str,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    reranker: str | None,
    limit: int,
    category: str | None,
    topic: str | None,
    min_quality: float | None,
    include_low_quality: bool,
    path_globs: tuple[str, ...],
    tags_any: tuple[str, ...],
    tags_all: tuple[str, ...],
    date_from: str | None,
    date_to: str | None,
    fields: tuple[str, ...],
    fields_not: tuple[str, ...],
    min_confidence_ratio: float | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    pieces: bool,
    explain: bool,
    full: bool,
    span_units: str,
    fmt: str,
) -> None:
    """Hybrid (vector + full-text) search. A query starting with '-' needs '--' first."""
    finite("--min-quality", min_quality)
    finite("--min-confidence-ratio", min_confidence_ratio, low=0.0)
    finite("--mmr-lambda", mmr_lambda, low=0.0, high=1.0)
    finite("--mmr-same-doc-penalty", mmr_same_doc_penalty, low=0.0, high=1.0)
    _check_fields(fields, "--field")
    _check_fields(fields_not, "--field-not")
    config = effective_config_path(ctx, config_path)
    # A running `groove serve` for this index answers without this process importing the search
    # stack or loading the model (issue 16); otherwise, or when it declines, run in-process.
    from ..resident.client import ask_resident

    answer = ask_resident("search", ctx.params, config, kb_path, index_path_of(ctx), model, reranker)
    if answer.printed:
        return
    from ..app import build_app
    from ..console import echo_err
    from ..index.guard import open_for_search
    from .answers import in_process_search

    app = build_app(  # a search reads no file: no parser is imported (issue 16)
        config,
        kb_path,
        model=model,
        reranker=reranker,
        index_path=index_path_of(ctx),
        loaded=answer.loaded,
        with_parsers=False,
    )
    click.echo(
        in_process_search(
            app.config,
            ctx.params,
            lambda: open_for_search(app.db, app.kb, app.embedder, app.model_choice),
            app.embedder,
            app.reranker,
            lambda m: echo_err(f"warning: {m}"),
        )
    )

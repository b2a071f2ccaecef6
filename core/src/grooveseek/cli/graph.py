"""``groove graph --start PATH``: the connection graph on the command line (SPEC §8.6, R8.17–R8.19).

Every flag is turned into a ``GraphParams`` before config, plugins or the index are touched, so a
bad value exits 2 without loading anything (R8.6). No embedding model runs: the walk reads vectors
already in the index; the model guard still checks the index matches the configured model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..text import terminal_safe
from .options import (
    config_option,
    dump_json,
    effective_config_path,
    format_option,
    index_path_of,
    kb_option,
    model_option,
)

if TYPE_CHECKING:
    from ..search.graph import GraphParams, GraphResult


def _strategy(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..search.graph import GraphError, normalise_seed_strategy

    try:
        return normalise_seed_strategy(value)
    except GraphError as exc:
        raise click.BadParameter(str(exc)) from None


def _comma_list(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def graph_params(p: Mapping[str, Any]) -> GraphParams:
    """The walk for these flags (``ctx.params``, or the same after a JSON trip).

    Raises:
        GraphError: a bad ``--exclude-paths``; click has checked every other flag.
    """
    from ..search.graph import GraphParams

    return GraphParams(
        p["start"],
        depth=p["depth"],
        fan_out=p["fan_out"],
        min_similarity=p["min_similarity"],
        seed_strategy=p["seed_strategy"],
        dedup_by_path=p["dedup_by_path"],
        category=p["category"],
        topic=p["topic"],
        exclude_paths=_comma_list(p["exclude_paths"]),
        max_nodes=p["max_nodes"],
        max_seed_chunks=p["max_seed_chunks"],
    )


def render(result: GraphResult, fmt: str) -> str:
    """The chosen output format; renderers are imported only when asked for."""
    if fmt == "json":
        return dump_json(result.as_dict())
    from ..search import graph_render

    renderers = {
        "text": lambda r: terminal_safe(graph_render.render_text(r)),  # KB text must not drive the terminal
        "dot": graph_render.render_dot,
        "svg": graph_render.render_svg,
    }
    return renderers[fmt](result)


@click.command("graph")
@click.option(
    "--start",
    required=True,
    metavar="PATH",
    help="Knowledge-base-relative path of the document to walk from.",
)
@kb_option
@model_option
@config_option
@click.option(
    "--depth", type=int, default=2, show_default=True, help="Hops from the start document (clamped to 0..3)."
)
@click.option(
    "--fan-out",
    type=int,
    default=5,
    show_default=True,
    help="Neighbours kept per node (clamped to 0..20; 0 = seeds only).",
)
@click.option(
    "--min-similarity",
    type=float,
    default=0.3,
    show_default=True,
    help="Cosine similarity floor, clamped to [0, 1].",
)
@click.option(
    "--seed-strategy",
    default="all-chunks",
    show_default=True,
    callback=_strategy,
    metavar="all-chunks|all_chunks|centroid",
    help="Seed with every chunk, or with their mean.",
)
@click.option(
    "--max-nodes", type=int, default=100, show_default=True, help="Node budget (clamped to 1..2000)."
)
@click.option(
    "--max-seed-chunks",
    type=int,
    default=32,
    show_default=True,
    help="Start chunks read (clamped to 1..1000).",
)
@click.option(
    "--exclude-paths",
    "exclude_paths",
    multiple=True,
    metavar="A,B",
    help="Paths never to visit (comma list; repeatable).",
)
@click.option("--dedup-by-path", is_flag=True, help="Keep at most one node per document.")
@click.option("--category", help="Only neighbours in this category.")
@click.option("--topic", help="Only neighbours with this topic.")
@format_option(("json", "text", "dot", "svg"), "json")
@click.pass_context
def graph_command(
    ctx: click.Context,
    start: str,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    depth: int,
    fan_out: int,
    min_similarity: float,
    seed_strategy: str,
    max_nodes: int,
    max_seed_chunks: int,
    exclude_paths: tuple[str, ...],
    dedup_by_path: bool,
    category: str | None,
    topic: str | None,
    fmt: str,
) -> None:
    """Walk from a document to the chunks most similar to it, breadth-first."""
    # R8.6: a non-finite number typed on the command line is a mistake, not a request for the default.
    if not math.isfinite(min_similarity):
        raise click.BadParameter(
            f"must be a finite number, got {min_similarity}", param_hint="--min-similarity"
        )
    from ..search.graph import GraphError

    try:
        graph_params(ctx.params)  # every bound checked before config, plugins or the index (R8.6)
    except GraphError as exc:
        raise click.BadParameter(str(exc), param_hint="--exclude-paths") from None
    config = effective_config_path(ctx, config_path)
    from ..resident.client import ask_resident

    answer = ask_resident("graph", ctx.params, config, kb_path, index_path_of(ctx), model, None)
    if answer.printed:
        return
    from ..app import build_app
    from ..index.guard import open_for_search
    from .answers import graph_output

    app = build_app(  # the walk reads no file: no parser is imported (issue 16)
        config, kb_path, model=model, index_path=index_path_of(ctx), loaded=answer.loaded, with_parsers=False
    )
    store = open_for_search(app.db, app.kb, app.embedder, app.model_choice)
    try:
        output = graph_output(app.config, ctx.params, store)
    finally:
        store.close()
    click.echo(output)

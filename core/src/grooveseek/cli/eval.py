"""``groove eval``: retrieval quality against a golden query set (SPEC §8.8, §10.1–10.4).

Each query runs through the production search with no filters (the quality filter is off in
eval, R10.4). ``--legs`` runs one leg alone, for ablations (design).
"""

from __future__ import annotations

from pathlib import Path

import click

from ..app import build_app
from ..errors import GrooveError, ReadRefused
from ..eval import METRIC_VERSION
from ..eval.golden import missing_golden_message, parse_golden
from ..eval.report import render_json, render_text
from ..eval.runner import run_eval
from ..fsread import read_bound
from ..index.guard import open_for_search
from ..search.pipeline import run_search
from ..search.request import resolve_request
from ..search.query import FTS_QUERY_VERSION, compile_query
from ..types import SearchFilters
from .options import config_option, effective_config_path, format_option, kb_option, model_option

GOLDEN_CAP = 1_048_576

LEGS = {"hybrid": ("fts", "vector", "cjk"), "fts": ("fts",), "vector": ("vector",), "cjk": ("cjk",)}


def _k_values(raw: str | None, default: tuple[int, ...]) -> tuple[int, ...]:
    if raw is None:
        return default
    try:
        values = sorted({int(part) for part in raw.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"expected a comma list of integers, got {raw!r}", param_hint="--k") from None
    if not values or values[0] < 1:
        raise click.BadParameter("needs at least one integer >= 1", param_hint="--k")
    return tuple(values)


def _load_golden(path: Path, kb: Path):
    if not path.exists():
        raise GrooveError(missing_golden_message(str(path), str(kb)))
    try:
        data = read_bound(path, GOLDEN_CAP)
    except ReadRefused as exc:
        raise GrooveError(f"failed to read golden file: {path}: {exc}") from exc
    return parse_golden(data, str(path), check_query=lambda q: compile_query(q) and None)


@click.command("eval")
@kb_option
@model_option
@config_option
@click.option("--golden", type=click.Path(dir_okay=False), help="Golden file (default <kb_path>/.groove-eval.yml).")
@click.option("--k", "k_raw", metavar="1,5,10", help="Cut-offs for recall@k and nDCG@k.")
@click.option("--limit", type=int, help="Results per query (default: the largest k).")
@click.option("--legs", type=click.Choice(tuple(LEGS)), default="hybrid", show_default=True,
              help="Retrieval legs to run (fts or vector alone for ablations).")  # fmt: skip
@click.option("--no-color", is_flag=True, help="No colour in the text report.")
@format_option(("text", "json"), "text")
@click.pass_context
def eval_command(ctx: click.Context, kb_path: str | None, model: str | None, config_path: str | None,
                 golden: str | None, k_raw: str | None, limit: int | None, legs: str, no_color: bool,
                 fmt: str) -> None:  # fmt: skip
    """Measure recall@k, MRR and nDCG@k of the search over a golden query set."""
    app = build_app(effective_config_path(ctx, config_path), kb_path, model=model)
    cfg = app.config
    k_values = _k_values(k_raw, tuple(cfg.eval.k_values))
    golden_path = Path(golden).resolve() if golden else Path(cfg.eval.golden or app.kb / ".groove-eval.yml")
    golden_set = _load_golden(golden_path, app.kb)
    effective_limit = max(max(k_values), limit or 0)
    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        def search(query: str, n: int):
            # R10.4: no filters (the quality filter is off too); no reranker unless --reranker.
            request = resolve_request(cfg, query, limit=n, filters=SearchFilters(), legs=LEGS[legs])
            return run_search(store, app.embedder, request).results

        fingerprint = {
            "model": app.embedder.identity, "reranker": None, "limit": effective_limit,
            "k_values": list(k_values), "golden_hash": golden_set.sha256,
            "metric_version": METRIC_VERSION, "fts_query_version": FTS_QUERY_VERSION,
        }  # fmt: skip
        if legs != "hybrid":
            fingerprint["legs"] = legs
        run = run_eval(golden_set, search, k_values=k_values, limit=effective_limit,
                       fingerprint=fingerprint, corpus=store.corpus_digest())  # fmt: skip
    finally:
        store.close()
    if fmt == "json":
        click.echo(render_json(run))
    else:
        click.echo(render_text(run, model=app.embedder.identity, reranker=None, color=not no_color))

"""``groove eval``: retrieval quality against a golden query set (SPEC §8.8, §10.1–10.4).

Each query runs through the production search with no filters (the quality filter is off in
eval, R10.4). The reranker runs only when ``--reranker`` names one: the config's reranker and
``rerank_by_default`` are ignored, so a run measures exactly what its fingerprint records. MMR and
the parent retriever come from the flags, else the config, like ``groove search``. ``--legs`` runs
one leg alone, for ablations (design).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import click

from ..app import App, build_app
from ..console import echo_err
from ..errors import GrooveError
from ..eval import EvalRun
from ..eval.fingerprint import fingerprint as run_fingerprint
from ..eval.fusion_report import collect, fusion_rows, render_fusion_text
from ..eval.gate import apply_history
from ..eval.golden import GoldenSet
from ..eval.goldenfile import golden_path, load_golden
from ..eval.quotes import golden_quote_findings
from ..eval.report import render_json, render_text
from ..eval.runner import effective_limit, normalize_k_values, run_eval
from ..index.guard import open_for_search
from ..search.pipeline import run_search
from ..search.queryvectors import CachedQueries, ModelQueries
from ..search.request import MAX_LIMIT, clamp_limit, resolve_request
from ..types import Hit, SearchFilters
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

LEGS = {"hybrid": ("fts", "vector", "cjk"), "fts": ("fts",), "vector": ("vector",), "cjk": ("cjk",)}

EMPTY_GOLDEN = (
    "--golden is empty; name the golden file, or leave --golden out to use [eval].golden "
    "(else <kb_path>/.groove-eval.yml)"
)


def k_values_of(raw: str | None, default: tuple[int, ...]) -> tuple[int, ...]:
    """The cut-offs a comma list (``--k``) names, ascending and distinct; ``default`` without one."""
    if raw is None:
        return default
    try:
        values = sorted({int(part) for part in raw.split(",") if part.strip()})
    except ValueError:
        message = f"expected a comma list of integers, got {raw!r}"
        raise click.BadParameter(message, param_hint="--k") from None
    if not values or values[0] < 1:
        raise click.BadParameter("needs at least one integer >= 1", param_hint="--k")
    return tuple(values)


def _bounded(k_values: tuple[int, ...], limit: int | None, k_source: str) -> tuple[tuple[int, ...], int]:
    """k values and the run's limit, clamped to what a search can return (R6.4), with a warning.

    Clamped before the fingerprint and the header are built, so neither records a number the
    searches never ran with. ``groove search`` clamps ``--limit`` silently; eval says so on stderr
    because its numbers are compared across runs.
    """
    ks = normalize_k_values(k_values)
    why = f"clamped to {MAX_LIMIT} (the most a search returns)"
    if max(k_values) > MAX_LIMIT:
        echo_err(f"warning: {k_source} values above {MAX_LIMIT} are {why}")
    if limit is not None and limit > MAX_LIMIT:
        echo_err(f"warning: --limit {limit} is {why}")
    return ks, effective_limit(ks, limit)


def _run(
    app: App,
    golden: GoldenSet,
    ks: tuple[int, ...],
    run_limit: int,
    legs: str,
    stages: Mapping[str, Any],
    explains: list[list[dict[str, Any]]] | None = None,
) -> EvalRun:
    """Build the one request every query shares, its fingerprint, and run the golden set.

    With ``explains`` (``--explain-fusion``) every search also explains its hits, one list per query.
    """
    rerank = app.reranker is not None  # only ever set from --reranker here (R10.4)
    base = resolve_request(
        app.config,
        "",
        limit=run_limit,
        filters=SearchFilters(),
        legs=LEGS[legs],
        rerank=rerank,
        reranker_loaded=rerank,
        warn=lambda m: echo_err(f"warning: {m}"),
        explain=explains is not None,
        **stages,
    )
    store = open_for_search(app.db, app.kb, app.embedder, app.model_choice)
    try:
        fingerprint = run_fingerprint(
            model=app.embedder.identity,
            reranker=app.selection.reranker,
            request=base,
            golden=golden,
            ks=ks,
            legs=legs,
            context_mode=store.meta("context_mode"),
            languages=app.embedder.languages,
        )

        queries = CachedQueries(ModelQueries(app.embedder))  # a repeated golden query embeds once

        def search(query: str, n: int) -> tuple[Hit, ...]:
            # R10.4: no filters (the quality filter is off too); the reranker only from --reranker.
            request = attrs.evolve(base, query=query, limit=clamp_limit(n))
            results = run_search(store, queries, request, reranker=app.reranker).results
            if explains is not None:
                explains.append(collect(results))  # run_eval runs the golden queries in order
            return results

        run = run_eval(
            golden,
            search,
            k_values=ks,
            limit=run_limit,
            fingerprint=fingerprint,
            corpus=store.corpus_digest(),
        )
        findings = golden_quote_findings(run.per_query, store.chunk_texts())
        return attrs.evolve(run, findings=tuple(findings))
    finally:
        store.close()


@click.command("eval")
@kb_option
@model_option
@config_option
@click.option("--reranker", metavar="ID", help="Rerank with this model (default and 'none': no reranking).")
@click.option(
    "--golden", type=click.Path(dir_okay=False), help="Golden file (default <kb_path>/.groove-eval.yml)."
)
@click.option("--k", "k_raw", metavar="1,5,10", help="Cut-offs for recall@k and nDCG@k (at most 1000).")
@click.option("--limit", type=int, help="Results per query (default: the largest k; at most 1000).")
@click.option("--mmr", type=BOOL, help="MMR re-selection on or off (default: the config).")
@click.option("--mmr-lambda", type=float, help="MMR relevance weight in [0, 1].")
@click.option("--mmr-same-doc-penalty", type=float, help="MMR same-document penalty in [0, 1].")
@click.option("--parent-retriever", type=BOOL, help="Parent retriever on or off (default: the config).")
@click.option(
    "--legs",
    type=click.Choice(tuple(LEGS)),
    default="hybrid",
    show_default=True,
    help="Retrieval legs to run (fts or vector alone for ablations).",
)
@click.option(
    "--explain-fusion",
    is_flag=True,
    help="Also show, per query, each leg's rank, weight and RRF share of the top hits.",
)
@click.option("--no-color", is_flag=True, help="No colour in the text report.")
@click.option(
    "--no-history", is_flag=True, help="Neither read nor write the run history (<index>.eval-history.json)."
)
@click.option("--no-diff", is_flag=True, help="Write the history but compare with nothing.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a run with the same fingerprint scored better by more than the threshold.",
)
@format_option(("text", "json"), "text")
@click.pass_context
def eval_command(
    ctx: click.Context,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    reranker: str | None,
    golden: str | None,
    k_raw: str | None,
    limit: int | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    legs: str,
    explain_fusion: bool,
    no_color: bool,
    no_history: bool,
    no_diff: bool,
    fail_on_regression: bool,
    fmt: str,
) -> None:
    """Measure recall@k, MRR and nDCG@k of the search over a golden query set."""
    finite("--mmr-lambda", mmr_lambda, low=0.0, high=1.0)
    finite("--mmr-same-doc-penalty", mmr_same_doc_penalty, low=0.0, high=1.0)
    if golden == "":
        # R8.2: an empty value is given, not absent; it must never mean "use the default file".
        raise GrooveError(EMPTY_GOLDEN)
    # R10.4: the config's reranker is ignored, so without --reranker none is selected (or loaded).
    app = build_app(
        effective_config_path(ctx, config_path),
        kb_path,
        model=model,
        reranker="none" if reranker is None else reranker,
        index_path=index_path_of(ctx),
    )
    cfg = app.config
    ks, run_limit = _bounded(
        k_values_of(k_raw, tuple(cfg.eval.k_values)), limit, "--k" if k_raw is not None else "[eval].k_values"
    )
    golden_set = load_golden(golden_path(golden, cfg.eval.golden, app.kb), app.kb)
    stages = {
        "mmr": mmr,
        "mmr_lambda": mmr_lambda,
        "mmr_same_doc_penalty": mmr_same_doc_penalty,
        "parent_retriever": parent_retriever,
    }
    explains: list[list[dict[str, Any]]] | None = [] if explain_fusion else None
    run = _run(app, golden_set, ks, run_limit, legs, stages, explains)
    outcome = apply_history(
        run,
        app.kb,
        app.db,
        history=not no_history,
        diff=not no_diff,
        history_size=cfg.eval.history_size,
        threshold=cfg.eval.regression_threshold,
        warn=echo_err,
    )
    run = outcome.run
    if fmt == "json":
        extra = None if explains is None else {"explain_fusion": fusion_rows(golden_set, explains)}
        click.echo(render_json(run, extra))
    else:
        color = not no_color
        text = render_text(
            run, model=app.embedder.identity, reranker=run.fingerprint["reranker"], color=color
        )
        click.echo(text)
        if explains is not None:
            click.echo(render_fusion_text(golden_set, explains))
    if fail_on_regression and outcome.regressions:
        echo_err(
            "groove eval: retrieval-quality regression detected (delta > "
            f"{cfg.eval.regression_threshold:.3f} on at least one of recall@k / MRR / nDCG@k). "
            "Exiting with code 1 because --fail-on-regression was set."
        )
        ctx.exit(1)

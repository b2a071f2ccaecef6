"""``groove tune``: can ``[search.fusion]`` move retrieval on this KB? (SPEC §8.9, §10.6).

A thin command: the grid's searches are ``eval/grid.py``'s (through the production pipeline, each
query embedded once, each store read made once), the decision is ``eval/tune.py``'s. It applies
nothing: it prints a verdict and, when adopting, a snippet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import click

from ..app import build_app
from ..console import echo_err
from ..eval.golden import GoldenQuery
from ..eval.goldenfile import golden_path, load_golden
from ..eval.grid import candidates, memoised, score_grid
from ..eval.runner import effective_limit, normalize_k_values
from ..eval.tune import DEFAULT_CONDITION, GRID, TuneVerdict, decide, fusion_snippet
from ..index.guard import open_for_search
from ..search.queryvectors import CachedQueries, ModelQueries
from ..search.request import FusionSettings, resolve_request
from ..types import SearchFilters
from .eval import k_values_of
from .options import (
    config_option,
    dump_json,
    effective_config_path,
    format_option,
    index_path_of,
    kb_option,
    model_option,
)

MAX_TUNE_K = 10_000
N_WARN = 50
ZERO_N = (
    "groove tune: no golden query has at least 2 full-text candidates, so the fusion settings cannot "
    "change any ranking (vector-only queries). Use verbatim queries: proper nouns, API and command "
    "names, error codes; avoid queries under 3 characters."
)


def kept_fusion(fusion: FusionSettings) -> dict[str, object]:
    """The ``[search.fusion]`` settings tune does not vary but ranks under: the method, always, and
    each leg weight the config sets (the built-in weights and rule apply to the others)."""
    kept: dict[str, object] = {"method": fusion.method}
    for leg, weight in fusion.explicit_leg_weights.items():
        if weight is not None:
            kept[f"{leg}_weight"] = weight
    return kept


def _report(
    verdict: TuneVerdict, effective: Sequence[GoldenQuery], n_total: int, kept: dict[str, object]
) -> dict[str, Any]:
    worse = [(q.id, g) for q, g in zip(effective, verdict.per_query_gain, strict=True) if g < -1e-12]
    better = sum(1 for g in verdict.per_query_gain if g > 1e-12)
    return {
        "verdict": "adopt" if verdict.adopt else "keep the built-in defaults",
        "snippet": fusion_snippet(verdict.refit, kept) if verdict.adopt else None,
        "fusion": kept,
        "effective_queries": len(effective),
        "queries": n_total,
        "defaults": DEFAULT_CONDITION.as_dict(),
        **verdict.as_dict(),
        "per_query": {
            "better": better,
            "worse": len(worse),
            "unchanged": len(effective) - better - len(worse),
            "worse_queries": [{"id": qid, "delta": g} for qid, g in sorted(worse, key=lambda x: x[1])],
        },
    }


def _print_text(report: dict[str, Any]) -> None:
    click.echo(f"groove tune - {report['effective_queries']} effective of {report['queries']} queries")
    click.echo(
        f"  cross-validated nDCG@5 gain {report['mean_gain']:+.4f} "
        f"(paired SE {report['standard_error']:.4f}), selection stability {report['stability']:.0%}, "
        f"sign test p = {report['sign_test_p']:.3f}"
    )
    pq = report["per_query"]
    click.echo(f"  per query: {pq['better']} better, {pq['worse']} worse, {pq['unchanged']} unchanged")
    for w in pq["worse_queries"][:10]:
        click.echo(f"    ↓ {w['id']}  {w['delta']:+.3f}")
    if report["snippet"]:
        click.echo(
            "Verdict: adopt. Paste into groove.toml, then confirm with groove eval on your real setup:"
        )
        click.echo(report["snippet"])
    else:
        click.echo("Verdict: keep the built-in defaults.")
        for reason in report["reasons"]:
            click.echo(f"  - {reason}")


@click.command("tune")
@kb_option
@model_option
@config_option
@click.option(
    "--golden", type=click.Path(dir_okay=False), help="Golden file (default <kb_path>/.groove-eval.yml)."
)
@click.option("--k", "k_raw", metavar="1,5,10", help="Cut-offs for the secondary recall@k metrics.")
@click.option("--limit", type=int, help="Results per query (default: the largest k).")
@click.option("--no-color", is_flag=True, help="No colour (the text report has none).")
@format_option(("text", "json"), "text")
@click.pass_context
def tune_command(
    ctx: click.Context,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    golden: str | None,
    k_raw: str | None,
    limit: int | None,
    no_color: bool,
    fmt: str,
) -> None:
    """Measure whether [search.fusion] settings can improve retrieval on this KB (applies nothing)."""
    app = build_app(
        effective_config_path(ctx, config_path),
        kb_path,
        model=model,
        reranker="none",
        index_path=index_path_of(ctx),
    )
    ks = normalize_k_values(
        tuple(min(k, MAX_TUNE_K) for k in k_values_of(k_raw, tuple(app.config.eval.k_values)))
    )
    ks = tuple(sorted(set(ks) | {5}))  # nDCG@5 is the primary metric
    run_limit = effective_limit(ks, limit)
    golden_set = load_golden(golden_path(golden, app.config.eval.golden, app.kb), app.kb)
    raw = open_for_search(app.db, app.kb, app.embedder, app.model_choice)
    try:
        store = memoised(raw)
        effective = tuple(q for q in golden_set.queries if candidates(store, q.query) >= 2)
        if not effective:
            echo_err(ZERO_N)
            ctx.exit(2)
        if len(effective) < N_WARN:
            echo_err(
                f"warning: only {len(effective)} effective queries (< {N_WARN}): "
                "results are suggestive, not conclusive"
            )
        if not raw.any_context():
            echo_err(
                "warning: every chunk has an empty context, so the context-weight axis cannot change any "
                "score: it is not measured (not 'no effect')"
            )
        subset = attrs.evolve(golden_set, queries=effective)

        def progress(done: int) -> None:
            if done % 64 == 0:
                echo_err(f"tune: {done} of {len(GRID)} conditions")

        queries = CachedQueries(ModelQueries(app.embedder))
        # The config's fusion method, leg weights and section grouping, as search and eval rank;
        # no filters, reranker, MMR or parent retriever (R10.24).
        base = resolve_request(
            app.config, "", filters=SearchFilters(), rerank=False, mmr=False, parent_retriever=False
        )
        primary, secondary = score_grid(store, queries, subset, ks, run_limit, progress, base)
    finally:
        raw.close()
    report = _report(decide(primary, secondary), effective, len(golden_set.queries), kept_fusion(base.fusion))
    if fmt == "json":
        click.echo(dump_json(report))
    else:
        _print_text(report)

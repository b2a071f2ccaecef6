"""``groove tune``: can ``[search.fusion]`` move retrieval on this KB? (SPEC §8.9, §10.6).

Every grid condition runs the golden queries through the production pipeline (``run_search``) with
no reranker, MMR, parent retriever or filters. The 384 conditions share most of their work: the
query embedding, the vector leg and the hit rows never depend on the fusion settings, and the
full-text legs depend only on the bm25 weights. A memo in front of the store and the embedder
makes each distinct read happen once, so tune costs about 64 full-text queries per golden query,
not 384 searches. It applies nothing: it prints a verdict and, when adopting, a snippet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import click
import numpy as np

from ..app import build_app
from ..console import echo_err
from ..eval.golden import GoldenQuery, GoldenSet
from ..eval.runner import effective_limit, normalize_k_values, run_eval
from ..eval.tune import DEFAULT_CONDITION, GRID, Condition, TuneVerdict, decide, fusion_snippet
from ..index.guard import open_for_search
from ..interfaces import Embedder
from ..search.pipeline import run_search
from ..search.query import compile_query
from ..search.request import FusionSettings, SearchRequest, clamp_limit
from ..types import SearchFilters
from .eval import _golden_path, _k_values, _load_golden
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


def _key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(_key(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    try:
        hash(value)
    except TypeError:  # e.g. SearchFilters holds dicts; its repr is complete and deterministic
        return (type(value).__name__, repr(value))
    return value


class _Memo:
    """Memoises every method call of a read-only object (the store during tune)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._cache: dict[Any, Any] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            key = (name, _key(args), _key(tuple(sorted(kwargs.items()))))
            if key not in self._cache:
                self._cache[key] = attr(*args, **kwargs)
            return self._cache[key]

        return call


class _QueryCache(Embedder):
    """The run's embedder with each query text embedded once."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.id, self.identity, self.dimension = inner.id, inner.identity, inner.dimension
        self._cache: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._cache:
            self._cache[text] = self.inner.embed_query(text)
        return self._cache[text]


def _candidates(store: Any, query: str) -> int:
    """R10.24: full-text candidates of the positive expression, minus the excluded rows."""
    compiled = compile_query(query)
    if compiled.expression is None:
        return 0
    rows = store.fts_rowids(compiled.expression)
    if compiled.negative_expression:
        rows = rows - store.fts_rowids(compiled.negative_expression)
    return len(rows)


def _fusion(c: Condition) -> FusionSettings:
    return FusionSettings(
        rrf_k=c.rrf_k, heading_weight=c.heading, context_weight=c.context, content_weight=c.content
    )


def _score_grid(
    store: Any,
    embedder: Embedder,
    golden: GoldenSet,
    ks: tuple[int, ...],
    limit: int,
    progress: Callable[[int], None],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """nDCG@5 and the secondary metrics for every condition (rows) and query (columns)."""
    n = len(golden.queries)
    primary = np.zeros((len(GRID), n))
    secondary = {f"recall@{k}": np.zeros((len(GRID), n)) for k in ks} | {"MRR": np.zeros((len(GRID), n))}
    for i, condition in enumerate(GRID):
        base = SearchRequest(query="", limit=limit, filters=SearchFilters(), fusion=_fusion(condition))

        def search(query: str, k: int, base: SearchRequest = base) -> Any:
            request = attrs.evolve(base, query=query, limit=clamp_limit(k))
            return run_search(store, embedder, request).results

        run = run_eval(golden, search, k_values=ks, limit=limit, fingerprint={}, corpus={})
        for j, result in enumerate(run.per_query):
            primary[i, j] = result.metrics.ndcg_at_k[5]
            secondary["MRR"][i, j] = result.metrics.reciprocal_rank
            for k in ks:
                secondary[f"recall@{k}"][i, j] = result.metrics.recall_at_k[k]
        progress(i + 1)
    return primary, secondary


def _report(verdict: TuneVerdict, effective: Sequence[GoldenQuery], n_total: int) -> dict[str, Any]:
    worse = [(q.id, g) for q, g in zip(effective, verdict.per_query_gain, strict=True) if g < -1e-12]
    better = sum(1 for g in verdict.per_query_gain if g > 1e-12)
    return {
        "verdict": "adopt" if verdict.adopt else "keep the built-in defaults",
        "snippet": fusion_snippet(verdict.refit) if verdict.adopt else None,
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
        tuple(min(k, MAX_TUNE_K) for k in _k_values(k_raw, tuple(app.config.eval.k_values)))
    )
    ks = tuple(sorted(set(ks) | {5}))  # nDCG@5 is the primary metric
    run_limit = effective_limit(ks, limit)
    golden_set = _load_golden(_golden_path(golden, app.config.eval.golden, app.kb), app.kb)
    raw = open_for_search(app.db, app.kb, app.embedder, app.model_choice)
    try:
        store = _Memo(raw)
        effective = tuple(q for q in golden_set.queries if _candidates(store, q.query) >= 2)
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

        primary, secondary = _score_grid(store, _QueryCache(app.embedder), subset, ks, run_limit, progress)
    finally:
        raw.close()
    report = _report(decide(primary, secondary), effective, len(golden_set.queries))
    if fmt == "json":
        click.echo(dump_json(report))
    else:
        _print_text(report)

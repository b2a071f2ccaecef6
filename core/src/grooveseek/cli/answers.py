"""What ``groove search`` and ``groove graph`` print, given their parsed flags and a way to run.

The in-process command and the resident server (``grooveseek.resident.server``) both call these,
so an answer through the socket is the answer the command would have printed itself. The flags
arrive as click parsed them (``ctx.params``; lists where click gave tuples, after a JSON trip).
This module imports the search stack; ``cli/search.py`` and ``cli/graph.py`` import it only once
the resident path has declined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..config import GrooveConfig
from ..interfaces import Embedder
from ..search.filters import quality_threshold
from ..search.graph import GraphResult, connection_graph
from ..search.request import SearchRequest, resolve_request
from ..store.interface import IndexStore
from ..types import SearchFilters, SearchResponse
from .graph import graph_params
from .options import dump_json

Warn = Callable[[str], None]


def split_commas(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def field_map(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``KEY=VALUE`` flags grouped by key; ``cli/search.py`` has already refused malformed ones."""
    out: dict[str, list[str]] = {}
    for value in values:
        key, _, val = value.partition("=")
        out.setdefault(key, []).append(val)
    return {k: tuple(v) for k, v in out.items()}


def search_request(
    cfg: GrooveConfig, p: Mapping[str, Any], *, reranker_loaded: bool, warn: Warn
) -> SearchRequest:
    """The request ``groove search`` runs for these flags (R8.14)."""
    reranker = p["reranker"]
    filters = SearchFilters(
        category=p["category"],
        topic=p["topic"],
        min_quality=quality_threshold(cfg, p["min_quality"], p["include_low_quality"]),
        path_globs=tuple(p["path_globs"]) or None,
        tags_any=split_commas(p["tags_any"]),
        tags_all=split_commas(p["tags_all"]),
        date_from=p["date_from"],
        date_to=p["date_to"],
        fields=field_map(p["fields"]),
        fields_not=field_map(p["fields_not"]),
    )
    return resolve_request(
        cfg,
        p["query"],
        limit=p["limit"],
        filters=filters,
        min_confidence_ratio=p["min_confidence_ratio"],
        rerank=True if reranker not in (None, "none") else (False if reranker == "none" else None),
        reranker_loaded=reranker_loaded,
        mmr=p["mmr"],
        mmr_lambda=p["mmr_lambda"],
        mmr_same_doc_penalty=p["mmr_same_doc_penalty"],
        parent_retriever=p["parent_retriever"],
        explain=p["explain"],
        warn=warn,
        sections=False if p.get("pieces") else None,
    )


def search_output(
    cfg: GrooveConfig,
    p: Mapping[str, Any],
    run: Callable[[SearchRequest], SearchResponse],
    *,
    reranker_loaded: bool,
    warn: Warn,
) -> str:
    """The text ``groove search`` prints on stdout; ``run`` executes the pipeline."""
    from .search import render_text

    request = search_request(cfg, p, reranker_loaded=reranker_loaded, warn=warn)
    response = run(request)
    if p["fmt"] != "json" and response.vectors_pending:
        warn(
            f"{response.vectors_pending:,} chunks still wait for vectors (an index run is filling them); "
            "the keyword legs cover every document, the vector leg the rest"
        )
    if p["fmt"] == "json":
        answer = response.as_dict()
        if p.get("span_units") == "chars":
            answer["results"] = [char_spans(hit.as_dict()) for hit in response.results]
        return dump_json(answer)
    return render_text(response, request.min_confidence_ratio, full=p["full"])


def char_spans(hit: dict[str, Any]) -> dict[str, Any]:
    """``--span-units chars``: turn a JSON hit's ``match_spans`` from UTF-8 byte offsets (the
    default, docs/retrieval.md) into code-point offsets, which index a Python ``str`` directly."""
    spans = hit.get("match_spans")
    if not spans:
        return hit
    raw = str(hit["content"]).encode("utf-8")
    # Offsets always fall on character boundaries (docs/retrieval.md), so each prefix decodes.
    for span in spans:
        span["start"] = len(raw[: span["start"]].decode("utf-8"))
        span["end"] = len(raw[: span["end"]].decode("utf-8"))
    return hit


def graph_output(cfg: GrooveConfig, p: Mapping[str, Any], store: IndexStore) -> str:
    """The text ``groove graph`` prints on stdout, walked over ``store``."""
    from .graph import render

    result: GraphResult = connection_graph(
        store, graph_params(p), min_quality=cfg.quality_filter.effective_threshold
    )
    return render(result, p["fmt"])


def in_process_search(
    cfg: GrooveConfig,
    p: Mapping[str, Any],
    open_store: Callable[[], IndexStore],
    embedder: Embedder,
    reranker: Any,
    warn: Warn,
) -> str:
    """The one-shot path: open the index, search, close."""
    from ..search.pipeline import run_search
    from ..search.queryvectors import ModelQueries

    queries = ModelQueries(embedder)

    def run(request: SearchRequest) -> SearchResponse:
        store = open_store()
        try:
            return run_search(store, queries, request, reranker=reranker)
        finally:
            store.close()

    return search_output(cfg, p, run, reranker_loaded=reranker is not None, warn=warn)

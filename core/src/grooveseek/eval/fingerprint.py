"""The fingerprint of an eval run (R10.15): what makes two runs' figures comparable.

Optional parts appear only when they are on, so a run at the defaults has the short fingerprint;
"at the defaults" means the config model's defaults, which ``search.request`` also takes its
settings' defaults from, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..search.fusion import fusion_fingerprint
from ..search.query import FTS_QUERY_VERSION
from ..search.request import FusionSettings, SearchRequest
from .golden import GoldenSet
from .metrics import METRIC_VERSION


def fingerprint(
    *,
    model: str,
    reranker: str | None,
    request: SearchRequest,
    golden: GoldenSet,
    ks: tuple[int, ...],
    legs: str,
    context_mode: str | None,
    languages: Sequence[str] = ("en",),
) -> dict[str, Any]:
    """R10.15 for one run: ``model`` is the embedder identity, ``reranker`` the reranker id (used
    only when the request reranks), ``legs`` the leg set's name, ``context_mode`` the index's and
    ``languages`` the embedder's (the vector weight rule depends on them)."""
    out: dict[str, Any] = {
        "model": model,
        "reranker": reranker if request.rerank else None,
        "limit": request.limit,
        "k_values": list(ks),
        "golden_hash": golden.sha256,
        "metric_version": METRIC_VERSION,
        "fts_query_version": FTS_QUERY_VERSION,
    }
    if request.mmr is not None:
        out["mmr"] = {"lambda": request.mmr.lambda_, "same_doc_penalty": request.mmr.same_doc_penalty}
    if request.parent is not None:
        out["parent_retriever"] = {
            "whole_doc_threshold_tokens": request.parent.whole_doc_threshold_tokens,
            "max_expanded_tokens": request.parent.max_expanded_tokens,
        }
    fusion = request.fusion
    if fusion != FusionSettings():
        out["fusion"] = {
            "rrf_k": fusion.rrf_k,
            "heading": fusion.heading_weight,
            "context": fusion.context_weight,
            "content": fusion.content_weight,
        }
    # Issue 11: the RRF leg weights, and the rule that sets the vector weight from the embedder's
    # languages, are always part of the fingerprint, so runs under other weights never compare equal.
    out["leg_weights"] = fusion_fingerprint(fusion.explicit_leg_weights, languages)
    # Issue 27: how the legs are fused and whether pieces of one section are one hit change every
    # ranking, so they are always recorded too.
    out["fusion_method"] = fusion.method
    out["group_sections"] = request.sections
    if context_mode == "static":  # the index's mode, not the config's (R10.15)
        out["context_mode"] = "static"
    if legs != "hybrid":
        out["legs"] = legs
    return out

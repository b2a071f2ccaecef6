"""The search request: every per-call knob of the pipeline, already resolved against the config.

CLI ``search``, MCP ``search``, ``eval`` and ``tune`` build a ``SearchRequest`` with
``resolve_request`` (precedence: per call > config > default, R1.5, R6.33, R6.38, R6.42) and hand
it to ``pipeline.run_search``. Validation errors are ``SearchError``s with the SPEC's wording.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs

from ..config.model import FusionConfig, GrooveConfig, MmrConfig, ParentRetrieverConfig, SearchConfig
from ..console import OncePerProcess
from ..errors import SearchError
from ..types import SearchFilters

MAX_LIMIT = 1000
# The settings' defaults are the config model's: one source, so "differs from the defaults" (the
# eval fingerprint, R10.15) means the same thing here as in groove.toml.
_FUSION = FusionConfig()
_MMR = MmrConfig()
_PARENT = ParentRetrieverConfig()
_SEARCH = SearchConfig()
MMR_OVERRIDE_WARNING = "MMR override values were provided but effective MMR is off; values ignored"
MMR_OVERRIDE_ONCE = OncePerProcess()


@attrs.frozen
class FusionSettings:
    rrf_k: float = _FUSION.rrf_k
    heading_weight: float = _FUSION.bm25_heading_weight
    context_weight: float = _FUSION.bm25_context_weight
    content_weight: float = _FUSION.bm25_content_weight
    fts_weight: float | None = None  # None: the built-in weight and rule (search/fusion.py)
    vector_weight: float | None = None
    cjk_weight: float | None = None
    method: str = _FUSION.method  # "rrf" or "convex" (search/fusion.py, issue 27)

    @property
    def weights(self) -> tuple[float, float, float]:
        """The bm25 column weights (heading, context, content)."""
        return (self.heading_weight, self.context_weight, self.content_weight)

    @property
    def explicit_leg_weights(self) -> dict[str, float | None]:
        """The configured RRF weight per leg, None where the built-in one applies."""
        return {"fts": self.fts_weight, "vector": self.vector_weight, "cjk": self.cjk_weight}


@attrs.frozen
class MmrSettings:
    lambda_: float = _MMR.lambda_
    same_doc_penalty: float = _MMR.same_doc_penalty


@attrs.frozen
class ParentSettings:
    whole_doc_threshold_tokens: int = _PARENT.whole_doc_threshold_tokens
    max_expanded_tokens: int = _PARENT.max_expanded_tokens


@attrs.frozen
class SearchRequest:
    """One search. ``mmr``/``parent`` are None when that stage is off; ``rerank`` is the effective switch."""

    query: str
    limit: int = 5
    filters: SearchFilters = attrs.field(factory=SearchFilters)
    min_confidence_ratio: float = _SEARCH.min_confidence_ratio
    ratio_given: bool = False  # R6.54: echoed in filter_applied only when it came with the call
    fusion: FusionSettings = attrs.field(factory=FusionSettings)
    legs: tuple[str, ...] = ("fts", "vector", "cjk")
    rerank: bool = False
    mmr: MmrSettings | None = None
    parent: ParentSettings | None = None
    explain: bool = False
    #: Issue 27: pieces of one section (document, heading, context, level) come back as one hit.
    sections: bool = _SEARCH.group_sections


def clamp_limit(limit: int) -> int:
    """R6.4: clamp to [1, 1000] without error."""
    return max(1, min(MAX_LIMIT, int(limit)))


def fusion_from(config: GrooveConfig) -> FusionSettings:
    f = config.search.fusion
    return FusionSettings(
        f.rrf_k,
        f.bm25_heading_weight,
        f.bm25_context_weight,
        f.bm25_content_weight,
        f.fts_weight,
        f.vector_weight,
        f.cjk_weight,
        f.method,
    )


def _unit(name: str, value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or not 0.0 <= value <= 1.0):
        raise SearchError(f"{name} out of range: {value} (must be 0.0..=1.0)")
    return value


def resolve_request(
    config: GrooveConfig,
    query: str,
    *,
    limit: int = 5,
    filters: SearchFilters | None = None,
    min_confidence_ratio: float | None = None,
    rerank: bool | None = None,
    reranker_loaded: bool = False,
    mmr: bool | None = None,
    mmr_lambda: float | None = None,
    mmr_same_doc_penalty: float | None = None,
    parent_retriever: bool | None = None,
    legs: tuple[str, ...] = ("fts", "vector", "cjk"),
    explain: bool = False,
    warn: Callable[[str], None] | None = None,
    sections: bool | None = None,
) -> SearchRequest:
    """Apply per call > config > default for every knob and return the effective request."""
    _unit("mmr_lambda", mmr_lambda)
    _unit("mmr_same_doc_penalty", mmr_same_doc_penalty)
    cfg = config.search
    mmr_on = cfg.mmr.enabled if mmr is None else mmr
    overrides = mmr_lambda is not None or mmr_same_doc_penalty is not None
    if not mmr_on and overrides and warn is not None and MMR_OVERRIDE_ONCE.first():  # R6.39
        warn(MMR_OVERRIDE_WARNING)
    mmr_settings = None
    if mmr_on:
        mmr_settings = MmrSettings(
            cfg.mmr.lambda_ if mmr_lambda is None else mmr_lambda,
            cfg.mmr.same_doc_penalty if mmr_same_doc_penalty is None else mmr_same_doc_penalty,
        )
    parent_on = cfg.parent_retriever.enabled if parent_retriever is None else parent_retriever
    parent = None
    if parent_on:
        pr = cfg.parent_retriever
        parent = ParentSettings(pr.whole_doc_threshold_tokens, pr.max_expanded_tokens)
    rerank_on = reranker_loaded and (config.rerank_by_default if rerank is None else rerank)
    return SearchRequest(
        query=query,
        limit=clamp_limit(limit),
        filters=filters
        if filters is not None
        else SearchFilters(min_quality=config.quality_filter.effective_threshold),
        min_confidence_ratio=cfg.min_confidence_ratio
        if min_confidence_ratio is None
        else min_confidence_ratio,
        ratio_given=min_confidence_ratio is not None,
        fusion=fusion_from(config),
        legs=legs,
        rerank=rerank_on,
        mmr=mmr_settings,
        parent=parent,
        explain=explain,
        sections=cfg.group_sections if sections is None else sections,
    )

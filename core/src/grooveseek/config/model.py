"""The groove.toml schema as attrs classes: every key of SPEC §1.3, with its default.

Values here are already checked and, for paths, absolute. Loading, discovery and trust live in
``grooveseek.config.load``; this module only says what exists. Every table is closed (R1.1).
"""

from __future__ import annotations

import attrs

MIB50 = 52_428_800
DEFAULT_EXCLUDE_DIRS = (".obsidian", ".git", "node_modules", "target", ".vscode", ".idea")
BUILTIN_FASTEMBED_MODELS = ("bge-small-en-v1.5", "bge-m3", "minilm-l6-int8")
#: Models an untrusted config may name: the FastEmbed ones and the packaged multilingual default.
BUILTIN_MODELS = (
    *BUILTIN_FASTEMBED_MODELS,
    "use-multilingual-v3",
    "minilm-l6-int8+use-multilingual-v3",
)
BUILTIN_RERANKERS = ("bge-v2-m3", "jina-v2-ml", "bge-base")
# The model a NEW index gets when no flag or key names one: the packaged offline models, so the
# first `groove index --kb-path ~/notes` works with no network and no flags. An existing index
# always keeps the model it records (``app.follow_index``). This is the one place that names it
# (docs/configuration.md, "Which model"); a different packaged default is a change here alone.
# Since issue 11 a composite (``grooveseek.composite``): the English specialist minilm and the
# multilingual USE, each query embedded by the part that reads its language. On the bench sets
# it beats either model alone on every set (npm-docs hybrid nDCG@10 .65 against .62 for minilm and
# .58 for USE; js-primer .75 against .67 and .68; docs/retrieval.md, "Two embedders, one index").
NEW_INDEX_MODEL = "minilm-l6-int8+use-multilingual-v3"


@attrs.frozen
class QualityFilterConfig:
    enabled: bool = True
    threshold: float = 0.3

    @property
    def effective_threshold(self) -> float:
        """R1.13: ``threshold`` when enabled, else 0."""
        return self.threshold if self.enabled else 0.0


@attrs.frozen
class BestPracticeConfig:
    path_templates: tuple[str, ...] = ()


@attrs.frozen
class CodeConfig:
    max_chunk_chars: int = 3500


@attrs.frozen
class ParsersConfig:
    enabled: tuple[str, ...] = ("md",)
    code: CodeConfig = attrs.field(factory=CodeConfig)


@attrs.frozen
class IndexConfig:
    fail_on_frontmatter_error: bool = False
    max_binary_file_size: int = MIB50
    max_text_file_size: int = MIB50
    max_decompressed_size: int = MIB50
    path: str | None = None  # None = the default location (config/location.py); absolute once loaded
    # None: the embedder's max_input_tokens (docs/retrieval.md, "Chunk size"). Trusted configs only.
    max_chunk_tokens: int | None = None
    # None: no worker processes, the indexing process embeds (index/workers.py, issue 26). Trusted only.
    embed_workers: int | None = None
    # None: the SQLite file. A PostgreSQL URL keeps the index on that server (docs/postgres.md);
    # trusted configs only, and never printed with its password.
    database_url: str | None = attrs.field(default=None, repr=False)


@attrs.frozen
class WatchConfig:
    enabled: bool = True
    debounce_ms: int = 500
    poll: bool = False


@attrs.frozen
class HttpConfig:
    bind: str = "127.0.0.1:3100"
    allowed_hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
    allowed_origins: tuple[str, ...] | None = None  # None = loopback origins of the bound port
    healthz_public: bool = True
    max_sessions: int = 256


@attrs.frozen
class TransportConfig:
    kind: str = "stdio"
    http: HttpConfig = attrs.field(factory=HttpConfig)


@attrs.frozen
class EvalConfig:
    golden: str | None = None  # None = <kb_path>/.groove-eval.yml
    history_size: int = 10
    k_values: tuple[int, ...] = (1, 5, 10)
    regression_threshold: float = 0.05


@attrs.frozen
class MmrConfig:
    enabled: bool = False
    lambda_: float = attrs.field(default=0.7, alias="lambda_")
    same_doc_penalty: float = 0.0


@attrs.frozen
class FusionConfig:
    rrf_k: float = 60.0
    bm25_heading_weight: float = 2.0
    bm25_context_weight: float = 1.0
    bm25_content_weight: float = 1.0
    # Weighted RRF (docs/retrieval.md): None keeps the built-in weight, 1.0, and for the vector leg
    # the CJK-query rule driven by Embedder.languages; a number replaces both.
    fts_weight: float | None = None
    vector_weight: float | None = None
    cjk_weight: float | None = None
    # Issue 27: "rrf" (weighted reciprocal rank fusion), "convex" (normalised scores), or "auto":
    # convex for a mostly-CJK query, RRF for any other (docs/retrieval.md, "Score-aware fusion").
    method: str = "auto"


@attrs.frozen
class ParentRetrieverConfig:
    enabled: bool = False
    whole_doc_threshold_tokens: int = 100
    max_expanded_tokens: int = 2000


@attrs.frozen
class SearchConfig:
    min_confidence_ratio: float = 1.5
    mmr: MmrConfig = attrs.field(factory=MmrConfig)
    fusion: FusionConfig = attrs.field(factory=FusionConfig)
    parent_retriever: ParentRetrieverConfig = attrs.field(factory=ParentRetrieverConfig)
    # Issue 27: the pieces of one section come back as one hit (false: every piece on its own).
    group_sections: bool = True


@attrs.frozen
class ContextualConfig:
    # None = not set: an index keeps the context mode it records, a new index gets breadcrumbs
    # (issue 27, docs/retrieval.md "Breadcrumbs by default"; ``context_enabled``).
    enabled: bool | None = None


def context_enabled(config: ContextualConfig, recorded: str | None, *, new_index: bool) -> bool:
    """Whether a run builds chunks with the context breadcrumb (R3.84 as changed by issue 27).

    An explicit ``enabled`` wins (a disagreement with the index warns, R4.35). Unset, an index keeps
    the mode it records, and only a new index (a forced rebuild is one) gets breadcrumbs: one built
    before R4.35, which records no mode, was built without them (the old default), so it stays off
    rather than mixing two kinds of chunk.
    """
    if config.enabled is not None:
        return config.enabled
    if recorded is not None:
        return recorded == "static"
    return new_index


@attrs.frozen
class EmbeddingConfig:
    provider: str = "fastembed"
    endpoint: str | None = None
    model: str | None = None
    query_model: str | None = None
    document_model: str | None = None
    dimension: int | None = None
    request_dimensions: bool = False
    api_key: str | None = attrs.field(default=None, repr=False)  # never in logs or reprs (R5.19)
    timeout_seconds: int = 60
    max_input_chars: int = 8000
    max_retries: int = 3


@attrs.frozen
class RerankerEndpointConfig:
    """A ``[reranker]`` table: reranking over a ``/rerank`` route (groove-openai, design).

    In TOML ``reranker`` is either an id string or this table; a table sets ``reranker`` to
    ``ENDPOINT_RERANKER_ID`` and lands here (``config.parse``).
    """

    endpoint: str | None = None
    model: str | None = None
    request_format: str = "documents"  # "documents" (llama.cpp, vLLM, Jina) | "texts" (TEI)
    batch_size: int = 32
    api_key: str | None = attrs.field(default=None, repr=False)  # never in logs or reprs (R5.19)
    timeout_seconds: int = 60
    max_input_chars: int = 8000
    max_retries: int = 3


ENDPOINT_RERANKER_ID = "rerank-endpoint"


@attrs.frozen
class GrooveConfig:
    """The effective configuration (after trust restrictions, R1.29)."""

    kb_path: str | None = None
    model: str | None = None  # None = not named: the index's own model, else NEW_INDEX_MODEL
    reranker: str = "none"
    rerank_by_default: bool = True
    fastembed_cache_dir: str | None = None
    exclude_headings: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] = DEFAULT_EXCLUDE_DIRS
    quality_filter: QualityFilterConfig = attrs.field(factory=QualityFilterConfig)
    best_practice: BestPracticeConfig = attrs.field(factory=BestPracticeConfig)
    parsers: ParsersConfig = attrs.field(factory=ParsersConfig)
    index: IndexConfig = attrs.field(factory=IndexConfig)
    watch: WatchConfig = attrs.field(factory=WatchConfig)
    transport: TransportConfig = attrs.field(factory=TransportConfig)
    eval: EvalConfig = attrs.field(factory=EvalConfig)
    search: SearchConfig = attrs.field(factory=SearchConfig)
    contextual: ContextualConfig = attrs.field(factory=ContextualConfig)
    embedding: EmbeddingConfig = attrs.field(factory=EmbeddingConfig)
    # Set only from a [reranker] table (never a TOML key of its own name; config.parse).
    reranker_endpoint: RerankerEndpointConfig | None = None


@attrs.frozen
class LoadedConfig:
    """A config plus where it came from (R1.7, R1.9) and the trust warnings it produced."""

    config: GrooveConfig
    source: str  # explicit | cwd | git-root | alongside-binary | none
    path: str | None
    trusted: bool
    warnings: tuple[str, ...] = ()

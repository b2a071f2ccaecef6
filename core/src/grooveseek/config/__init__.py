"""The configuration layer: the groove.toml schema, discovery, validation, trust and what the
effective config selects.

Callers need only ``load_config`` (once per process, before anything opens the index, R1.6),
``describe`` for the R1.9 log line, ``resolve_kb_path`` and ``plugin_selection``.
"""

from __future__ import annotations

from .load import describe, launcher_dir_from_argv, load_checked_config, load_config
from .model import (
    BUILTIN_FASTEMBED_MODELS,
    BUILTIN_MODELS,
    BUILTIN_RERANKERS,
    DEFAULT_EXCLUDE_DIRS,
    MIB50,
    NEW_INDEX_MODEL,
    BestPracticeConfig,
    CodeConfig,
    ContextualConfig,
    EmbeddingConfig,
    EvalConfig,
    FusionConfig,
    GrooveConfig,
    HttpConfig,
    IndexConfig,
    LoadedConfig,
    MmrConfig,
    ParentRetrieverConfig,
    ParsersConfig,
    QualityFilterConfig,
    SearchConfig,
    TransportConfig,
    WatchConfig,
)
from .parse import UNLIMITED, parse_size
from .resolve import DB_NAME, KB_PATH_REQUIRED, plugin_selection, resolve_index_path, resolve_kb_path
from .validate import parse_bind

__all__ = [
    "BUILTIN_FASTEMBED_MODELS",
    "BUILTIN_MODELS",
    "BUILTIN_RERANKERS",
    "DB_NAME",
    "DEFAULT_EXCLUDE_DIRS",
    "KB_PATH_REQUIRED",
    "MIB50",
    "NEW_INDEX_MODEL",
    "UNLIMITED",
    "BestPracticeConfig",
    "CodeConfig",
    "ContextualConfig",
    "EmbeddingConfig",
    "EvalConfig",
    "FusionConfig",
    "GrooveConfig",
    "HttpConfig",
    "IndexConfig",
    "LoadedConfig",
    "MmrConfig",
    "ParentRetrieverConfig",
    "ParsersConfig",
    "QualityFilterConfig",
    "SearchConfig",
    "TransportConfig",
    "WatchConfig",
    "describe",
    "launcher_dir_from_argv",
    "load_checked_config",
    "load_config",
    "parse_bind",
    "parse_size",
    "plugin_selection",
    "resolve_index_path",
    "resolve_kb_path",
]

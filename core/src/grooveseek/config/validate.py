"""Value rules of SPEC §1.3 applied to a structured config: ranges, cross-key rules, normalisation.

Runs after ``grooveseek.config.parse`` has checked the shape, and before trust restrictions. It
collects every problem of a file into one ``ConfigError`` (R1.4), normalises what the spec says
to normalise (clamped threshold, lowercased parser ids, sorted k_values, absolute paths, R1.3)
and returns the load-time warnings (R2.11).
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from ..errors import ConfigError
from .model import (
    MIB50,
    EmbeddingConfig,
    EvalConfig,
    GrooveConfig,
    HttpConfig,
    IndexConfig,
    ParsersConfig,
    SearchConfig,
)
from .parse import SIZE_KEYS, ParsedFile
from .resolve import empty_id_cause

MIN_CODE_CHUNK_CHARS = 30  # the smallest piece the code chunker keeps on its own (R1.16)
MAX_PARENT_TOKENS = 8192  # BGE-M3 context window (R1.25)
MAX_DIMENSION = 8192  # sqlite-vec refuses a longer vector column (its SQLITE_VEC_VEC0_MAX_DIMENSIONS)
TRANSPORT_KINDS = ("stdio", "http")
PROVIDERS = ("fastembed", "openai-compatible")
# R1.27: the keys that only mean something for an HTTP endpoint.
ENDPOINT_KEYS = (
    "endpoint",
    "query_model",
    "document_model",
    "dimension",
    "request_dimensions",
    "api_key",
    "timeout_seconds",
    "max_input_chars",
    "max_retries",
)
XLS_MESSAGE = (
    '[parsers].enabled contains "xls", which is not supported: a legacy .xls workbook is materialised '
    "whole while it is opened, so a small crafted file can exhaust memory. Convert the workbook to .xlsx "
    "(read as a stream) and keep the original: conversion carries cell text over but is not lossless "
    "(VBA macros need .xlsm)."
)
EMPTY_PARSERS_MESSAGE = (
    "[parsers].enabled must contain at least one id (got empty array). "
    'Remove the key entirely to use the default ["md"].'
)
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+.*")


@attrs.define
class Findings:
    """What the rules found in one file. Parser-id problems are kept apart for their R1.4 header."""

    errors: list[str] = attrs.Factory(list)
    parser_errors: list[str] = attrs.Factory(list)
    warnings: list[str] = attrs.Factory(list)


def num(value: float) -> str:
    """Show a number as TOML would write it (``nan``, ``inf``, ``0.7``)."""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def expand_user(value: str, home: Path) -> str:
    """Expand a leading ``~`` (alone or before a separator) to ``home``; ``~user`` is left alone."""
    seps = ("/", "\\") if os.name == "nt" else ("/",)
    if value == "~":
        return str(home)
    if value.startswith("~") and value[1:2] in seps:
        return str(home) + value[1:]
    return value


def absolute_path(value: str, base: Path, home: Path) -> str:
    """R1.3: a relative path resolves against ``base`` (the config file's directory).

    Symlinks are followed component by component (realpath) instead of collapsing ``..`` as text,
    which would give a different directory than the OS does when a component is a symlink.
    """
    return os.path.realpath(os.path.join(base, expand_user(value, home)))


def parse_bind(value: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """Parse ``"<ipv4>:<port>"`` or ``"[<ipv6>]:<port>"`` (a socket address, no host names).

    Raises:
        ValueError: the value is not a socket address.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise ValueError(value)
    if host.startswith("[") and host.endswith("]"):
        return ipaddress.IPv6Address(host[1:-1]), int(port)
    return ipaddress.IPv4Address(host), int(port)


def _finite_range(f: Findings, label: str, value: float, low: float, high: float) -> None:
    if not (math.isfinite(value) and low <= value <= high):
        f.errors.append(f"{label} must be a finite number in {num(low)}..={num(high)}, got {num(value)}")


def _at_least(f: Findings, label: str, value: int, low: int) -> None:
    if value < low:
        f.errors.append(f"{label} must be >= {low}, got {value}")


def _check_paths(cfg: GrooveConfig, base: Path, home: Path, f: Findings) -> GrooveConfig:
    changes: dict[str, Any] = {}
    for key in ("kb_path", "fastembed_cache_dir"):
        value = getattr(cfg, key)
        if value is None:
            continue
        if value == "":
            f.errors.append(f"{key} must not be empty; remove the key or name a directory")
        else:
            changes[key] = absolute_path(value, base, home)
    golden = cfg.eval.golden
    if golden == "":
        f.errors.append("[eval].golden must not be empty; remove the key to use <kb_path>/.groove-eval.yml")
    elif golden is not None:
        changes["eval"] = attrs.evolve(cfg.eval, golden=absolute_path(golden, base, home))
    index_path = cfg.index.path
    if index_path == "":
        f.errors.append(
            "[index].path must not be empty; remove the key to use the folder's own index in the data folder"
        )
    elif index_path is not None:
        changes["index"] = attrs.evolve(cfg.index, path=absolute_path(index_path, base, home))
    return attrs.evolve(cfg, **changes)


def _check_exclude_dirs(cfg: GrooveConfig, f: Findings) -> None:
    for entry in cfg.exclude_dirs:
        if "/" in entry or "\\" in entry:
            f.warnings.append(
                f'exclude_dirs entry "{entry}" contains a path separator and never matches; '
                "use .grooveignore for paths"
            )


def _check_quality(cfg: GrooveConfig, f: Findings) -> GrooveConfig:
    threshold = cfg.quality_filter.threshold
    if not math.isfinite(threshold):
        f.errors.append(f"[quality_filter].threshold must be a finite number, got {num(threshold)}")
        return cfg
    clamped = min(1.0, max(0.0, threshold))
    return attrs.evolve(cfg, quality_filter=attrs.evolve(cfg.quality_filter, threshold=clamped))


def _check_parsers(parsers: ParsersConfig, f: Findings) -> ParsersConfig:
    ids = tuple(pid.lower() for pid in parsers.enabled)
    if not ids:
        f.parser_errors.append(EMPTY_PARSERS_MESSAGE)
    seen: set[str] = set()
    for pid in ids:
        if pid == "xls":
            f.parser_errors.append(XLS_MESSAGE)
        elif pid in seen:
            f.parser_errors.append(f'[parsers].enabled contains duplicate id "{pid}"')
        seen.add(pid)
    chars = parsers.code.max_chunk_chars
    if chars < MIN_CODE_CHUNK_CHARS:
        f.errors.append(
            f"[parsers.code].max_chunk_chars must be >= {MIN_CODE_CHUNK_CHARS} (the smallest piece the "
            f"code chunker keeps on its own), got {chars}"
        )
    return attrs.evolve(parsers, enabled=ids)


def _check_http(http: HttpConfig, f: Findings) -> None:
    try:
        parse_bind(http.bind)
    except ValueError:
        f.errors.append(f"[transport.http].bind is not a valid socket address: {http.bind}")
    for origin in http.allowed_origins or ():
        if not _SCHEME_RE.fullmatch(origin):
            f.errors.append(
                f'[transport.http].allowed_origins entry "{origin}" has no scheme; write an origin such as '
                '"http://localhost:3100"'
            )
    _at_least(f, "[transport.http].max_sessions", http.max_sessions, 0)


def _check_transport_and_watch(cfg: GrooveConfig, f: Findings) -> None:
    if cfg.transport.kind not in TRANSPORT_KINDS:
        f.errors.append(f'[transport].kind must be "stdio" or "http", got "{cfg.transport.kind}"')
    _check_http(cfg.transport.http, f)
    _at_least(f, "[watch].debounce_ms", cfg.watch.debounce_ms, 0)


def _check_eval(ev: EvalConfig, f: Findings) -> EvalConfig:
    _at_least(f, "[eval].history_size", ev.history_size, 1)
    if not ev.k_values:
        f.errors.append("[eval].k_values must contain at least one integer >= 1 (got empty array)")
    for k in ev.k_values:
        _at_least(f, "[eval].k_values entry", k, 1)
    threshold = ev.regression_threshold
    if not (math.isfinite(threshold) and threshold >= 0):
        f.errors.append(f"[eval].regression_threshold must be a finite number >= 0, got {num(threshold)}")
    return attrs.evolve(ev, k_values=tuple(sorted(set(ev.k_values))))


def _check_search(search: SearchConfig, f: Findings) -> None:
    ratio = search.min_confidence_ratio
    if not (math.isfinite(ratio) and ratio >= 0):
        f.errors.append(f"[search].min_confidence_ratio must be a finite number >= 0, got {num(ratio)}")
    for key, value in (("lambda", search.mmr.lambda_), ("same_doc_penalty", search.mmr.same_doc_penalty)):
        if not 0.0 <= value <= 1.0:  # NaN fails every comparison, so it lands here too
            f.errors.append(f"[search.mmr].{key} must be in 0.0..=1.0, got {num(value)}")
    fusion = search.fusion
    _finite_range(f, "[search.fusion].rrf_k", fusion.rrf_k, 1.0, 1e6)
    if fusion.method not in ("auto", "rrf", "convex"):
        f.errors.append(
            f'[search.fusion].method must be "auto", "rrf" or "convex", got {fusion.method!r}; '
            '"auto" (the default) fuses mostly-CJK queries by normalised scores and others by RRF'
        )
    weights = {
        "bm25_heading_weight": fusion.bm25_heading_weight,
        "bm25_context_weight": fusion.bm25_context_weight,
        "bm25_content_weight": fusion.bm25_content_weight,
    }
    for key, value in weights.items():
        _finite_range(f, f"[search.fusion].{key}", value, 0.0, 1e6)
    if all(value == 0 for value in weights.values()):
        f.errors.append(
            "[search.fusion]: bm25_heading_weight, bm25_context_weight and bm25_content_weight are all 0; "
            "at least one must be above 0"
        )
    legs = {
        "fts_weight": fusion.fts_weight,
        "vector_weight": fusion.vector_weight,
        "cjk_weight": fusion.cjk_weight,
    }
    for key, leg_weight in legs.items():
        if leg_weight is not None:
            _finite_range(f, f"[search.fusion].{key}", leg_weight, 0.0, 1e6)
    if all(w == 0 for w in legs.values()):
        f.errors.append(
            "[search.fusion]: fts_weight, vector_weight and cjk_weight are all 0, so no search could "
            "rank anything; leave one out (its built-in weight is 1.0) or set it above 0"
        )
    _check_parent(search, f)


def _check_parent(search: SearchConfig, f: Findings) -> None:
    parent = search.parent_retriever
    low, high = parent.whole_doc_threshold_tokens, parent.max_expanded_tokens
    _at_least(f, "[search.parent_retriever].whole_doc_threshold_tokens", low, 0)
    if high <= low:
        f.errors.append(
            f"[search.parent_retriever].max_expanded_tokens ({high}) must be > "
            f"whole_doc_threshold_tokens ({low})"
        )
    if high > MAX_PARENT_TOKENS:
        f.errors.append(
            f"[search.parent_retriever].max_expanded_tokens must be <= {MAX_PARENT_TOKENS} "
            f"(BGE-M3 context window), got {high}"
        )


def _check_endpoint_url(endpoint: str, f: Findings, section: str = "embedding") -> None:
    example = (
        "http://localhost:11434/v1/embeddings"
        if section == "embedding"
        else "http://127.0.0.1:8080/v1/rerank"
    )
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in endpoint):
        # urlsplit silently drops CR, LF and tab, so the URL passed here and failed in the client.
        # Not echoed: the rest of the line may be a secret.
        f.errors.append(
            f"[{section}].endpoint contains a space or a control character (a line break, a tab); "
            f'write the URL on one line without spaces, e.g. "{example}"'
        )
        return
    try:
        url = urlsplit(endpoint)
        has_credentials = url.username is not None or url.password is not None
        host = url.hostname
    except ValueError:
        f.errors.append(f'[{section}].endpoint is not a valid URL; write the full URL, e.g. "{example}"')
        return
    if has_credentials:
        # The URL itself is not echoed: it carries a secret (R0.12).
        f.errors.append(
            f"[{section}].endpoint must not carry credentials (user:password@); "
            f"set GROOVE_{section.upper()}_API_KEY or [{section}].api_key instead"
        )
    elif url.scheme.lower() not in ("http", "https") or not host:
        f.errors.append(
            f'[{section}].endpoint must be an http:// or https:// URL with a host, got "{endpoint}"'
        )


def _check_reranker_table(cfg: GrooveConfig, f: Findings) -> None:
    """The ``[reranker]`` endpoint table (design; docs/embedding-endpoints.md)."""
    table = cfg.reranker_endpoint
    if table is None:
        return
    if table.endpoint is None:
        f.errors.append(
            "[reranker].endpoint is required in a [reranker] table; write the full URL of the rerank "
            'route, e.g. "http://127.0.0.1:8080/v1/rerank"'
        )
    else:
        _check_endpoint_url(table.endpoint, f, "reranker")
    if table.model == "":
        f.errors.append("[reranker].model is empty; name the model the server serves, or remove the key")
    if table.request_format not in ("documents", "texts"):
        f.errors.append(
            f'[reranker].request_format must be "documents" (llama.cpp, vLLM, Jina) or "texts" '
            f'(Hugging Face TEI), got "{table.request_format}"'
        )
    if not 1 <= table.batch_size <= 1000:
        f.errors.append(f"[reranker].batch_size must be in 1..=1000, got {table.batch_size}")
    _at_least(f, "[reranker].timeout_seconds", table.timeout_seconds, 1)
    _at_least(f, "[reranker].max_input_chars", table.max_input_chars, 1)
    if not 0 <= table.max_retries <= 10:
        f.errors.append(f"[reranker].max_retries must be in 0..=10, got {table.max_retries}")


def _check_embedding_numbers(emb: EmbeddingConfig, f: Findings) -> None:
    if emb.dimension is not None and not 1 <= emb.dimension <= MAX_DIMENSION:
        f.errors.append(
            f"[embedding].dimension must be in 1..={MAX_DIMENSION} (the most sqlite-vec stores per "
            f"vector), got {emb.dimension}; write the dimension of the vectors the endpoint returns"
        )
    _at_least(f, "[embedding].timeout_seconds", emb.timeout_seconds, 1)
    _at_least(f, "[embedding].max_input_chars", emb.max_input_chars, 1)
    if not 0 <= emb.max_retries <= 10:
        f.errors.append(f"[embedding].max_retries must be in 0..=10, got {emb.max_retries}")


def _check_fastembed(raw_emb: dict[str, Any], raw: dict[str, Any], f: Findings) -> None:
    for key in ENDPOINT_KEYS:
        if key in raw_emb:
            f.errors.append(
                f'[embedding].{key} is only used with provider = "openai-compatible"; remove it, or set '
                '[embedding].provider = "openai-compatible"'
            )
    if "model" in raw_emb and "model" in raw:
        f.errors.append(
            "[embedding].model and the top-level model both name the FastEmbed model; keep only one of them"
        )


def _check_openai(emb: EmbeddingConfig, raw: dict[str, Any], f: Findings) -> None:
    if "model" in raw:
        f.errors.append(
            'the top-level model cannot be used with [embedding].provider = "openai-compatible"; remove it '
            "and set [embedding].model (or query_model and document_model) instead"
        )
    if emb.endpoint is None:
        f.errors.append(
            '[embedding].endpoint is required with provider = "openai-compatible"; write the full URL, '
            'e.g. "http://localhost:11434/v1/embeddings"'
        )
    else:
        _check_endpoint_url(emb.endpoint, f)
    if emb.dimension is None:
        f.errors.append('[embedding].dimension is required with provider = "openai-compatible"')
    pair = (emb.query_model is not None, emb.document_model is not None)
    if pair[0] != pair[1]:
        f.errors.append("[embedding].query_model and document_model must be set together (both or neither)")
    if emb.model is not None and any(pair):
        f.errors.append(
            "[embedding].model cannot be combined with query_model / document_model; use model alone "
            "(one alias for both roles) or the pair"
        )
    if emb.model is None and not any(pair):
        f.errors.append(
            "[embedding].model (or query_model and document_model) is required with provider = "
            '"openai-compatible": name the model alias the endpoint serves'
        )


def _check_empty_ids(cfg: GrooveConfig, f: Findings) -> None:
    """R5.5, R0.18: an empty model or reranker id is refused, never read as "use the default".

    Otherwise ``[embedding].model = ""`` silently picked the default model and ``reranker = ""``
    silently turned reranking off.
    """
    if cfg.model == "":
        f.errors.append(empty_id_cause("model", "embedders"))
    if cfg.embedding.model == "":
        if cfg.embedding.provider == "openai-compatible":
            f.errors.append(
                "[embedding].model is empty; name the model alias the endpoint serves, or remove it "
                "and set query_model and document_model"
            )
        else:
            f.errors.append(empty_id_cause("[embedding].model", "embedders"))
    if cfg.reranker == "":
        f.errors.append(empty_id_cause("reranker", "rerankers"))


def _check_embedding(cfg: GrooveConfig, raw: dict[str, Any], f: Findings) -> None:
    emb = cfg.embedding
    raw_emb = raw.get("embedding") or {}
    if emb.provider == "fastembed":
        _check_fastembed(raw_emb, raw, f)
    elif emb.provider == "openai-compatible":
        _check_openai(emb, raw, f)
    else:
        f.errors.append(
            f'[embedding].provider must be "fastembed" or "openai-compatible", got "{emb.provider}"'
        )
    _check_embedding_numbers(emb, f)


# Below 64 tokens a piece is a phrase, not a passage; above 32k no embedder in use reads it.
MIN_CHUNK_TOKENS = 64
MAX_CHUNK_TOKENS = 32_768


# Each embedding worker holds its own copy of the model; past 64 that is memory, not speed.
MAX_EMBED_WORKERS = 64


def _check_index_numbers(index: IndexConfig, f: Findings) -> None:
    tokens = index.max_chunk_tokens
    if tokens is not None and not MIN_CHUNK_TOKENS <= tokens <= MAX_CHUNK_TOKENS:
        f.errors.append(
            f"[index].max_chunk_tokens must be in {MIN_CHUNK_TOKENS}..={MAX_CHUNK_TOKENS}, got {tokens}; "
            "remove the key to size chunks to the embedding model's window"
        )
    workers = index.embed_workers
    if workers is not None and not 1 <= workers <= MAX_EMBED_WORKERS:
        f.errors.append(
            f"[index].embed_workers must be in 1..={MAX_EMBED_WORKERS}, got {workers}; use 1 to embed in "
            "the indexing process (the default when the key is absent)"
        )


def _check_database_url(index: IndexConfig, f: Findings) -> None:
    """A URL a store backend can be chosen by; shown without its password (docs/postgres.md)."""
    url = index.database_url
    if url is None:
        return
    from ..store.backend import redact_url, url_scheme

    if not url.strip():
        f.errors.append(
            "[index].database_url must not be empty; remove the key to keep the index in a local file"
        )
    elif not url_scheme(url) or "://" not in url:
        f.errors.append(
            f"[index].database_url must be a URL such as postgresql://user@db.example:5432/groove, got "
            f"{redact_url(url)!r}; remove the key to keep the index in a local file"
        )


def check_values(parsed: ParsedFile, home: Path) -> tuple[GrooveConfig, list[str]]:
    """Apply every value rule of §1.3 to a structured file.

    Args:
        parsed: The file after shape checks.
        home: The home directory, for a leading ``~`` in path keys.

    Returns:
        The normalised config (absolute paths, clamped threshold, lowercased parser ids, sorted
        k_values) and the load-time warnings.

    Raises:
        ConfigError: ``<path>: invalid config`` (or ``invalid [parsers] config`` when only parser
            ids are wrong), followed by one line per problem.
    """
    f = Findings()
    cfg = _check_paths(parsed.config, parsed.path.parent, home, f)
    _check_exclude_dirs(cfg, f)
    cfg = _check_quality(cfg, f)
    cfg = attrs.evolve(cfg, parsers=_check_parsers(cfg.parsers, f), eval=_check_eval(cfg.eval, f))
    _check_transport_and_watch(cfg, f)
    _check_search(cfg.search, f)
    _check_embedding(cfg, parsed.raw, f)
    _check_reranker_table(cfg, f)
    _check_empty_ids(cfg, f)
    _check_index_numbers(cfg.index, f)
    _check_database_url(cfg.index, f)
    if f.errors:
        causes = f.errors + f.parser_errors
        raise ConfigError(f"{parsed.path}: invalid config\n" + "\n".join(causes))
    if f.parser_errors:
        raise ConfigError(f"{parsed.path}: invalid [parsers] config\n" + "\n".join(f.parser_errors))
    return cfg, f.warnings


def size_warning(cfg: GrooveConfig) -> str | None:
    """R2.29: one warning when any size cap is above its 50 MiB default, else None."""
    raised = [key for key in SIZE_KEYS if getattr(cfg.index, key) > MIB50]
    if not raised:
        return None
    keys = ", ".join(f"[index].{key}" for key in raised)
    return (
        f"{keys} raised above the 50 MiB default: each file is held in memory whole while it is parsed, "
        "an allocation failure can end the process instead of skipping the file, PDF extraction still "
        'stops after 120 s, and with "unlimited" memory use is bounded only by the files in the KB'
    )

"""Value rules of SPEC §1.3 (R1.13-R1.27), R2.11 and R2.29, through load_config."""

from __future__ import annotations

import pytest

from grooveseek.config import load_config, parse_bind
from grooveseek.config.model import MIB50
from tests.unit.config_kit import config_error as _error
from tests.unit.config_kit import env_for as _env
from tests.unit.config_kit import load_text as _load

XLS = (
    '[parsers].enabled contains "xls", which is not supported: a legacy .xls workbook is materialised '
    "whole while it is opened, so a small crafted file can exhaust memory. Convert the workbook to .xlsx "
    "(read as a stream) and keep the original: conversion carries cell text over but is not lossless "
    "(VBA macros need .xlsm)."
)


# --- R1.13 quality filter --------------------------------------------------------------------


@pytest.mark.parametrize(("given", "effective"), [(-0.5, 0.0), (1.7, 1.0), (0.42, 0.42)])
def test_threshold_is_clamped(tmp_path, given, effective):
    config = _load(tmp_path, f"[quality_filter]\nthreshold = {given}\n").config
    assert config.quality_filter.threshold == effective


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_threshold_non_finite_is_an_error(tmp_path, value):
    message = _error(tmp_path, f"[quality_filter]\nthreshold = {value}\n")
    assert f"[quality_filter].threshold must be a finite number, got {value}" in message


def test_effective_threshold_is_zero_when_disabled(tmp_path):
    config = _load(tmp_path, "[quality_filter]\nenabled = false\nthreshold = 0.8\n").config
    assert config.quality_filter.effective_threshold == 0.0


# --- R1.15 parsers ---------------------------------------------------------------------------


def test_parser_ids_are_lowercased(tmp_path):
    assert _load(tmp_path, '[parsers]\nenabled = ["MD", "Pdf"]\n').config.parsers.enabled == ("md", "pdf")


def test_empty_parser_list(tmp_path):
    message = _error(tmp_path, "[parsers]\nenabled = []\n")
    assert message == (
        f"{tmp_path / 'groove.toml'}: invalid [parsers] config\n"
        "[parsers].enabled must contain at least one id (got empty array). "
        'Remove the key entirely to use the default ["md"].'
    )


def test_duplicate_parser_id_after_lowercasing(tmp_path):
    message = _error(tmp_path, '[parsers]\nenabled = ["md", "MD"]\n')
    assert message.endswith('[parsers].enabled contains duplicate id "md"')
    assert "invalid [parsers] config" in message


def test_xls_is_refused_with_reason(tmp_path):
    message = _error(tmp_path, '[parsers]\nenabled = ["md", "XLS"]\n')
    assert message == f"{tmp_path / 'groove.toml'}: invalid [parsers] config\n{XLS}"


def test_parser_errors_join_other_errors_under_invalid_config(tmp_path):
    message = _error(tmp_path, "[parsers]\nenabled = []\n[watch]\ndebounce_ms = -1\n")
    assert message.startswith(f"{tmp_path / 'groove.toml'}: invalid config\n")
    assert "[watch].debounce_ms must be >= 0, got -1" in message
    assert "must contain at least one id" in message


# --- R1.16 code chunk size -------------------------------------------------------------------


def test_max_chunk_chars_below_30_is_refused(tmp_path):
    message = _error(tmp_path, "[parsers.code]\nmax_chunk_chars = 29\n")
    assert "[parsers.code].max_chunk_chars must be >= 30" in message


def test_max_chunk_chars_30_is_accepted(tmp_path):
    assert _load(tmp_path, "[parsers.code]\nmax_chunk_chars = 30\n").config.parsers.code.max_chunk_chars == 30


# --- R1.17 / R2.29 sizes ---------------------------------------------------------------------


def test_raising_a_size_cap_warns_once(tmp_path):
    loaded = _load(
        tmp_path, '[index]\nmax_binary_file_size = "300 MiB"\nmax_decompressed_size = "unlimited"\n'
    )
    big = [w for w in loaded.warnings if "above the 50 MiB default" in w]
    assert len(big) == 1
    assert "[index].max_binary_file_size" in big[0] and "[index].max_decompressed_size" in big[0]
    assert "held in memory whole" in big[0] and "120 s" in big[0]


def test_lowering_a_size_cap_does_not_warn(tmp_path):
    loaded = _load(tmp_path, '[index]\nmax_text_file_size = "1 MiB"\n')
    assert loaded.config.index.max_text_file_size == 1024**2
    assert loaded.warnings == ()


def test_default_size_does_not_warn(tmp_path):
    assert _load(tmp_path, f"[index]\nmax_text_file_size = {MIB50}\n").warnings == ()


# --- R1.18 watch -----------------------------------------------------------------------------


def test_debounce_negative_is_refused(tmp_path):
    assert "[watch].debounce_ms must be >= 0, got -5" in _error(tmp_path, "[watch]\ndebounce_ms = -5\n")


# --- R1.19 / R1.20 transport -----------------------------------------------------------------


def test_transport_defaults_to_stdio(tmp_path):
    assert _load(tmp_path, "[transport]\n").config.transport.kind == "stdio"


def test_http_section_without_kind_means_http(tmp_path):
    assert _load(tmp_path, '[transport.http]\nbind = "127.0.0.1:4000"\n').config.transport.kind == "http"


def test_explicit_kind_beats_http_section(tmp_path):
    text = '[transport]\nkind = "stdio"\n[transport.http]\nbind = "127.0.0.1:4000"\n'
    assert _load(tmp_path, text).config.transport.kind == "stdio"


def test_unknown_kind_is_refused(tmp_path):
    assert '[transport].kind must be "stdio" or "http", got "tcp"' in _error(
        tmp_path, '[transport]\nkind = "tcp"\n'
    )


@pytest.mark.parametrize("bind", ["127.0.0.1:3100", "0.0.0.0:80", "[::1]:3100", "[::]:0", "10.1.2.3:65535"])
def test_good_binds(tmp_path, bind):
    assert _load(tmp_path, f'[transport.http]\nbind = "{bind}"\n').config.transport.http.bind == bind


@pytest.mark.parametrize(
    "bind",
    ["localhost:3100", "127.0.0.1", "127.0.0.1:65536", "::1:3100", "127.0.0.1:abc", "[::1]", "1.2.3:80", ""],
)
def test_bad_binds(tmp_path, bind):
    message = _error(tmp_path, f'[transport.http]\nbind = "{bind}"\n')
    assert f"[transport.http].bind is not a valid socket address: {bind}" in message


def test_parse_bind_returns_address_and_port():
    address, port = parse_bind("[::1]:8080")
    assert address.is_loopback and port == 8080


def test_allowed_origins_need_a_scheme(tmp_path):
    message = _error(
        tmp_path, '[transport.http]\nallowed_origins = ["http://localhost:3100", "localhost:3100"]\n'
    )
    assert '[transport.http].allowed_origins entry "localhost:3100" has no scheme' in message
    assert 'http://localhost:3100" has no scheme' not in message


def test_empty_allowed_origins_is_kept(tmp_path):
    assert (
        _load(tmp_path, "[transport.http]\nallowed_origins = []\n").config.transport.http.allowed_origins
        == ()
    )


def test_max_sessions_negative_is_refused(tmp_path):
    assert "[transport.http].max_sessions must be >= 0" in _error(
        tmp_path, "[transport.http]\nmax_sessions = -1\n"
    )


# --- R1.21 eval ------------------------------------------------------------------------------


def test_k_values_are_deduplicated_and_sorted(tmp_path):
    assert _load(tmp_path, "[eval]\nk_values = [10, 1, 5, 1]\n").config.eval.k_values == (1, 5, 10)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k_values = []", "[eval].k_values must contain at least one integer >= 1"),
        ("k_values = [0, 5]", "[eval].k_values entry must be >= 1, got 0"),
        ("history_size = 0", "[eval].history_size must be >= 1, got 0"),
        ("regression_threshold = -0.1", "[eval].regression_threshold must be a finite number >= 0, got -0.1"),
        ("regression_threshold = nan", "[eval].regression_threshold must be a finite number >= 0, got nan"),
    ],
)
def test_eval_rules(tmp_path, text, expected):
    assert expected in _error(tmp_path, f"[eval]\n{text}\n")


def test_golden_resolves_against_config_dir(tmp_path):
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "groove.toml").write_text('[eval]\ngolden = "gold/q.yml"\n', encoding="utf-8")
    loaded = load_config(str(sub / "groove.toml"), cwd=tmp_path, env=_env(tmp_path))
    assert loaded.config.eval.golden == str(sub / "gold" / "q.yml")


# --- R1.22 - R1.25 search --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1.0", "nan", "inf"])
def test_min_confidence_ratio(tmp_path, value):
    assert "[search].min_confidence_ratio must be a finite number >= 0" in _error(
        tmp_path, f"[search]\nmin_confidence_ratio = {value}\n"
    )


def test_min_confidence_ratio_zero_is_allowed(tmp_path):
    assert _load(tmp_path, "[search]\nmin_confidence_ratio = 0\n").config.search.min_confidence_ratio == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lambda = 1.5", "[search.mmr].lambda must be in 0.0..=1.0, got 1.5"),
        ("lambda = -0.1", "[search.mmr].lambda must be in 0.0..=1.0, got -0.1"),
        ("lambda = nan", "[search.mmr].lambda must be in 0.0..=1.0, got nan"),
        ("same_doc_penalty = 2.0", "[search.mmr].same_doc_penalty must be in 0.0..=1.0, got 2.0"),
    ],
)
def test_mmr_ranges_verbatim(tmp_path, text, expected):
    assert expected in _error(tmp_path, f"[search.mmr]\n{text}\n")


def test_mmr_bounds_are_inclusive(tmp_path):
    mmr = _load(tmp_path, "[search.mmr]\nlambda = 0.0\nsame_doc_penalty = 1.0\n").config.search.mmr
    assert (mmr.lambda_, mmr.same_doc_penalty) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rrf_k = 0.5", "[search.fusion].rrf_k must be a finite number in 1.0..=1000000.0, got 0.5"),
        ("rrf_k = 1e7", "[search.fusion].rrf_k must be a finite number"),
        ("rrf_k = inf", "[search.fusion].rrf_k must be a finite number"),
        ("bm25_heading_weight = -1.0", "[search.fusion].bm25_heading_weight must be a finite number"),
        ("bm25_content_weight = 2e6", "[search.fusion].bm25_content_weight must be a finite number"),
        ("bm25_context_weight = nan", "[search.fusion].bm25_context_weight must be a finite number"),
        (
            "bm25_heading_weight = 0\nbm25_context_weight = 0\nbm25_content_weight = 0",
            "bm25_heading_weight, bm25_context_weight and bm25_content_weight are all 0",
        ),
    ],
)
def test_fusion_rules(tmp_path, text, expected):
    assert expected in _error(tmp_path, f"[search.fusion]\n{text}\n")


def test_fusion_edges_are_accepted(tmp_path):
    text = "[search.fusion]\nrrf_k = 1\nbm25_heading_weight = 0\nbm25_context_weight = 1e6\n"
    assert _load(tmp_path, text).config.search.fusion.rrf_k == 1.0


def test_parent_retriever_order_verbatim(tmp_path):
    text = "[search.parent_retriever]\nwhole_doc_threshold_tokens = 500\nmax_expanded_tokens = 500\n"
    assert (
        "[search.parent_retriever].max_expanded_tokens (500) must be > whole_doc_threshold_tokens (500)"
        in _error(tmp_path, text)
    )


def test_parent_retriever_cap_verbatim(tmp_path):
    text = "[search.parent_retriever]\nmax_expanded_tokens = 8193\n"
    assert (
        "[search.parent_retriever].max_expanded_tokens must be <= 8192 (BGE-M3 context window), got 8193"
        in _error(tmp_path, text)
    )


def test_parent_retriever_8192_is_accepted(tmp_path):
    text = "[search.parent_retriever]\nmax_expanded_tokens = 8192\n"
    assert _load(tmp_path, text).config.search.parent_retriever.max_expanded_tokens == 8192


# --- R1.27 embedding -------------------------------------------------------------------------

OPENAI = '[embedding]\nprovider = "openai-compatible"\nendpoint = "http://localhost:11434/v1/embeddings"\n'


def test_openai_compatible_complete(tmp_path):
    emb = _load(tmp_path, OPENAI + 'model = "nomic"\ndimension = 768\n').config.embedding
    assert (emb.provider, emb.model, emb.dimension) == ("openai-compatible", "nomic", 768)


def test_openai_pair_of_models(tmp_path):
    emb = _load(
        tmp_path, OPENAI + 'query_model = "q"\ndocument_model = "d"\ndimension = 8\n'
    ).config.embedding
    assert (emb.query_model, emb.document_model) == ("q", "d")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[embedding]\nprovider = "openai-compatible"\nmodel = "m"\ndimension = 8\n',
            "[embedding].endpoint is required",
        ),
        (OPENAI + 'model = "m"\n', "[embedding].dimension is required"),
        (
            OPENAI + 'query_model = "q"\ndimension = 8\n',
            "query_model and document_model must be set together",
        ),
        (
            OPENAI + 'document_model = "d"\ndimension = 8\n',
            "query_model and document_model must be set together",
        ),
        (
            OPENAI + 'model = "m"\nquery_model = "q"\ndocument_model = "d"\ndimension = 8\n',
            "[embedding].model cannot be combined with query_model / document_model",
        ),
        (OPENAI + "dimension = 8\n", "[embedding].model (or query_model and document_model) is required"),
        (
            OPENAI + 'model = "m"\ndimension = 0\n',
            "[embedding].dimension must be in 1..=8192 (the most sqlite-vec stores per vector), got 0",
        ),
        (
            OPENAI + 'model = "m"\ndimension = 8\nmax_input_chars = 0\n',
            "[embedding].max_input_chars must be >= 1",
        ),
        (
            OPENAI + 'model = "m"\ndimension = 8\ntimeout_seconds = 0\n',
            "[embedding].timeout_seconds must be >= 1",
        ),
        (
            OPENAI + 'model = "m"\ndimension = 8\nmax_retries = 11\n',
            "[embedding].max_retries must be in 0..=10",
        ),
        (
            OPENAI + 'model = "m"\ndimension = 8\nmax_retries = -1\n',
            "[embedding].max_retries must be in 0..=10",
        ),
        (
            '[embedding]\nprovider = "openai"\n',
            '[embedding].provider must be "fastembed" or "openai-compatible"',
        ),
    ],
)
def test_embedding_rules(tmp_path, text, expected):
    assert expected in _error(tmp_path, text)


@pytest.mark.parametrize("url", ["ftp://host/v1/embeddings", "localhost:11434/v1/embeddings", "http:///v1"])
def test_endpoint_must_be_http_or_https(tmp_path, url):
    text = f'[embedding]\nprovider = "openai-compatible"\nendpoint = "{url}"\nmodel = "m"\ndimension = 8\n'
    assert "[embedding].endpoint must be an http:// or https:// URL" in _error(tmp_path, text)


@pytest.mark.parametrize("dimension", [0, 8193, 4_000_000_000])
def test_dimension_outside_what_sqlite_vec_stores_is_refused(tmp_path, dimension):
    """Issue 21: 4000000000 passed validation and ended in an apsw.SQLError traceback."""
    text = (
        '[embedding]\nprovider = "openai-compatible"\nendpoint = "http://h/v1/embeddings"\nmodel = "m"\n'
        f"dimension = {dimension}\n"
    )
    assert (
        f"[embedding].dimension must be in 1..=8192 (the most sqlite-vec stores per vector), got {dimension}"
        in (_error(tmp_path, text))
    )


def test_dimension_8192_is_accepted(tmp_path):
    text = (
        '[embedding]\nprovider = "openai-compatible"\nendpoint = "http://h/v1/e"\nmodel = "m"\n'
        "dimension = 8192\n"
    )
    assert _load(tmp_path, text).config.embedding.dimension == 8192


@pytest.mark.parametrize("section", ["embedding", "reranker"])
@pytest.mark.parametrize(
    "bad", ["\\r\\n", "\\n", "\\t", " ", "\\u007f"], ids=["crlf", "lf", "tab", "space", "del"]
)
def test_endpoint_with_a_line_break_or_space_is_refused_without_echo(tmp_path, section, bad):
    """Issue 21: urlsplit drops CR, LF and tab, so such a URL passed and failed later in the client."""
    extra = 'provider = "openai-compatible"\nmodel = "m"\ndimension = 8\n' if section == "embedding" else ""
    text = f'[{section}]\n{extra}endpoint = "http://h/v1/x{bad}X-Injected: SECRET"\n'
    message = _error(tmp_path, text)
    assert f"[{section}].endpoint contains a space or a control character" in message
    assert "SECRET" not in message


def test_endpoint_with_credentials_is_refused_without_echo(tmp_path):
    text = (
        '[embedding]\nprovider = "openai-compatible"\nendpoint = "https://bob:s3cret@host/v1/embeddings"\n'
        'model = "m"\ndimension = 8\n'
    )
    message = _error(tmp_path, text)
    assert "[embedding].endpoint must not carry credentials" in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    "line",
    [
        'endpoint = "http://h/v1/embeddings"',
        'query_model = "q"',
        'document_model = "d"',
        "dimension = 8",
        "request_dimensions = false",
        'api_key = "k"',
        "timeout_seconds = 60",
        "max_input_chars = 8000",
        "max_retries = 3",
    ],
)
def test_fastembed_refuses_endpoint_keys(tmp_path, line):
    key = line.split(" ")[0]
    message = _error(tmp_path, f"[embedding]\n{line}\n")
    assert f'[embedding].{key} is only used with provider = "openai-compatible"' in message


def test_api_key_is_not_echoed_when_refused(tmp_path):
    message = _error(tmp_path, '[embedding]\napi_key = "sk-very-secret"\n')
    assert "sk-very-secret" not in message


def test_fastembed_embedding_model_alone_is_fine(tmp_path):
    assert _load(tmp_path, '[embedding]\nmodel = "bge-m3"\n').config.embedding.model == "bge-m3"


def test_top_level_model_with_openai_is_refused(tmp_path):
    message = _error(tmp_path, 'model = "bge-m3"\n' + OPENAI + 'model = "m"\ndimension = 8\n')
    assert 'the top-level model cannot be used with [embedding].provider = "openai-compatible"' in message


def test_both_models_under_fastembed_are_refused(tmp_path):
    message = _error(tmp_path, 'model = "bge-m3"\n[embedding]\nmodel = "bge-m3"\n')
    assert "[embedding].model and the top-level model both name the FastEmbed model" in message


# --- R1.3 paths, R2.11 exclude_dirs ----------------------------------------------------------


def test_relative_paths_resolve_against_config_dir(tmp_path):
    conf = tmp_path / "etc"
    conf.mkdir()
    (conf / "groove.toml").write_text('kb_path = "../kb"\nfastembed_cache_dir = "cache"\n', encoding="utf-8")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    config = load_config(str(conf / "groove.toml"), cwd=elsewhere, env=_env(tmp_path)).config
    assert config.kb_path == str(tmp_path / "kb")
    assert config.fastembed_cache_dir == str(conf / "cache")


def test_tilde_in_kb_path_expands_to_home(tmp_path):
    config = _load(tmp_path, 'kb_path = "~/notes"\n').config
    assert config.kb_path == str(tmp_path / "home" / "notes")


def test_absolute_kb_path_is_kept(tmp_path):
    assert _load(tmp_path, f'kb_path = "{tmp_path / "x"}"\n').config.kb_path == str(tmp_path / "x")


def test_empty_kb_path_is_refused(tmp_path):
    assert "kb_path must not be empty" in _error(tmp_path, 'kb_path = ""\n')


def test_exclude_dirs_with_separator_warns(tmp_path):
    loaded = _load(tmp_path, 'exclude_dirs = ["build", "docs/drafts", "a\\\\b"]\n')
    assert loaded.config.exclude_dirs == ("build", "docs/drafts", "a\\b")
    tail = "contains a path separator and never matches; use .grooveignore for paths"
    assert list(loaded.warnings) == [
        f'exclude_dirs entry "docs/drafts" {tail}',
        f'exclude_dirs entry "a\\b" {tail}',
    ]


def test_exclude_dirs_replaces_default(tmp_path):
    assert _load(tmp_path, "exclude_dirs = []\n").config.exclude_dirs == ()

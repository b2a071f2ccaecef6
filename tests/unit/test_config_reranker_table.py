"""The ``[reranker]`` endpoint table: shape, value rules, selection and trust (docs/configuration.md)."""

from __future__ import annotations

from pathlib import Path

from grooveseek.config import load_config, plugin_selection
from grooveseek.config.model import ENDPOINT_RERANKER_ID, RerankerEndpointConfig

from .config_kit import config_error, env_for, load_text

TABLE = '[reranker]\nendpoint = "http://127.0.0.1:8080/v1/rerank"\n'


def test_a_table_selects_the_endpoint_reranker(tmp_path):
    config = load_text(tmp_path, TABLE + 'model = "bge-reranker-v2-m3"\nrequest_format = "texts"\n').config
    assert config.reranker == ENDPOINT_RERANKER_ID
    assert config.reranker_endpoint == RerankerEndpointConfig(
        endpoint="http://127.0.0.1:8080/v1/rerank", model="bge-reranker-v2-m3", request_format="texts"
    )
    assert plugin_selection(config).reranker == ENDPOINT_RERANKER_ID
    assert plugin_selection(config, reranker="none").reranker is None


def test_a_string_reranker_has_no_table(tmp_path):
    config = load_text(tmp_path, 'reranker = "bge-base"\n').config
    assert (config.reranker, config.reranker_endpoint) == ("bge-base", None)


def test_table_errors_name_the_key_under_reranker(tmp_path):
    message = config_error(tmp_path, TABLE + 'timeout_seconds = "soon"\nextra = 1\n')
    assert "[reranker].timeout_seconds: expected an integer" in message
    assert 'unknown key "reranker.extra"' in message


def test_table_value_rules(tmp_path):
    text = '[reranker]\nmodel = ""\nrequest_format = "cohere"\nbatch_size = 0\nmax_retries = 11\n'
    message = config_error(tmp_path, text)
    for part in (
        "[reranker].endpoint is required",
        "[reranker].model is empty",
        '[reranker].request_format must be "documents"',
        "[reranker].batch_size must be in 1..=1000, got 0",
        "[reranker].max_retries must be in 0..=10, got 11",
    ):
        assert part in message


def test_table_endpoint_with_credentials_is_refused_without_echo(tmp_path):
    message = config_error(tmp_path, '[reranker]\nendpoint = "https://bob:s3cret@h/v1/rerank"\n')
    assert "[reranker].endpoint must not carry credentials" in message and "s3cret" not in message


def test_the_internal_field_is_not_a_key(tmp_path):
    assert 'unknown key "reranker_endpoint"' in config_error(tmp_path, 'reranker_endpoint = "x"\n')


def test_the_api_key_is_never_in_a_repr(tmp_path):
    config = load_text(tmp_path, TABLE + 'api_key = "sk-hidden"\n').config
    assert "sk-hidden" not in repr(config)


def test_an_untrusted_table_is_dropped_with_a_warning(tmp_path: Path):
    (tmp_path / "groove.toml").write_text(TABLE, encoding="utf-8")
    loaded = load_config(cwd=tmp_path, env=env_for(tmp_path))
    assert loaded.trusted is False
    assert (loaded.config.reranker, loaded.config.reranker_endpoint) == ("none", None)
    (warning,) = loaded.warnings
    assert "[reranker] is ignored and reranking stays off" in warning
    assert "would send queries and passages to http://127.0.0.1:8080/v1/rerank" in warning
    assert "--config" in warning

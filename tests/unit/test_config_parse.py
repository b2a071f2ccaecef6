"""Shape checks of groove.toml: closed tables (R1.1), strict types (R1.2), load failures (R1.4),
and the size grammar (R2.25)."""

from __future__ import annotations

import pytest

from grooveseek.config import UNLIMITED, GrooveConfig, load_config, parse_size
from grooveseek.errors import ConfigError
from tests.unit.config_kit import config_error as _error
from tests.unit.config_kit import env_for as _env
from tests.unit.config_kit import load_text as _load


def test_empty_file_is_the_default_config(tmp_path):
    loaded = _load(tmp_path, "")
    assert loaded.config == GrooveConfig()
    assert loaded.warnings == ()


def test_unknown_top_level_key_names_key_and_file(tmp_path):
    message = _error(tmp_path, 'modle = "bge-m3"\n')
    path = tmp_path / "groove.toml"
    assert message.startswith(f"{path}: invalid config\n")
    assert f'unknown key "modle" @ {path}' in message
    assert "model" in message  # the allowed keys are listed so the typo is easy to spot


def test_unknown_nested_key_names_key_path(tmp_path):
    message = _error(tmp_path, "[parsers]\nenabeld = ['md']\n")
    assert f'unknown key "parsers.enabeld" @ {tmp_path / "groove.toml"}' in message
    assert "keys allowed in [parsers]: code, enabled" in message


def test_unknown_deeply_nested_key(tmp_path):
    message = _error(tmp_path, "[search.mmr]\nlamda = 0.5\n")
    assert 'unknown key "search.mmr.lamda"' in message


def test_unknown_section(tmp_path):
    message = _error(tmp_path, "[parser]\nenabled = ['md']\n")
    assert 'unknown key "parser"' in message


def test_python_attribute_name_is_not_a_toml_key(tmp_path):
    # The TOML key is "lambda"; the attribute "lambda_" must not leak into the file format.
    message = _error(tmp_path, "[search.mmr]\nlambda_ = 0.5\n")
    assert 'unknown key "search.mmr.lambda_"' in message


def test_lambda_key_is_read(tmp_path):
    assert _load(tmp_path, "[search.mmr]\nlambda = 0.25\n").config.search.mmr.lambda_ == 0.25


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kb_path = 3\n", "kb_path: expected a string, got integer 3"),
        ("model = 3\n", "model: expected a string, got integer 3"),
        (
            '[parsers.code]\nmax_chunk_chars = "3500"\n',
            '[parsers.code].max_chunk_chars: expected an integer, got string "3500"',
        ),
        (
            "[embedding]\nprovider = 'openai-compatible'\nendpoint = 'http://h/v1/embeddings'\nmodel = 'm'\n"
            "dimension = true\n",
            "[embedding].dimension: expected an integer, got boolean true",
        ),
        ('[watch]\nenabled = "true"\n', '[watch].enabled: expected true or false, got string "true"'),
        ("[watch]\nenabled = 1\n", "[watch].enabled: expected true or false, got integer 1"),
        (
            "[quality_filter]\nthreshold = true\n",
            "[quality_filter].threshold: expected a number, got boolean true",
        ),
        (
            '[quality_filter]\nthreshold = "0.3"\n',
            '[quality_filter].threshold: expected a number, got string "0.3"',
        ),
        ("[watch]\ndebounce_ms = 1.5\n", "[watch].debounce_ms: expected an integer, got float 1.5"),
        ('[parsers]\nenabled = "md"\n', '[parsers].enabled: expected an array of strings, got string "md"'),
        ("[eval]\nk_values = [1, '5']\n", '[eval].k_values[1]: expected an integer, got string "5"'),
        ("parsers = 3\n", "parsers: expected a table, got integer 3"),
        ("exclude_dirs = [1]\n", "exclude_dirs[0]: expected a string, got integer 1"),
        (
            '[transport.http]\nallowed_origins = "http://x"\n',
            '[transport.http].allowed_origins: expected an array of strings, got string "http://x"',
        ),
        ('[eval]\ngolden = ["a"]\n', "[eval].golden: expected a string, got an array"),
        ("[embedding]\ndimension = 1.0\n", "[embedding].dimension: expected an integer, got float 1.0"),
    ],
)
def test_strict_types(tmp_path, text, expected):
    assert expected in _error(tmp_path, text)


def test_int_is_accepted_for_float_keys(tmp_path):
    config = _load(tmp_path, "[search.fusion]\nrrf_k = 60\n[quality_filter]\nthreshold = 1\n").config
    assert config.search.fusion.rrf_k == 60.0 and isinstance(config.search.fusion.rrf_k, float)
    assert config.quality_filter.threshold == 1.0


def test_every_problem_is_reported(tmp_path):
    message = _error(tmp_path, "kb_path = 3\nmodle = 1\n[watch]\npoll = 'no'\n")
    assert "kb_path: expected a string" in message
    assert 'unknown key "modle"' in message
    assert "[watch].poll: expected true or false" in message


def test_api_key_value_is_never_echoed(tmp_path):
    message = _error(tmp_path, "[embedding]\napi_key = 123456789\n")
    assert "[embedding].api_key: expected a string" in message
    assert "123456789" not in message


def test_toml_syntax_error_names_file(tmp_path):
    message = _error(tmp_path, "model = \n")
    assert message.startswith(f"failed to parse config: {tmp_path / 'groove.toml'}\n")
    assert "line 1" in message


def test_invalid_utf8_is_a_parse_error(tmp_path):
    path = tmp_path / "groove.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="failed to parse config"):
        load_config(str(path), cwd=tmp_path, env=_env(tmp_path))


# --- sizes -----------------------------------------------------------------------------------

KEY = "[index].max_binary_file_size"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        (52428800, 52428800),
        ("300 MiB", 300 * 1024**2),
        ("300MiB", 300 * 1024**2),
        ("1kb", 1000),
        ("1KiB", 1024),
        ("10 GB", 10 * 1000**3),
        ("2 tib", 2 * 1024**4),
        ("7 b", 7),
        ("unlimited", UNLIMITED),
        ("UNLIMITED", UNLIMITED),
    ],
)
def test_parse_size_good(value, expected):
    assert parse_size(value, KEY) == expected


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0, "0"),
        (-1, "-1"),
        ("1.5 MB", '"1.5 MB"'),
        ("12 parsecs", '"12 parsecs"'),
        (True, "true"),
        (1.5, "1.5"),
        ("0 MB", '"0 MB"'),
        ("300", '"300"'),
        ("", '""'),
        ("lots", '"lots"'),
        (" 1 MB", '" 1 MB"'),
        ("99999999999 TiB", '"99999999999 TiB"'),
        ("9" * 5000 + " B", '"' + "9" * 5000 + ' B"'),
        ([1], "an array"),
    ],
)
def test_parse_size_bad(value, shown):
    with pytest.raises(ConfigError) as info:
        parse_size(value, KEY)
    assert str(info.value) == (
        f'{KEY}: {shown} is not a size; write a byte count of at least 1, a size such as "300 MiB", '
        'or "unlimited"'
    )


def test_size_zero_in_file_uses_verbatim_message(tmp_path):
    message = _error(tmp_path, "[index]\nmax_binary_file_size = 0\n")
    assert (
        "[index].max_binary_file_size: 0 is not a size; write a byte count of at least 1, a size such as "
        '"300 MiB", or "unlimited"'
    ) in message


def test_sizes_in_file_are_bytes(tmp_path):
    config = _load(tmp_path, '[index]\nmax_text_file_size = "1 MiB"\nmax_binary_file_size = 1000\n').config
    assert config.index.max_text_file_size == 1024**2
    assert config.index.max_binary_file_size == 1000

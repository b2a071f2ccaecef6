"""Where the index file is (issue 8): ``--index-path`` > ``[index].path`` > ``.groove.db`` beside the
KB, and every refusal names the flag or key, the problem and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from grooveseek.config import DB_NAME, GrooveConfig, IndexConfig, LoadedConfig, resolve_index_path
from grooveseek.errors import ConfigError
from tests.unit.config_kit import config_error


def _loaded(path: str | None = None, source: Path | None = None) -> LoadedConfig:
    return LoadedConfig(GrooveConfig(index=IndexConfig(path=path)), "explicit", source, True)


def test_default_is_beside_the_folder(tmp_path: Path):
    kb = tmp_path / "notes"
    assert resolve_index_path(_loaded(), None, kb) == tmp_path / DB_NAME


def test_the_flag_beats_the_key_and_is_relative_to_the_working_directory(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    got = resolve_index_path(_loaded(str(tmp_path / "key.db")), "sub/flag.db", tmp_path / "kb", cwd=tmp_path)
    assert got == tmp_path.resolve() / "sub" / "flag.db"
    assert resolve_index_path(_loaded(str(tmp_path / "key.db")), None, tmp_path / "kb") == tmp_path / "key.db"


def test_empty_flag_directory_and_missing_folder_are_refused_with_the_fix(tmp_path: Path):
    with pytest.raises(ConfigError, match="--index-path is empty; name the index file"):
        resolve_index_path(_loaded(), "", tmp_path / "kb")
    with pytest.raises(
        ConfigError, match=r"--index-path names a directory, not an index file: .*\.groove\.db"
    ):
        resolve_index_path(_loaded(), str(tmp_path), tmp_path / "kb")
    source = tmp_path / "groove.toml"
    with pytest.raises(ConfigError) as missing:
        resolve_index_path(_loaded(str(tmp_path / "nope" / "x.db"), source), None, tmp_path / "kb")
    assert f"[index].path in {source}" in str(missing.value) and "does not exist" in str(missing.value)


def test_an_empty_key_is_a_config_error(tmp_path: Path):
    assert "[index].path must not be empty" in config_error(tmp_path, '[index]\npath = ""\n')

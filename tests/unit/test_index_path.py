"""Where the index file is (issues 8, 24): ``--index-path`` > ``[index].path`` > the KB's own index
under the data home (or an old ``.groove.db`` beside the KB that belongs to it), and every refusal
names the flag or key, the problem and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from grooveseek.config import DB_NAME, GrooveConfig, IndexConfig, LoadedConfig, resolve_index_path
from grooveseek.config.location import data_home, legacy_index_path, own_index_path
from grooveseek.errors import ConfigError
from grooveseek.index.guard import record_folder
from grooveseek.store.store import Store
from tests.unit.config_kit import config_error


def _loaded(path: str | None = None, source: Path | None = None) -> LoadedConfig:
    return LoadedConfig(GrooveConfig(index=IndexConfig(path=path)), "explicit", source, True)


def test_two_folders_in_one_parent_get_two_indexes_outside_both(tmp_path: Path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("GROOVE_DATA_HOME", str(data))
    notes, work = tmp_path / "notes", tmp_path / "work"
    first, second = (resolve_index_path(_loaded(), None, kb) for kb in (notes, work))
    assert first != second
    assert first.parent == second.parent == data / "indexes"
    assert first.name.startswith("notes-") and second.name.startswith("work-")
    # the same name in another parent is another index too
    assert resolve_index_path(_loaded(), None, tmp_path / "x" / "notes") != first


def test_the_data_home_follows_the_override_then_xdg_then_home(tmp_path: Path):
    home = tmp_path / "h"
    assert data_home({"GROOVE_DATA_HOME": str(tmp_path / "g")}, home) == tmp_path / "g"
    assert data_home({"XDG_DATA_HOME": str(tmp_path / "x")}, home) == tmp_path / "x" / "groove"
    # relative values are invalid (XDG) and ignored
    relative = {"GROOVE_DATA_HOME": "rel", "XDG_DATA_HOME": "rel"}
    assert data_home(relative, home) == home / ".local" / "share" / "groove"


def test_an_old_index_beside_the_folder_is_kept_while_it_belongs_to_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GROOVE_DATA_HOME", str(tmp_path / "data"))
    notes, work = tmp_path / "notes", tmp_path / "work"
    notes.mkdir()
    work.mkdir()
    old = legacy_index_path(notes)
    assert old == tmp_path / DB_NAME
    store = Store.open(old)
    try:
        record_folder(store, notes)
    finally:
        store.close()
    assert resolve_index_path(_loaded(), None, notes) == old
    # the sibling folder is not refused: it gets its own index
    assert resolve_index_path(_loaded(), None, work) == own_index_path(work)
    # once the folder has its own index, that one wins
    own = own_index_path(notes)
    own.parent.mkdir(parents=True)
    own.touch()
    assert resolve_index_path(_loaded(), None, notes) == own


def test_an_unreadable_file_beside_the_folder_is_not_adopted(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GROOVE_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "notes").mkdir()
    (tmp_path / DB_NAME).write_bytes(b"not an index")
    assert resolve_index_path(_loaded(), None, tmp_path / "notes") == own_index_path(tmp_path / "notes")


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

"""Opening and replacing the index file (SPEC R4.7, R4.32, R4.33) with real SQLite.

A refused file must keep every byte; a directory where the index should be is never deleted; and every
refusal is a StoreError naming the file and the way out, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import apsw
import pytest

from grooveseek.errors import StoreError
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.store.store import SCHEMA_VERSION, Store, remove_index_files
from tests.conftest import IndexedKB


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _journal_mode(path: Path) -> str:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("pragma journal_mode").fetchall()[0][0]
    finally:
        conn.close()


def _foreign_rollback_db(path: Path) -> None:
    """An SQLite file in the default rollback-journal mode that GrooveSeek did not write."""
    conn = apsw.Connection(str(path))
    conn.execute(
        "create table index_meta(key text primary key, value text);"
        "insert into index_meta values ('producer', 'kb-mcp');"
        "create table notes(id integer primary key, body text);"
        "insert into notes(body) values ('keep me');"
    ).fetchall()
    conn.close()


def _sidecars(path: Path) -> list[Path]:
    return [p for p in (Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")) if p.exists()]


# -- R4.7 / R4.32: a refused file is never touched --------------------------------------------------


@pytest.mark.parametrize("create", [True, False])
def test_foreign_rollback_database_is_refused_with_its_bytes_and_journal_mode_unchanged(tmp_path, create):
    db = tmp_path / ".groove.db"
    _foreign_rollback_db(db)
    before = _digest(db)
    assert _journal_mode(db) == "delete"
    with pytest.raises(StoreError) as err:
        Store.open(db, create=create)
    message = str(err.value)
    assert str(db) in message and "'kb-mcp'" in message and "groove index --force" in message
    assert _digest(db) == before
    assert _journal_mode(db) == "delete"
    assert _sidecars(db) == []


def test_database_without_a_producer_is_refused_untouched(tmp_path):
    db = tmp_path / ".groove.db"
    conn = apsw.Connection(str(db))
    conn.execute("create table documents(id integer primary key, path text)").fetchall()
    conn.close()
    before = _digest(db)
    with pytest.raises(StoreError, match="not written by GrooveSeek"):
        Store.open(db)
    assert _digest(db) == before and _journal_mode(db) == "delete"


def test_newer_schema_is_refused_without_migrating(tmp_path):
    db = tmp_path / ".groove.db"
    Store.open(db).close()
    conn = apsw.Connection(str(db))
    conn.execute(f"pragma user_version={SCHEMA_VERSION + 1}").fetchall()
    conn.close()
    before = _digest(db)
    with pytest.raises(StoreError, match=r"newer GrooveSeek"):
        Store.open(db)
    assert _digest(db) == before


def test_corrupt_file_is_refused_untouched(tmp_path):
    db = tmp_path / ".groove.db"
    db.write_bytes(b"not a database " * 500)
    before = _digest(db)
    with pytest.raises(StoreError) as err:
        Store.open(db)
    assert str(db) in str(err.value) and "groove index --force" in str(err.value)
    assert _digest(db) == before and _sidecars(db) == []


def test_our_own_file_is_still_opened_in_wal_and_an_empty_file_is_initialised(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    store = Store.open(empty)
    assert store.meta("producer") == "grooveseek-python"
    assert store.conn.execute("pragma journal_mode").fetchall()[0][0] == "wal"
    store.close()
    reopened = Store.open(empty, create=False)
    assert reopened.conn.execute("pragma user_version").fetchall()[0][0] == SCHEMA_VERSION
    reopened.close()


def test_missing_file_without_create_is_a_store_error_not_a_new_file(tmp_path):
    db = tmp_path / ".groove.db"
    with pytest.raises(StoreError, match="groove index"):
        Store.open(db, create=False)
    assert not db.exists()


# -- a directory where the index should be ------------------------------------------------------------


@pytest.mark.parametrize("create", [True, False])
def test_directory_in_place_of_the_index_is_refused_with_the_manual_remedy(tmp_path, create):
    db = tmp_path / ".groove.db"
    db.mkdir()
    with pytest.raises(StoreError) as err:
        Store.open(db, create=create)
    message = str(err.value)
    assert str(db) in message and "is a directory" in message and "Remove or rename it yourself" in message
    assert "unable to open database file" not in message


def test_remove_index_files_refuses_a_directory_and_deletes_nothing(tmp_path):
    db = tmp_path / ".groove.db"
    db.mkdir()
    (db / "precious.txt").write_text("mine", encoding="utf-8")
    Path(f"{db}-shm").write_bytes(b"x")
    with pytest.raises(StoreError) as err:
        remove_index_files(db)
    message = str(err.value)
    assert str(db) in message and "is a directory" in message and "never deletes directories" in message
    assert (db / "precious.txt").read_text(encoding="utf-8") == "mine"
    assert Path(f"{db}-shm").exists()  # checked before anything was removed


def test_remove_index_files_refuses_a_sidecar_directory_before_removing_the_file(tmp_path):
    db = tmp_path / ".groove.db"
    db.write_bytes(b"junk")
    Path(f"{db}-wal").mkdir()
    with pytest.raises(StoreError, match=r"\.groove\.db-wal: is a directory"):
        remove_index_files(db)
    assert db.read_bytes() == b"junk"


def test_remove_index_files_removes_the_file_and_its_sidecars(tmp_path):
    db = tmp_path / ".groove.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").write_bytes(b"x")
    remove_index_files(db)
    assert not any(Path(f"{db}{suffix}").exists() for suffix in ("", "-wal", "-shm"))
    remove_index_files(db)  # nothing left: still fine


def test_forced_open_of_a_directory_is_a_store_error(tmp_path):
    db = tmp_path / ".groove.db"
    db.mkdir()
    with pytest.raises(StoreError, match="is a directory"):
        open_for_index(db, force=True)
    assert db.is_dir()


def test_forced_open_replaces_a_foreign_file(tmp_path):
    db = tmp_path / ".groove.db"
    _foreign_rollback_db(db)
    store = open_for_index(db, force=True)
    try:
        assert store.meta("producer") == "grooveseek-python"
        assert store.conn.execute("select name from sqlite_schema where name='notes'").fetchall() == []
    finally:
        store.close()


def test_status_on_a_directory_names_it_and_the_remedy_without_a_traceback(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\n', encoding="utf-8")
    db = db_path_for(kb.resolve())  # the KB's own index place
    db.mkdir(parents=True)
    result = IndexedKB(root=tmp_path, kb=kb, config=config).run("status")
    assert result.exit_code == 1
    assert f"Error: {db}: is a directory" in result.stderr and "Remove or rename it yourself" in result.stderr
    assert "Traceback" not in result.output


def test_status_on_a_foreign_file_leaves_it_unchanged(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\n', encoding="utf-8")
    db = db_path_for(kb.resolve())
    db.parent.mkdir(parents=True, exist_ok=True)
    _foreign_rollback_db(db)
    before = _digest(db)
    result = IndexedKB(root=tmp_path, kb=kb, config=config).run("status")
    assert result.exit_code == 1 and "groove index --force" in result.stderr
    assert _digest(db) == before and _journal_mode(db) == "delete"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_in_the_index_place_is_refused_without_blocking(tmp_path):
    """SQLite would block forever opening a FIFO; the refusal must come first (found by QA)."""
    import threading

    db = tmp_path / ".groove.db"
    os.mkfifo(db)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            Store.open(db, create=False)
            outcome.append(None)
        except BaseException as exc:  # recorded for the assertion below
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "opening a FIFO as the index blocked"
    assert isinstance(outcome[0], StoreError) and "is not a regular file" in str(outcome[0])


def test_an_index_sqlite_can_only_open_read_only_is_refused_for_writing(tmp_path):
    """A write-protected index fails with a message naming the file and the fix, not apsw's
    ReadOnlyError mid-run. (Simulated with a read-only connection: tests may run as root.)"""
    db = tmp_path / ".groove.db"
    Store.open(db).close()
    store = Store(apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY), db)
    try:
        with pytest.raises(StoreError, match=r"the index file is read-only, so it cannot be updated"):
            store.require_writable()
    finally:
        store.close()
    writable = Store.open(db)
    try:
        writable.require_writable()  # an ordinary index passes
    finally:
        writable.close()

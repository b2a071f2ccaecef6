"""The SQLite store itself (real apsw and sqlite-vec): schema, producer, WAL, refusing foreign files, and
its own tables. What every backend must do is the contract in test_store_contract.py."""

from __future__ import annotations

import apsw
import numpy as np
import pytest

from grooveseek.errors import StoreError
from grooveseek.store.store import SCHEMA_VERSION, Store
from grooveseek.types import SearchFilters
from tests.unit.store_kit import chunks as _chunks
from tests.unit.store_kit import record as _rec
from tests.unit.store_kit import unit_vectors as _vecs


@pytest.fixture
def store(temp_store):
    return temp_store(4)


def test_new_file_is_initialised_with_producer_wal_and_schema(tmp_path):
    s = Store.open(tmp_path / ".groove.db")
    assert s.meta("producer") == "grooveseek-python"
    assert s.conn.execute("pragma journal_mode").fetchall()[0][0] == "wal"
    assert s.conn.execute("pragma foreign_keys").fetchall()[0][0] == 1
    assert s.conn.execute("pragma user_version").fetchall()[0][0] == SCHEMA_VERSION
    assert "trigram" in s.meta("fts_tokenizer")
    s.close()


def test_reopening_is_idempotent(tmp_path):
    Store.open(tmp_path / "x.db").close()
    s = Store.open(tmp_path / "x.db")
    assert s.meta("producer") == "grooveseek-python"
    s.close()


def test_newer_schema_is_refused(tmp_path):
    s = Store.open(tmp_path / "x.db")
    s.conn.execute(f"pragma user_version={SCHEMA_VERSION + 1}")
    s.close()
    with pytest.raises(StoreError, match=r"written by a newer GrooveSeek \(schema \d+ > \d+\)"):
        Store.open(tmp_path / "x.db")


def test_foreign_database_is_refused_naming_the_file(tmp_path):
    db = tmp_path / ".groove.db"
    conn = apsw.Connection(str(db))
    conn.execute(
        "create table index_meta(key text, value text); insert into index_meta values ('producer','kb-mcp')"
    )
    conn.close()
    with pytest.raises(StoreError) as err:
        Store.open(db)
    assert str(db) in str(err.value) and "'kb-mcp'" in str(err.value) and "--force" in str(err.value)


def test_corrupt_file_is_refused_naming_the_file(tmp_path):
    db = tmp_path / ".groove.db"
    db.write_bytes(b"garbage" * 1000)
    with pytest.raises(StoreError) as err:
        Store.open(db)
    assert str(db) in str(err.value) and "groove index --force" in str(err.value)


def test_a_failed_write_leaves_nothing_behind(store):
    with pytest.raises(ValueError):
        store.replace_document(_rec("a.md"), _chunks("one", "two"), _vecs(1))
    with pytest.raises(apsw.SQLError):
        store.replace_document(_rec("a.md"), _chunks("one"), np.zeros((1, 7), np.float32))  # wrong dimension
    assert store.counts() == (0, 0)
    assert store.conn.execute("select count(*) from fts_chunks").fetchall()[0][0] == 0


def test_delete_cascades_to_chunks_fts_vectors_and_fields(store):
    store.replace_document(_rec("a.md", fields=(("status", "done"),)), _chunks("alpha bravo"), _vecs(1))
    store.delete_documents(["a.md"])
    assert store.counts() == (0, 0)
    for table in ("fts_chunks", "vec_chunks", "document_fields"):
        assert store.conn.execute(f"select count(*) from {table}").fetchall()[0][0] == 0


def test_repair_fts_restores_missing_rows(store):
    store.replace_document(_rec("a.md"), _chunks("alpha bravo"), _vecs(1))
    store.conn.execute("delete from fts_chunks")
    assert store.repair_fts() == 1
    assert store.repair_fts() == 0
    assert store.fts_candidates('"bravo"', 10, (2, 1, 1), SearchFilters())

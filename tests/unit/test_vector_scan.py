"""The numpy vector scan (issue 16): the same neighbours as sqlite-vec, the quality mask before the
top k, and a cached matrix that always matches the reader's snapshot. Real SQLite and sqlite-vec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grooveseek.store.matrix import GENERATION_KEY
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.types import Chunk

DIM = 16


def _rec(path: str) -> DocumentRecord:
    return DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h-" + path, 10)


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _add(store: Store, path: str, vecs: np.ndarray, quality: float | None = None) -> None:
    chunks = [
        Chunk(chunk_index=i, heading=f"h{i}", level=2, content=f"text {path} {i}", token_count=3)
        for i in range(len(vecs))
    ]
    store.replace_document(_rec(path), chunks, vecs)
    if quality is not None:
        store.conn.execute(
            "update chunks set quality_score = ? "
            "where document_id = (select id from documents where path = ?)",
            (quality, path),
        )


@pytest.fixture
def store(tmp_path: Path):
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(DIM)
    rng = np.random.default_rng(3)
    for d in range(30):
        _add(s, f"d{d}.md", _unit(rng, 20))
    yield s
    s.close()


def test_the_scan_returns_sqlite_vecs_neighbours(store: Store) -> None:
    rng = np.random.default_rng(11)
    for query in _unit(rng, 20):
        fast = store.knn(query, 50)
        slow = store._core.vectors.sqlite_vec_knn(query, 50)
        assert [cid for cid, _ in fast] == [cid for cid, _ in slow]
        np.testing.assert_allclose([d for _, d in fast], [d for _, d in slow], atol=1e-5)
    assert len(store.knn(_unit(rng, 1)[0], 10_000)) == 600  # k past the table: everything, capped at 4096


def test_the_quality_mask_applies_before_the_top_k(store: Store) -> None:
    rng = np.random.default_rng(5)
    _add(store, "low.md", _unit(rng, 20), quality=0.1)
    query = store.vectors_for([store.conn.execute("select max(id) from chunks").fetchone()[0]])
    (vector,) = query.values()
    unmasked = store.knn(vector, 5)
    assert unmasked[0][1] == pytest.approx(0.0, abs=1e-5)  # the low-quality chunk itself is nearest
    masked = store.knn(vector, 5, min_quality=0.3)
    passing = store._core.vectors.quality_passing(0.3)
    assert len(masked) == 5 and all(cid in passing for cid, _ in masked)
    expected = [h for h in store._core.vectors.sqlite_vec_knn(vector, 4096) if h[0] in passing][:5]
    assert [c for c, _ in masked] == [c for c, _ in expected]


def test_every_chunk_write_restamps_the_generation(store: Store) -> None:
    first = store.meta(GENERATION_KEY)
    _add(store, "new.md", _unit(np.random.default_rng(1), 2))
    second = store.meta(GENERATION_KEY)
    store.delete_documents(["new.md"])
    third = store.meta(GENERATION_KEY)
    assert len({first, second, third}) == 3


def test_a_write_is_seen_by_the_next_search(store: Store) -> None:
    vector = _unit(np.random.default_rng(99), 1)[0]
    before = store.knn(vector, 1)
    _add(store, "exact.md", vector[np.newaxis, :])
    (cid, distance) = store.knn(vector, 1)[0]
    assert cid != before[0][0] and distance == pytest.approx(0.0, abs=1e-5)


def test_a_reader_keeps_its_snapshot_while_a_writer_commits(tmp_path: Path, store: Store) -> None:
    reader = Store.open(store.path, create=False)
    try:
        vector = _unit(np.random.default_rng(7), 1)[0]
        with reader.read_snapshot():
            old = reader.knn(vector, 3)
            _add(store, "exact.md", vector[np.newaxis, :])  # committed by another connection
            assert reader.knn(vector, 3) == old  # still the snapshot it started with
        new = reader.knn(vector, 3)
        assert new != old and new[0][1] == pytest.approx(0.0, abs=1e-5)
    finally:
        reader.close()


def test_an_index_without_a_generation_falls_back_to_sqlite_vec(store: Store) -> None:
    store.conn.execute("delete from index_meta where key = ?", (GENERATION_KEY,))
    vector = _unit(np.random.default_rng(2), 1)[0]
    assert store.knn(vector, 7) == store._core.vectors.sqlite_vec_knn(vector, 7)


def test_the_bulk_read_of_vec0_storage_equals_the_row_by_row_read(store: Store) -> None:
    """``_load`` reads vec0's chunk blobs once each; after deletes and rewrites (holes in the
    validity bitmap, rows in several blobs) it must hold exactly the rows the virtual table gives."""
    from grooveseek.store import matrix

    rng = np.random.default_rng(5)
    for d in range(30, 90):  # 1,800 more rows: past one 1,024-vector chunk blob
        _add(store, f"d{d}.md", _unit(rng, 20))
    store.delete_documents([f"d{d}.md" for d in range(0, 90, 7)])
    _add(store, "d3.md", _unit(rng, 5))  # rewritten: old rows deleted, new ones appended
    conn = store.conn
    bulk = matrix._load_vec0_storage(conn, DIM)
    rows = matrix._load_rows(conn, DIM)
    assert bulk is not None and bulk.ids.size == rows.ids.size > 1024
    by_id = {int(i): (v, q) for i, v, q in zip(rows.ids, rows.vectors, rows.quality, strict=True)}
    for i, v, q in zip(bulk.ids, bulk.vectors, bulk.quality, strict=True):
        np.testing.assert_array_equal(v, by_id[int(i)][0])
        assert q == by_id[int(i)][1]
    assert sorted(by_id) == sorted(bulk.ids.tolist())


def test_a_vec0_layout_that_does_not_fit_falls_back_to_the_rows(store: Store) -> None:
    from grooveseek.store import matrix

    assert matrix._load_vec0_storage(store.conn, DIM + 1) is None  # blobs not a multiple of the rows
    loaded = matrix._load(store.conn, DIM)
    assert loaded.ids.size == 600

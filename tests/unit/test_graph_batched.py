"""The batched connection graph (issue 16): one ``knn_many`` matrix product per batch of queued
nodes must give exactly the per-node walk's answer, and the batched scan must pick the same
neighbours as the single-query scan, also when candidates tie at the k-th distance.

Real SQLite and sqlite-vec (``temp_store``). The reference is the per-node walk
(``connection_graph(..., per_node=True)``), which asks ``Store.knn`` once per expanded node, as the
walk did before batching.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from grooveseek.search.graph import GraphParams, connection_graph
from grooveseek.store import matrix as matrix_module
from grooveseek.store.matrix import GENERATION_KEY, matrix_for, top_k, top_k_many, vectors_by_id
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.types import Chunk

DIM = 8
PATH_ROWS = "select c.id from chunks c join documents d on d.id = c.document_id where d.path = ?"


def _unit_rows(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def _add(store: Store, path: str, vectors: np.ndarray, *, quality=None, topic=None) -> list[int]:
    record = DocumentRecord(
        path, "md", f"T {path}", False, topic, False, path.split("/")[0], None, (), None, path, 1
    )
    chunks = [
        Chunk(
            chunk_index=i,
            heading=f"h{i}",
            level=2,
            content=f"chunk {i} of {path} " * 3,
            token_count=5,
            quality_score=1.0 if quality is None else quality[i],
        )
        for i in range(len(vectors))
    ]
    store.replace_document(record, chunks, vectors)
    return [r[0] for r in store.conn.execute(PATH_ROWS + " order by c.chunk_index", (path,))]


def _clustered_kb(store: Store, seed: int, docs: int = 60) -> list[str]:
    """Documents of 1-10 chunks near a few shared themes (so walks go several layers deep), with
    every tenth chunk an exact copy of an earlier one (so distances tie), three categories, two
    topics and quality scores on both sides of the thresholds drawn below."""
    rng = np.random.default_rng(seed)
    themes = _unit_rows(rng.normal(size=(12, DIM)))
    earlier: list[np.ndarray] = []
    paths = []
    for i in range(docs):
        size = int(rng.integers(1, 11))
        vectors = _unit_rows(themes[rng.integers(0, 12, size)] + 0.45 * rng.normal(size=(size, DIM)))
        for j in range(size):
            if earlier and rng.random() < 0.1:
                vectors[j] = earlier[int(rng.integers(0, len(earlier)))]
        earlier.extend(vectors)
        path = f"{'xyz'[i % 3]}/d{i:03d}.md"
        quality = rng.choice([0.1, 0.35, 0.7, 1.0], size=size).tolist()
        _add(store, path, vectors, quality=quality, topic=[None, "t1", "t2"][i % 3])
        paths.append(path)
    return paths


def _random_params(rng: np.random.Generator, paths: list[str]) -> tuple[GraphParams, float]:
    excluded = [paths[int(i)] for i in rng.integers(0, len(paths), int(rng.integers(0, 4)))]
    params = GraphParams(
        paths[int(rng.integers(0, len(paths)))],
        depth=int(rng.integers(0, 4)),
        fan_out=int(rng.choice([0, 1, 2, 3, 5, 8, 20])),
        min_similarity=float(rng.choice([0.0, 0.2, 0.5, 0.8])),
        seed_strategy=str(rng.choice(["all_chunks", "centroid"])),
        dedup_by_path=bool(rng.random() < 0.3),
        category=rng.choice([None, None, "x", "y"]),
        topic=rng.choice([None, None, "t1"]),
        exclude_paths=excluded,
        max_nodes=int(rng.choice([1, 2, 3, 5, 8, 13, 21, 40, 100, 2000])),
        max_seed_chunks=int(rng.choice([1, 2, 4, 32])),
    )
    return params, float(rng.choice([0.0, 0.3, 0.6]))


def _answer(result) -> dict:
    out = result.as_dict()
    del out["stats"]["duration_ms"]  # the only timing field
    return out


def _compare_walks(store: Store, paths: list[str], seed: int, walks: int) -> Counter[str]:
    """Walk both ways from random starts with random parameters; returns what was covered."""
    rng = np.random.default_rng(seed)
    covered: Counter[str] = Counter()
    for _ in range(walks):
        params, min_quality = _random_params(rng, paths)
        before = connection_graph(store, params, min_quality=min_quality, per_node=True)
        after = connection_graph(store, params, min_quality=min_quality)
        assert _answer(after) == _answer(before), (params, min_quality)
        reasons = [t.reason for t in after.truncation]
        if "node_budget" in reasons and after.stats.knn_queries > 0:
            covered["budget fired during the walk"] += 1
        if after.stats.max_depth_reached >= 2:
            covered["two layers or more"] += 1
        if after.stats.knn_queries > 0 and not after.truncated:
            covered["complete walk"] += 1
    return covered


def test_the_batched_walk_answers_exactly_as_the_per_node_walk(temp_store) -> None:
    store = temp_store(DIM)
    paths = _clustered_kb(store, seed=5)
    # A few chunks without a stored vector: they can be seeds but never expand (they stay leaves).
    # Removed before the first scan, so the cached matrix is built without them.
    store._core.vectors.delete([r[0] for r in store.conn.execute("select id from chunks where id % 29 = 0")])
    covered = _compare_walks(store, paths, seed=17, walks=400)
    # The comparison is only as strong as the cases it met: budgets that fire mid-walk (and so
    # mid-batch), walks several layers deep and walks that ran out of candidates.
    assert min(covered.values()) >= 20 and len(covered) == 3, covered


def test_the_sqlite_vec_fallback_walks_the_same_both_ways(temp_store) -> None:
    store = temp_store(DIM)
    paths = _clustered_kb(store, seed=8, docs=30)
    store.conn.execute("delete from index_meta where key = ?", (GENERATION_KEY,))
    assert matrix_for(store.conn, str(store.path), DIM) is None  # really the fallback
    covered = _compare_walks(store, paths, seed=3, walks=80)
    assert covered["two layers or more"] > 0


def test_one_matrix_product_answers_many_expansions(temp_store) -> None:
    store = temp_store(DIM)
    paths = _clustered_kb(store, seed=5)
    calls: list[int] = []
    original = store.knn_many

    def spy(vectors, k, min_quality=0.0):
        calls.append(len(vectors))
        return original(vectors, k, min_quality)

    store.knn_many = spy  # type: ignore[method-assign]
    biggest = max(paths, key=lambda p: len(store.graph_seed_chunks(p, 100)))
    result = connection_graph(store, GraphParams(biggest, min_similarity=0.0), min_quality=0.0)
    # knn_queries still counts KNN rows answered (one per expanded node), now fewer calls.
    assert sum(calls) == result.stats.knn_queries
    assert len(calls) < result.stats.knn_queries and max(calls) > 1


# -- the batched scan at the k boundary ---------------------------------------------------------------
@pytest.fixture
def tied(temp_store):
    """About 3000 chunks: a query direction q, five chunks nearer to it than anything else, then 40 exact
    copies of one vector at the same distance from q, then the rest farther away."""
    store = temp_store(DIM)
    rng = np.random.default_rng(1)
    q = _unit_rows(rng.normal(size=(1, DIM)))[0]
    near = _unit_rows(q + 0.05 * rng.normal(size=(5, DIM)))
    tie = _unit_rows(q + 0.4 * rng.normal(size=(1, DIM)))[0]
    far = _unit_rows(rng.normal(size=(2955, DIM)))
    far = far[np.linalg.norm(far - q, axis=1) > np.linalg.norm(tie - q) + 0.01]
    rows = np.concatenate([far[:1000], near[:2], np.repeat(tie[None, :], 40, axis=0), near[2:], far[1000:]])
    order = rng.permutation(len(rows))  # the tied copies get scattered chunk ids
    for start in range(0, len(rows), 500):
        _add(store, f"x/d{start}.md", rows[order][start : start + 500])
    return store, q, tie


def _expected(store: Store, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Brute force over every stored vector: (float32 L2 distance, chunk id), first k."""
    m = matrix_for(store.conn, str(store.path), len(query))
    distances = np.linalg.norm(m.vectors - query, axis=1)
    ranked = sorted(zip(distances.tolist(), m.ids.tolist(), strict=True))[:k]
    return [(cid, d) for d, cid in ranked]


@pytest.mark.parametrize("k", [5, 6, 7, 20, 44, 45, 46, 100])
def test_ties_at_the_kth_distance_keep_the_smallest_chunk_ids(tied, k) -> None:
    store, q, tie = tied
    expected = _expected(store, q, k)
    tie_distance = float(np.linalg.norm(tie - q))
    assert sum(d == pytest.approx(tie_distance, abs=1e-6) for _, d in expected) == min(40, max(0, k - 5))
    single = store.knn(q, k)
    batched = store.knn_many(np.stack([q, tie, q]), k)
    assert single == expected and batched[0] == expected and batched[2] == expected
    assert batched[1] == store.knn(tie, k) == _expected(store, tie, k)  # 40 ties at distance 0
    # sqlite-vec agrees on the distances; among exactly equal ones it does not order by id.
    reference = store._core.vectors.sqlite_vec_knn(q, k)
    np.testing.assert_allclose([d for _, d in reference], [d for _, d in expected], atol=1e-5)
    if k <= 5 or k >= 45:  # no cut through the tied copies: the same chunks
        assert {c for c, _ in reference} == {c for c, _ in expected}


@pytest.mark.parametrize("k", [1, 7, 60, 150])
def test_scores_that_round_differently_pick_the_same_neighbours(temp_store, k) -> None:
    """150 permutations of one 384-dimensional vector have the same exact inner product with the
    uniform query, but a matrix-vector and a matrix-matrix product round them differently in the
    last bits; the choice must still be by (exact distance, chunk id) both ways."""
    dim = 384
    store = temp_store(dim)
    rng = np.random.default_rng(4)
    q = np.full(dim, 1 / np.sqrt(dim), dtype=np.float32)
    base = _unit_rows((q + 0.5 * rng.normal(size=dim))[None, :])[0]
    copies = np.stack([rng.permutation(base) for _ in range(150)])
    others = _unit_rows(rng.normal(size=(300, dim)))
    rows = np.concatenate([copies, others])[rng.permutation(450)]
    _add(store, "x/a.md", rows[:225])
    _add(store, "x/b.md", rows[225:])
    m = matrix_for(store.conn, str(store.path), dim)
    assert len(set((m.vectors @ q).tolist())) > 2  # the rounding this test is about happens
    queries = np.stack([q, rows[0], q])
    expected = [_expected(store, row, k) for row in queries]
    assert store.knn_many(queries, k) == expected
    assert [store.knn(row, k) for row in queries] == expected


def test_blocks_change_nothing(tied, monkeypatch) -> None:
    store, q, _ = tied
    m = matrix_for(store.conn, str(store.path), DIM)
    rng = np.random.default_rng(9)
    queries = np.concatenate([m.vectors[rng.integers(0, m.ids.size, 30)], [q]]).astype(np.float32)
    whole = top_k_many(m, queries, 50, 0.3)
    monkeypatch.setattr(matrix_module, "BLOCK_BYTES", 13 * m.ids.size * 4)  # blocks of 4 rows
    assert top_k_many(m, queries, 50, 0.3) == whole
    assert whole == [top_k(m, row, 50, 0.3) for row in queries]


def test_the_quality_mask_is_the_same_batched(temp_store) -> None:
    store = temp_store(DIM)
    paths = _clustered_kb(store, seed=2, docs=20)
    vectors = store.chunk_embeddings(store.graph_seed_chunks(paths[0], 10))
    queries = np.stack(list(vectors.values()))
    for threshold in (0.0, 0.3, 0.8, 1.1):
        assert store.knn_many(queries, 12, threshold) == [store.knn(v, 12, threshold) for v in queries]
    assert store.knn_many(queries, 12, 1.1) == [[] for _ in queries]  # nothing passes


def test_the_fallback_answers_row_by_row_through_sqlite_vec(temp_store) -> None:
    store = temp_store(DIM)
    _clustered_kb(store, seed=4, docs=10)
    store.conn.execute("delete from index_meta where key = ?", (GENERATION_KEY,))
    queries = _unit_rows(np.random.default_rng(0).normal(size=(5, DIM)))
    expected = [store._core.vectors.sqlite_vec_knn(v, 9) for v in queries]
    assert store.knn_many(queries, 9) == expected


def test_stored_vectors_come_from_the_matrix_unchanged(temp_store) -> None:
    store = temp_store(DIM)
    _clustered_kb(store, seed=6, docs=10)
    ids = [r[0] for r in store.conn.execute("select id from chunks")]
    wanted = [*ids[::3], 10_000_000, -1]  # plus ids without a vector
    from_sql = store._core.vectors.lookup(wanted)
    from_matrix = vectors_by_id(matrix_for(store.conn, str(store.path), DIM), wanted)
    assert from_matrix.keys() == from_sql.keys() == set(ids[::3])
    assert all(from_matrix[c].tobytes() == from_sql[c].tobytes() for c in from_sql)
    assert store.chunk_embeddings(wanted).keys() == from_sql.keys()


def test_overlapping_products_leave_the_blas_threads_as_they_found_them() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    original = blas_threads()
    first, second = matrix_module._one_blas_thread(), matrix_module._one_blas_thread()
    first.__enter__()
    second.__enter__()
    assert set(blas_threads()) == {1}
    first.__exit__(None, None, None)  # the first walk ends while the second still multiplies
    assert set(blas_threads()) == {1}
    second.__exit__(None, None, None)
    assert blas_threads() == original

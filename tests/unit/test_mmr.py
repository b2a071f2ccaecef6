"""MMR (SPEC R6.35–R6.37) over a real store with hand-made vectors; expected orders are computed by hand."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grooveseek.console import OncePerProcess
from grooveseek.search import mmr
from grooveseek.search.mmr import TIE_TOLERANCE, cosine, mmr_order, mmr_select, normalise_relevance
from grooveseek.search.request import MmrSettings
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.types import Chunk


def _rec(path: str) -> DocumentRecord:
    return DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h", 1)


@pytest.fixture
def store(temp_store):
    return temp_store(2)


def _add(store: Store, path: str, vectors: list[list[float]]) -> list[int]:
    """Store one document with one chunk per vector; returns the chunk ids in index order."""
    chunks = [Chunk(i, f"h{i}", 2, f"{path} chunk {i}", 4) for i in range(len(vectors))]
    store.replace_document(_rec(path), chunks, np.array(vectors, dtype=np.float32))
    rows = store.conn.execute(
        "select c.id from chunks c join documents d on d.id = c.document_id where "
        "d.path = ? order by c.chunk_index",
        (path,),
    )
    return [r[0] for r in rows]


def _pool(store: Store, ids_scores: list[tuple[int, float]]):
    rows = store.hit_rows([cid for cid, _ in ids_scores])
    return [(rows[cid], score) for cid, score in ids_scores]


def _picked(selection) -> list[int]:
    return [row.chunk_id for row, _ in selection]


@pytest.fixture
def near_duplicate(store):
    """c0 and c1 point the same way, c2 is orthogonal; scores give rel = 1, 0.5, 0."""
    a = _add(store, "a.md", [[1, 0], [1, 0]])
    b = _add(store, "b.md", [[0, 1]])
    return store, _pool(store, [(a[0], 0.03), (a[1], 0.02), (b[0], 0.01)])


def test_diversity_beats_a_near_duplicate_below_lambda_two_thirds(near_duplicate):
    store, pool = near_duplicate
    ids = [row.chunk_id for row, _ in pool]
    # λ = 0.5, step 2: c1 = 0.5·0.5 − 0.5·1 = −0.25, c2 = 0.5·0 − 0.5·0 = 0, so c2 wins.
    picked = mmr_select(store, pool, MmrSettings(0.5, 0.0), 3)
    assert _picked(picked) == [ids[0], ids[2], ids[1]]
    assert [score for _, score in picked] == [0.03, 0.01, 0.02]  # scores unchanged, not re-sorted
    # λ = 0.7, step 2: c1 = 0.35 − 0.3 = 0.05 > c2 = 0, so relevance wins (the break-even is λ = 2/3).
    assert _picked(mmr_select(store, pool, MmrSettings(0.7, 0.0), 3)) == ids


def test_limit_bounds_the_selection(near_duplicate):
    store, pool = near_duplicate
    assert len(mmr_select(store, pool, MmrSettings(0.5, 0.0), 2)) == 2
    assert len(mmr_select(store, pool, MmrSettings(0.5, 0.0), 50)) == 3
    assert mmr_select(store, [], MmrSettings(0.5, 0.0), 5) == []


def test_ties_go_to_the_lower_pool_index_not_the_lower_chunk_id(store):
    first, low_id, high_id = _add(store, "a.md", [[1, 0], [0, 1], [0, 1]])
    # high_id sits before low_id in the pool; both score 0.01 and are orthogonal to the first pick.
    pool = _pool(store, [(first, 0.03), (high_id, 0.01), (low_id, 0.01)])
    assert _picked(mmr_select(store, pool, MmrSettings(0.5, 0.0), 3)) == [first, high_id, low_id]


def test_rounding_noise_does_not_break_a_tie():
    first, base = np.array([1.0, 0.3, 0.7]), np.array([0.3, 0.5, 0.1])
    # Parallel vectors: the same cosine mathematically, 1 ulp apart in float64 (3·base is "more similar").
    assert cosine(3 * base, first) > cosine(base, first)
    order = mmr_order([3.0, 1.0, 1.0], [first, 3 * base, base], ["a", "b", "c"], MmrSettings(0.5, 0.0), 3)
    assert order == [0, 1, 2]


def test_same_doc_penalty_pushes_the_second_chunk_of_a_document_down(store):
    a = _add(store, "a.md", [[1, 0], [0, 1]])
    b = _add(store, "b.md", [[-1, 0]])
    pool = _pool(store, [(a[0], 0.03), (a[1], 0.02), (b[0], 0.01)])
    # λ = 0.9, no penalty, step 2: a1 = 0.45 − 0.1·0 = 0.45; b0 = 0 − 0.1·(−1) = 0.1 → a1.
    assert _picked(mmr_select(store, pool, MmrSettings(0.9, 0.0), 3)) == [a[0], a[1], b[0]]
    # penalty 0.5: a1 = 0.45 − 0.5 = −0.05 < b0 = 0.1 → b0 first.
    assert _picked(mmr_select(store, pool, MmrSettings(0.9, 0.5), 3)) == [a[0], b[0], a[1]]


def test_first_pick_has_no_penalty_or_similarity_term(store):
    a = _add(store, "a.md", [[1, 0], [1, 0]])
    pool = _pool(store, [(a[1], 0.02), (a[0], 0.03)])  # the best is second in the pool
    assert _picked(mmr_select(store, pool, MmrSettings(0.0, 1.0), 1)) == [a[1]]  # λ = 0: all tie at 0
    assert _picked(mmr_select(store, pool, MmrSettings(0.5, 1.0), 1)) == [a[0]]  # λ > 0: the best


def test_zero_norm_and_missing_vectors_count_as_dissimilar(store):
    a = _add(store, "a.md", [[1, 0], [0, 0], [1, 0]])
    pool = _pool(store, [(a[0], 0.03), (a[1], 0.02), (a[2], 0.01)])
    # cos with the zero vector is 0, not NaN: step 2: a1 = 0.25 − 0 = 0.25 > a2 = 0 − 0.5 = −0.5.
    assert _picked(mmr_select(store, pool, MmrSettings(0.5, 0.0), 3)) == [a[0], a[1], a[2]]
    store.conn.execute("delete from vec_chunks where chunk_id = ?", (a[2],))
    pool = _pool(store, [(a[0], 0.03), (a[2], 0.02), (a[1], 0.01)])
    # a2 now has no stored vector: treated as dissimilar, so 0.25 beats a1's 0.
    assert _picked(mmr_select(store, pool, MmrSettings(0.5, 0.0), 3)) == [a[0], a[2], a[1]]


def test_lambda_zero_is_maximum_diversity(store):
    a = _add(store, "a.md", [[1, 0], [0.99, 0.141], [0, 1], [-1, 0]])
    pool = _pool(store, list(zip(a, [0.04, 0.03, 0.02, 0.01], strict=True)))
    # Relevance is ignored after the first pick: take the least similar to what is already chosen.
    # step 2: −cos = −0.99, 0, 1 → a3; step 3: a1 max cos 0.99, a2 max cos 0 → a2.
    assert _picked(mmr_select(store, pool, MmrSettings(0.0, 0.0), 4)) == [a[0], a[3], a[2], a[1]]


def test_relevance_is_min_max_normalised_with_the_f32_epsilon():
    assert normalise_relevance([2.0, 4.0, 3.0]).tolist() == [0.0, 1.0, 0.5]
    assert normalise_relevance([-3.5, -1.5]).tolist() == [0.0, 1.0]  # reranker logits may be negative
    assert normalise_relevance([0.5, 0.5 + 1.0e-7]).tolist() == [0.0, 0.0]  # range ≤ 1.1920929e-7
    assert normalise_relevance([0.0, 1.5e-7]).tolist() == [0.0, 1.0]


def test_a_flat_pool_keeps_pool_order_for_the_first_pick():
    s = MmrSettings(0.5, 0.0)
    vecs = [np.array([1.0, 0.0])] * 3
    # 1e-7 apart: no relevance signal, so every first-pick objective is 0 and index 0 wins.
    assert mmr_order([0.5, 0.5 + 1e-7, 0.5], vecs, ["a", "b", "c"], s, 1) == [0]
    assert mmr_order([0.5, 0.5 + 2e-7, 0.5], vecs, ["a", "b", "c"], s, 1) == [1]


def test_cosine_rules():
    assert cosine(np.array([1.0, 0.0]), np.array([2.0, 0.0])) == pytest.approx(1.0)
    assert cosine(np.array([1.0, 1.0]), np.array([-1.0, -1.0])) == pytest.approx(-1.0)
    assert cosine(np.array([1.0, 0.0]), np.array([1.0, 0.0, 0.0])) == 0.0  # dimension mismatch
    assert cosine(np.array([0.0, 0.0]), np.array([1.0, 0.0])) == 0.0  # zero norm


def test_mixed_dimensions_are_dissimilar_in_the_selection():
    # Padding [1, 0] to [1, 0, 0] would make it identical to c1; the mismatch rule says cos = 0.
    vecs = [np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0, 0.0])]
    assert mmr_order([3.0, 2.0, 1.0], vecs, ["a", "b", "c"], MmrSettings(0.5, 0.0), 3) == [0, 1, 2]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_lambda_one_without_penalty_is_relevance_order(data):
    n = data.draw(st.integers(1, 25))
    scores = data.draw(st.lists(st.integers(0, 6).map(float), min_size=n, max_size=n))
    vecs = [np.array(data.draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3))) for _ in range(n)]
    docs = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    k = data.draw(st.integers(1, n))
    expected = sorted(range(n), key=lambda i: (-scores[i], i))[:k]
    assert mmr_order(scores, vecs, docs, MmrSettings(1.0, 0.0), k) == expected


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_selection_is_a_permutation_prefix_matching_the_scalar_definition(data):
    """The vectorised loop equals a literal, scalar transcription of R6.36."""
    n = data.draw(st.integers(1, 12))
    scores = data.draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n))
    dims = data.draw(st.lists(st.sampled_from([2, 3]), min_size=n, max_size=n))
    vecs = [
        np.array(data.draw(st.lists(st.integers(-2, 2).map(float), min_size=d, max_size=d))) for d in dims
    ]
    docs = data.draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n))
    lam = data.draw(st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]))
    pen = data.draw(st.sampled_from([0.0, 0.25, 1.0]))
    k = data.draw(st.integers(1, n))
    rel = normalise_relevance(scores)
    chosen: list[int] = []
    for _ in range(k):
        values = {}
        for c in range(n):
            if c in chosen:
                continue
            value = lam * rel[c]
            if chosen:
                value -= (1 - lam) * max(cosine(vecs[c], vecs[s]) for s in chosen)
                value -= pen * (docs[c] in {docs[s] for s in chosen})
            values[c] = value
        best = max(values.values())
        chosen.append(min(c for c, v in values.items() if v >= best - TIE_TOLERANCE))
    assert mmr_order(scores, vecs, docs, MmrSettings(lam, pen), k) == chosen


def test_lambda_one_warns_once_per_process(near_duplicate, caplog, monkeypatch):
    store, pool = near_duplicate
    monkeypatch.setattr(mmr, "LAMBDA_ONE_ONCE", OncePerProcess())
    with caplog.at_level(logging.WARNING, logger="grooveseek.search.mmr"):
        mmr_select(store, pool, MmrSettings(0.7, 0.0), 3)
        assert caplog.records == []  # an ordinary λ says nothing
        picked = mmr_select(store, pool, MmrSettings(1.0, 0.0), 3)
        mmr_select(store, pool, MmrSettings(1.0, 0.0), 3)
        mmr_select(store, pool, MmrSettings(1.0, 0.3), 3)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "mmr_lambda = 1.0" in message and "plain relevance order" in message and message.isascii()
    assert _picked(picked) == [row.chunk_id for row, _ in pool]  # and it is what the warning says


def test_lambda_one_warning_names_the_penalty_when_one_is_set(near_duplicate, caplog, monkeypatch):
    store, pool = near_duplicate
    monkeypatch.setattr(mmr, "LAMBDA_ONE_ONCE", OncePerProcess())
    with caplog.at_level(logging.WARNING, logger="grooveseek.search.mmr"):
        mmr_select(store, pool, MmrSettings(1.0, 0.5), 3)
    assert "mmr_same_doc_penalty" in caplog.records[0].getMessage()


def test_vectors_are_read_in_batches_of_at_most_500(store):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(1201, 2)).astype(np.float32)
    ids = _add(store, "big.md", vectors.tolist())
    batches: list[int] = []

    def trace(cursor, sql, bindings):
        if "from json_each" in sql and "vec_chunks" in sql:
            batches.append(len(json.loads(bindings[0])))
        return True

    store.conn.exec_trace = trace
    got = store.vectors_for(ids + [10**9])  # an unknown id is simply absent
    store.conn.exec_trace = None
    assert batches == [500, 500, 202]
    assert sorted(got) == sorted(ids)
    for cid, vec in zip(ids, vectors, strict=True):
        assert got[cid].dtype == np.float32 and np.array_equal(got[cid], vec)
    pool = _pool(store, [(cid, float(i)) for i, cid in enumerate(ids)])
    assert len(mmr_select(store, pool, MmrSettings(0.5, 0.0), 5)) == 5


def test_vectors_for_without_a_vector_table_or_ids(tmp_path):
    s = Store.open(tmp_path / "novec.db")
    try:
        assert s.vectors_for([1, 2]) == {}
    finally:
        s.close()


def test_mmr_overrides_with_mmr_off_warn_once_per_process(monkeypatch):
    """R6.39: lambda or penalty given while effective MMR is off: one warning per process."""
    from grooveseek.config.model import GrooveConfig
    from grooveseek.search import request as request_module
    from grooveseek.search.request import MMR_OVERRIDE_WARNING, resolve_request

    monkeypatch.setattr(request_module, "MMR_OVERRIDE_ONCE", OncePerProcess())
    said: list[str] = []
    config = GrooveConfig()
    assert resolve_request(config, "q", mmr=False, mmr_lambda=0.5, warn=said.append).mmr is None
    resolve_request(config, "q", mmr_same_doc_penalty=0.2, warn=said.append)  # off by default too
    resolve_request(config, "q", mmr=True, mmr_lambda=0.5, warn=said.append)  # on: nothing to say
    assert said == [MMR_OVERRIDE_WARNING]
    monkeypatch.setattr(request_module, "MMR_OVERRIDE_ONCE", OncePerProcess())
    resolve_request(config, "q", mmr=True, mmr_lambda=0.5, warn=said.append)
    assert said == [MMR_OVERRIDE_WARNING]  # MMR on: the values are used, no warning spent

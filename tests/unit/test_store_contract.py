"""The ``IndexStore`` contract, run with the same code against every backend (``any_store``: the
SQLite file and a real PostgreSQL): writes, the indexer's reads, the three legs with their filters,
the stages', graph's and serving reads, snapshots and knowledge-base scoping. Engine-specific
behaviour (WAL, migrations, refusing foreign files) stays in test_store.py and the plugin's tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from grooveseek.errors import StoreError
from grooveseek.store.store import AWAITING_REPARSE
from grooveseek.types import Chunk, SearchFilters
from tests.unit.store_kit import chunks as _chunks
from tests.unit.store_kit import record as _rec
from tests.unit.store_kit import unit_vectors as _vecs

W = (2.0, 1.0, 1.0)


@pytest.fixture
def store(any_store):
    return any_store(4)


def test_replace_document_writes_rows_full_text_and_vectors(store):
    store.replace_document(_rec("a/x.md"), _chunks("alpha bravo charlie", "delta echo foxtrot"), _vecs(2))
    assert store.counts() == (1, 2)
    assert len(store.fts_candidates('"bravo"', 10, W, SearchFilters())) == 1
    assert len(store.knn(_vecs(1)[0], 10)) == 2
    store.replace_document(_rec("a/x.md", "h2"), _chunks("golf hotel india"), _vecs(1, seed=1))
    assert store.counts() == (1, 1)
    assert store.fts_candidates('"bravo"', 10, W, SearchFilters()) == []
    assert len(store.knn(_vecs(1)[0], 10)) == 1


def test_a_failed_write_leaves_nothing_behind(store):
    with pytest.raises(ValueError):
        store.replace_document(_rec("a.md"), _chunks("one", "two"), _vecs(1))
    assert store.counts() == (0, 0)
    assert store.documents() == {}


def test_delete_removes_chunks_vectors_fields_and_postings(store):
    store.replace_document(_rec("a.md", fields=(("status", "done"),)), _chunks("alpha bravo 東京"), _vecs(1))
    store.set_meta({"declared_fields": '["status"]'})
    assert store.field_row_count() == 1
    store.delete_documents(["a.md"])
    assert store.counts() == (0, 0)
    assert store.field_row_count() == 0
    assert store.knn(_vecs(1)[0], 10) == []
    assert store.cjk_candidates(["東京"], 10, W, SearchFilters()) == []


def test_rename_keeps_chunk_ids_and_updates_columns(store):
    store.replace_document(_rec("a/x.md"), _chunks("alpha bravo"), _vecs(1))
    before = [cid for cid, _ in store.fts_candidates('"alpha"', 10, W, SearchFilters())]
    store.rename_documents([("a/x.md", "b/y.md", {"category": "b"})])
    assert list(store.documents()) == ["b/y.md"]
    assert [cid for cid, _ in store.fts_candidates('"alpha"', 10, W, SearchFilters())] == before
    assert store.serving_row("b/y.md").category == "b"
    assert store.hit_rows(before)[before[0]].path == "b/y.md"


def test_filters_in_the_fts_leg(store):
    store.replace_document(_rec("a/x.md"), _chunks("shared words here"), _vecs(1))
    store.replace_document(_rec("b/y.md"), _chunks("shared words there"), _vecs(1, seed=2))
    assert len(store.fts_candidates('"shared"', 10, W, SearchFilters())) == 2
    only_b = store.fts_candidates('"shared"', 10, W, SearchFilters(category="b"))
    assert [store.hit_rows([cid])[cid].path for cid, _ in only_b] == ["b/y.md"]


def test_heading_weight_changes_bm25_order(store):
    store.replace_document(_rec("a.md"), [Chunk(0, "zebra", 2, "plain words only", 4)], _vecs(1))
    store.replace_document(
        _rec("b.md"), [Chunk(0, "other", 2, "zebra zebra appears in the body", 8)], _vecs(1, seed=3)
    )
    heading_first = store.fts_candidates('"zebra"', 10, (50.0, 1.0, 1.0), SearchFilters())
    body_first = store.fts_candidates('"zebra"', 10, (0.0, 1.0, 50.0), SearchFilters())
    paths = [[store.hit_rows([c])[c].path for c, _ in ranked] for ranked in (heading_first, body_first)]
    assert paths == [["a.md", "b.md"], ["b.md", "a.md"]]


def _bm25(texts: dict[str, str], phrases: list[str], weights=W) -> dict[str, float]:
    """FTS5's bm25 (k1 1.2, b 0.75) over trigram tokens, written out: the reference both
    backends must match. Each chunk here has heading "h0", no context, and the text as content."""
    import math

    length = {p: len("h0") - 2 + max(0, len(t) - 2) for p, t in texts.items()}
    avgdl = sum(length.values()) / len(texts)
    out: dict[str, float] = {}
    for path, text in texts.items():
        score = 0.0
        for phrase in phrases:
            hits = sum(phrase in t.lower() for t in texts.values())
            idf = max(math.log((len(texts) - hits + 0.5) / (hits + 0.5)), 1e-6)
            f = weights[2] * text.lower().count(phrase)
            score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length[path] / avgdl))
        if any(p in text.lower() for p in phrases):
            out[path] = -score
    return out


def test_bm25_scores_are_fts5s(store):
    """Both backends score with FTS5's bm25 over trigram counts (negated): the same numbers."""
    texts = {
        "a.md": "the cat sat on the mat with another Cat",
        "b.md": "a dog and a cat",
        "c.md": "nothing to see here at all, none",
        "d.md": "birds and fish but no mammals",
        "e.md": "a quiet dog sleeps",
        "f.md": "weather report for tuesday",
    }
    store.replace_document(_rec("gone.md"), _chunks("a cat that will be deleted", "and a dog"), _vecs(2))
    store.replace_document(_rec("a.md"), _chunks("an older cat text", "replaced below"), _vecs(2))
    for i, (path, text) in enumerate(texts.items()):
        store.replace_document(_rec(path), _chunks(text), _vecs(1, seed=i))
    store.delete_documents(["gone.md"])  # N and the average length follow replaces and deletes
    ranked = store.fts_candidates('"cat" OR "dog"', 10, W, SearchFilters())
    got = {store.hit_rows([c])[c].path: score for c, score in ranked}
    expected = _bm25(texts, ["cat", "dog"])
    assert got == pytest.approx(expected, abs=1e-9)
    assert [store.hit_rows([c])[c].path for c, _ in ranked] == sorted(expected, key=expected.__getitem__)


def test_exclusion_expression_and_rowids(store):
    store.replace_document(_rec("a.md"), _chunks("alpha bravo"), _vecs(1))
    store.replace_document(_rec("b.md"), _chunks("alpha charlie"), _vecs(1, seed=1))
    ranked = store.fts_candidates('("alpha") NOT ("charlie")', 10, W, SearchFilters())
    assert [store.hit_rows([c])[c].path for c, _ in ranked] == ["a.md"]
    ids = store.fts_rowids('"charlie"')
    assert [store.hit_rows(list(ids))[c].path for c in ids] == ["b.md"]


def test_a_malformed_expression_is_a_store_error(store):
    store.replace_document(_rec("a.md"), _chunks("alpha"), _vecs(1))
    with pytest.raises(StoreError):
        store.fts_candidates('"unterminated', 10, W, SearchFilters())


def test_reset_recreates_vectors_at_the_new_dimension(store):
    store.replace_document(_rec("a.md"), _chunks("alpha"), _vecs(1))
    store.reset(8, {"embedding_identity": "other", "embedding_dim": "8"})
    assert store.counts() == (0, 0)
    assert store.vec_dimension() == 8
    assert store.meta("embedding_identity") == "other"
    store.replace_document(_rec("a.md"), _chunks("alpha"), _vecs(1, dim=8))
    assert len(store.knn(_vecs(1, dim=8)[0], 5)) == 1


def test_trigram_matches_japanese_substrings(store):
    store.replace_document(_rec("ja.md"), _chunks("配列のコピー方法について説明します"), _vecs(1))
    assert store.fts_candidates('"コピー方法"', 10, W, SearchFilters())
    assert store.fts_candidates('"配列の"', 10, W, SearchFilters())


def test_case_and_diacritics_fold_like_fts5(store):
    store.replace_document(_rec("a.md"), _chunks("Café RÉSUMÉ naïve"), _vecs(1))
    for phrase in ('"cafe"', '"resume"', '"NAIVE"', '"café"'):
        assert store.fts_candidates(phrase, 10, W, SearchFilters()), phrase


def test_knn_orders_by_distance_and_applies_the_quality_floor(store):
    vectors = _vecs(6, seed=5)
    chunks = [Chunk(i, None, None, f"text {i}", 2, quality_score=0.1 if i % 2 else 0.9) for i in range(6)]
    store.replace_document(_rec("a.md"), chunks, vectors)
    query = vectors[0]
    hits = store.knn(query, 6)
    distances = [d for _, d in hits]
    assert distances == sorted(distances) and len(hits) == 6
    assert distances[0] == pytest.approx(0.0, abs=1e-5)
    exact = np.linalg.norm(vectors - query, axis=1)
    assert distances == pytest.approx(sorted(exact.tolist()), abs=1e-4)
    assert len(store.knn(query, 6, min_quality=0.5)) == 3
    assert store.knn_many(vectors[:2], 3) == [store.knn(vectors[0], 3), store.knn(vectors[1], 3)]


def test_stored_vectors_come_back(store):
    vectors = _vecs(2, seed=9)
    store.replace_document(_rec("a.md"), _chunks("one", "two"), vectors)
    ids = [cid for cid, _ in store.knn(vectors[0], 2)]
    got = store.vectors_for(ids)
    assert set(got) == set(ids)
    assert np.allclose(sorted(map(tuple, got.values())), sorted(map(tuple, vectors)), atol=1e-6)
    assert store.chunk_embeddings(ids).keys() == got.keys()


def test_cjk_leg_finds_two_character_words_with_filters(store):
    store.replace_document(_rec("a/tokyo.md"), _chunks("東京の天気は晴れです"), _vecs(1))
    store.replace_document(_rec("b/kyoto.md"), _chunks("京都の紅葉の名所"), _vecs(1, seed=1))
    ranked = store.cjk_candidates(["紅葉"], 10, W, SearchFilters())
    assert [store.hit_rows([c])[c].path for c, _ in ranked] == ["b/kyoto.md"]
    # a one-character kanji is a prefix: 京 starts 京都
    assert len(store.cjk_candidates(["京"], 10, W, SearchFilters())) == 2
    assert store.cjk_candidates(["京"], 10, W, SearchFilters(category="a")) == [
        (c, s) for c, s in store.cjk_candidates(["京"], 10, W, SearchFilters()) if c not in {ranked[0][0]}
    ]


def test_indexer_reads(store):
    store.replace_document(_rec("a.md", title="T"), _chunks("one", "two"), _vecs(2))
    docs = store.documents()
    assert list(docs) == ["a.md"] and docs["a.md"].content_hash == "h"
    doc_id = docs["a.md"].id
    assert store.chunk_signature(doc_id) == [("h0", "", "one"), ("h1", "", "two")]
    assert [c for _, _, c in store.chunk_inputs(doc_id)] == ["one", "two"]
    assert list(store.chunk_texts()) == [("a.md", "h0", "", "one"), ("a.md", "h1", "", "two")]
    assert store.any_context() is False
    assert store.quality_counts(0.5) == (2, 0)
    store.finish_run({"run": "1"}, ["a.md"])
    assert store.awaiting_reparse_count() == 1 and store.documents()["a.md"].content_hash == AWAITING_REPARSE
    assert store.meta("run") == "1"


def test_corpus_digest_is_the_same_on_every_backend(store):
    """R10.19's digest: every chunk's path, index, heading ('' for none), context and content, in
    path and chunk order, each length-prefixed."""
    import hashlib

    store.replace_document(_rec("b.md"), _chunks("beta"), _vecs(1))
    store.replace_document(_rec("a.md"), [Chunk(0, None, None, "alpha", 1)], _vecs(1, seed=1))
    h = hashlib.sha256()
    for row in (("a.md", 0, "", "", "alpha"), ("b.md", 0, "h0", "", "beta")):
        for part in row:
            data = str(part).encode()
            h.update(len(data).to_bytes(8, "big") + data)
    assert store.corpus_digest() == {"documents": 2, "chunks": 2, "digest": h.hexdigest()}


def test_stage_graph_and_serving_reads(store):
    store.replace_document(_rec("d/x.md", title="X", topic="t"), _chunks("zero", "one", "two"), _vecs(3))
    store.replace_document(_rec("top.md", parser_id="txt"), _chunks("solo"), _vecs(1, seed=4))
    seeds = store.graph_seed_chunks("d/x.md", 10)
    assert len(seeds) == 3
    assert [s.content for s in store.chunk_neighbours(seeds[1])] == ["zero", "one", "two"]
    assert [s.content for s in store.document_chunks(seeds[2], 2)] == ["zero", "one"]
    assert store.graph_candidate_paths(seeds, SearchFilters(category="d")) == dict.fromkeys(seeds, "d/x.md")
    assert store.graph_candidate_paths(seeds, SearchFilters(category="zz")) == {}
    node = store.graph_node_rows(seeds[:1])[seeds[0]]
    assert (node.path, node.title, node.topic, node.head) == ("d/x.md", "X", "t", "zero")
    assert [r.path for r in store.serving_rows()] == ["d/x.md", "top.md"]
    assert [r.path for r in store.serving_rows_in_category(None)] == ["top.md"]
    assert [r.path for r in store.serving_rows_in_category("d")] == ["d/x.md"]
    assert store.serving_row("nope.md") is None
    assert set(store.serving_rows_for(["top.md", "nope.md"])) == {"top.md"}
    assert store.documents_with_parsers_outside(["md"]) == (1, "top.md")
    assert store.passing_chunk_ids(seeds, SearchFilters(category="d")) == set(seeds)


def test_read_snapshot_sees_one_state(any_store):
    """A writer's commit during a snapshot is invisible to it until the snapshot ends."""
    reader = any_store(4)
    reader.replace_document(_rec("a.md"), _chunks("alpha"), _vecs(1))
    if any_store.backend == "sqlite":
        from grooveseek.store.store import Store

        writer = Store.open(reader.path)
    else:
        from grooveseek.store.store import open_store

        writer = open_store(reader.path)
    try:
        with reader.read_snapshot():
            assert reader.counts() == (1, 1)
            writer.replace_document(_rec("b.md"), _chunks("bravo"), _vecs(1, seed=1))
            assert reader.counts() == (1, 1)
            assert reader.holds_snapshot()
        assert reader.counts() == (2, 2)
        assert not reader.holds_snapshot()
    finally:
        writer.close()


def test_two_knowledge_bases_do_not_see_each_other(any_store):
    one, two = any_store(4), any_store(4)
    one.replace_document(_rec("a.md"), _chunks("alpha"), _vecs(1))
    two.replace_document(_rec("a.md"), _chunks("bravo"), _vecs(1, seed=1))
    assert one.counts() == two.counts() == (1, 1)
    assert one.fts_candidates('"bravo"', 10, W, SearchFilters()) == []
    assert len(one.knn(_vecs(1)[0], 10)) == 1
    two.delete_documents(["a.md"])
    assert one.counts() == (1, 1)


# -- lexical first, vectors after (issue 26) ------------------------------------------------------
def test_a_document_written_without_vectors_is_searchable_lexically_and_pending(store):
    store.replace_document(_rec("a.md"), _chunks("alpha bravo 東京", "charlie delta"), None)
    assert store.counts() == (1, 2)
    assert store.vectors_pending() == 2
    assert len(store.fts_candidates('"bravo"', 10, W, SearchFilters())) == 1
    assert len(store.cjk_candidates(["東京"], 10, W, SearchFilters())) == 1
    assert store.knn(_vecs(1)[0], 10) == []
    pending = store.pending_vectors(10)
    assert [p.text for p in pending] == ["alpha bravo 東京", "charlie delta"]
    assert pending[0].chunk_id < pending[1].chunk_id
    assert {p.document_id for p in pending} == {store.documents()["a.md"].id}


def test_pending_texts_are_the_embedding_input(store):
    chunk = Chunk(0, "h", 2, "body text", 2, context="Doc > Section")
    store.replace_document(_rec("a.md"), [chunk], None)
    assert [p.text for p in store.pending_vectors(10)] == ["Doc > Section\n\nbody text"]


def test_pending_vectors_pages_by_chunk_id(store):
    store.replace_document(_rec("a.md"), _chunks("one", "two", "three"), None)
    first = store.pending_vectors(2)
    assert len(first) == 2
    rest = store.pending_vectors(10, after_chunk_id=first[-1].chunk_id)
    assert [p.text for p in rest] == ["three"]
    assert store.pending_vectors(10, after_chunk_id=rest[-1].chunk_id) == []
    assert store.pending_vectors(0) == []


def test_fill_vectors_makes_the_vector_leg_see_the_chunks(store):
    store.replace_document(_rec("a.md"), _chunks("one", "two"), None)
    pending = store.pending_vectors(10)
    vecs = _vecs(2)
    with store.read_snapshot():  # a reader's matrix of the pending state is cached first
        assert store.knn(vecs[0], 10) == []
    assert store.fill_vectors([(pending[0].chunk_id, vecs[0])]) == 1
    assert store.vectors_pending() == 1
    assert [cid for cid, _ in store.knn(vecs[0], 10)] == [pending[0].chunk_id]
    assert [p.chunk_id for p in store.pending_vectors(10)] == [pending[1].chunk_id]
    assert store.fill_vectors([(pending[1].chunk_id, vecs[1])]) == 1
    assert store.vectors_pending() == 0
    assert sorted(cid for cid, _ in store.knn(vecs[0], 10)) == sorted(p.chunk_id for p in pending)
    assert np.allclose(store.vectors_for([pending[1].chunk_id])[pending[1].chunk_id], vecs[1])


def test_fill_vectors_ignores_vanished_ids_and_chunks_that_have_one(store):
    store.replace_document(_rec("a.md"), _chunks("one"), None)
    old = store.pending_vectors(10)[0].chunk_id
    store.replace_document(_rec("a.md", "h2"), _chunks("one changed"), None)  # re-indexed meanwhile
    store.replace_document(_rec("b.md"), _chunks("two"), _vecs(1, seed=5))
    b_id = store.documents()["b.md"].id
    assert store.fill_vectors([(old, _vecs(1)[0]), (10_000_000, _vecs(1)[0])]) == 0
    (b_chunk,) = [cid for cid, _ in store.knn(_vecs(1, seed=5)[0], 1)]
    assert store.fill_vectors([(b_chunk, _vecs(1, seed=9)[0])]) == 0  # keeps its own vector
    assert np.allclose(store.vectors_for([b_chunk])[b_chunk], _vecs(1, seed=5)[0])
    assert store.vectors_pending() == 1
    assert store.documents()["b.md"].id == b_id


def test_replace_document_takes_some_vectors_and_leaves_the_rest_pending(store):
    vecs = _vecs(3)
    store.replace_document(_rec("a.md"), _chunks("one", "two", "three"), [vecs[0], None, vecs[2]])
    assert store.vectors_pending() == 1
    assert [p.text for p in store.pending_vectors(10)] == ["two"]
    assert len(store.knn(vecs[0], 10)) == 2
    with pytest.raises(ValueError):
        store.replace_document(_rec("b.md"), _chunks("x", "y"), [vecs[0]])


def test_deleting_a_pending_document_clears_its_pending_chunks(store):
    store.replace_document(_rec("a.md"), _chunks("one", "two"), None)
    store.replace_document(_rec("b.md"), _chunks("three"), _vecs(1))
    assert store.vectors_pending() == 2
    store.delete_documents(["a.md"])
    assert store.vectors_pending() == 0
    assert store.pending_vectors(10) == []

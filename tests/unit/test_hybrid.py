"""RRF fusion, low_confidence and the hybrid search over a real store with the fake embedder."""

from __future__ import annotations

import pytest

from grooveseek.search.confidence import low_confidence
from grooveseek.search.fusion import rrf
from grooveseek.search.pipeline import pool_sizes, run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest, clamp_limit
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk, SearchFilters


def test_rrf_scores_and_tie_break():
    fused = rrf([[1, 2, 3], [2, 1]], 60)
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert [cid for cid, _ in fused] == [1, 2, 3]  # 1 and 2 tie: ascending id wins
    assert rrf([[7], [7]], 60)[0][1] == pytest.approx(2 / 61)


def test_low_confidence_rule():
    # Fires when the top hit holds at most half of the query's content words (docs/retrieval.md).
    terms = ["registry", "scope", "publish", "token"]
    assert low_confidence(terms, "Publish to a Registry\nscoped packages", 1.5) is False  # 3 of 4
    assert low_confidence(terms, "the registry and its scope", 1.5) is True  # 2 of 4
    assert low_confidence(["配列", "削除"], "配列から要素を削除する", 1.5) is False
    assert low_confidence(["配列", "削除"], "文字列の長さ", 1.5) is True
    assert low_confidence(terms, None, 1.5) is False  # no hit: never fires
    assert low_confidence([], "anything", 1.5) is False  # only stopwords: no words to look for
    assert low_confidence(terms, "nothing", 0) is False  # 0 still turns the flag off


def test_pool_sizes():
    assert pool_sizes(5, mmr=False, rerank=False) == (50, 5)
    assert pool_sizes(20, mmr=False, rerank=False) == (100, 20)
    assert pool_sizes(5, mmr=True, rerank=True) == (50, 50)
    assert pool_sizes(5, mmr=False, rerank=True) == (250, 50)


def test_clamp_limit():
    assert (clamp_limit(0), clamp_limit(5), clamp_limit(10_000)) == (1, 5, 1000)


@pytest.fixture
def indexed(tmp_path):
    emb = FakeEmbedder(16)
    store = Store.open(tmp_path / ".groove.db")
    store.ensure_vec_table(16)
    docs = {
        "a/apple.md": ["apple pie recipe with cinnamon", "baking apples at home"],
        "b/banana.md": ["banana bread needs ripe bananas", "storing bananas"],
        "b/cherry.md": ["cherry jam and apple jelly"],
    }
    for path, texts in docs.items():
        chunks = [Chunk(i, f"part {i}", 2, t, len(t) // 4) for i, t in enumerate(texts)]
        rec = DocumentRecord(path, "md", None, False, None, False, path.split("/")[0], None, (), None, "h", 1)
        store.replace_document(rec, chunks, emb.embed_documents(texts))
    yield store, emb
    store.close()


def test_hybrid_fuses_both_legs(indexed):
    store, emb = indexed
    response = run_search(store, ModelQueries(emb), SearchRequest("apple pie", limit=3))
    assert response.results[0].path == "a/apple.md"
    # Weighted RRF (docs/retrieval.md): rank 1 in the trigram leg (weight 1.0) and the vector leg (0.5).
    assert response.results[0].score == pytest.approx(1.0 / 61 + 1.0 / 61)


def test_filters_apply_to_both_legs(indexed):
    store, emb = indexed
    response = run_search(
        store, ModelQueries(emb), SearchRequest("apple", limit=10, filters=SearchFilters(category="b"))
    )
    assert {h.path for h in response.results} <= {"b/banana.md", "b/cherry.md"}
    assert response.filter_applied == {"category": "b"}


def test_exclusion_drops_vector_candidates_too(indexed):
    store, emb = indexed
    response = run_search(store, ModelQueries(emb), SearchRequest("apple -cinnamon", limit=10))
    assert all("cinnamon" not in h.content for h in response.results)
    assert response.filter_applied == {"excluded_terms": ["cinnamon"]}


def test_vector_only_query_under_the_floor(indexed):
    store, emb = indexed
    response = run_search(store, ModelQueries(emb), SearchRequest("pi", limit=2))
    assert len(response.results) == 2
    # The vector leg alone, at its built-in weight 0.5 (a lone leg's order does not depend on it).
    assert all(h.score in (pytest.approx(1.0 / 61), pytest.approx(1.0 / 62)) for h in response.results)


def test_single_leg_requests(indexed):
    store, emb = indexed
    fts = run_search(store, ModelQueries(emb), SearchRequest("bananas", limit=5, legs=("fts",)))
    assert {h.path for h in fts.results} == {"b/banana.md"}
    vec = run_search(store, ModelQueries(emb), SearchRequest("bananas", limit=5, legs=("vector",)))
    assert len(vec.results) == 5


def test_explain_reports_each_leg(indexed):
    store, emb = indexed
    hit = run_search(store, ModelQueries(emb), SearchRequest("apple pie", limit=1, explain=True)).results[0]
    assert hit.explain["fts"]["rank"] == 1 and hit.explain["vector"]["rank"] == 1
    assert hit.explain["rrf"] == pytest.approx(1.0 / 61 + 1.0 / 61)  # fts weight 1.0, vector 1.0
    assert (
        "explain"
        not in run_search(store, ModelQueries(emb), SearchRequest("apple pie", limit=1)).results[0].as_dict()
    )


def test_explain_text_keeps_tiny_bm25_scores_readable() -> None:
    """``--explain --format text`` prints leg scores to 4 significant digits (bm25 can be ~1e-6)."""
    from grooveseek.cli.search import _explain_lines

    line = _explain_lines(
        {
            "fts": {"rank": 1, "score": -1.234e-06},
            "vector": {"rank": 3, "score": 0.98765},
            "rrf": 0.0325,
            "rerank": 2.5,
        }
    )[0]
    assert line == "explain: fts #1 (-1.234e-06), vector #3 (0.9877), cjk -; rrf 0.0325; rerank 2.5000"

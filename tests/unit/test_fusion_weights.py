"""Weighted RRF and the per-leg weight rule driven by ``Embedder.languages`` (issue 11, docs/retrieval.md)."""

from __future__ import annotations

import pytest

from grooveseek.search.fusion import (
    CJK_QUERY_VECTOR_FACTOR,
    DEFAULT_LEG_WEIGHTS,
    fusion_fingerprint,
    leg_weights,
    rrf,
)
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import FusionSettings, SearchRequest
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk

AUTO = {"fts": None, "vector": None, "cjk": None}


def test_weighted_rrf_scales_each_legs_share():
    fused = dict(rrf([[1, 2], [2, 3]], 60.0, [1.0, 0.5]))
    assert fused[1] == pytest.approx(1 / 61)
    assert fused[2] == pytest.approx(1 / 62 + 0.5 / 61)
    assert fused[3] == pytest.approx(0.5 / 62)
    assert rrf([[1, 2], [2, 1]], 60.0) == rrf([[1, 2], [2, 1]], 60.0, [1.0, 1.0])


def test_a_zero_weight_leg_adds_nothing():
    assert [cid for cid, _ in rrf([[1], [2]], 60.0, [1.0, 0.0])] == [1]


def test_english_embedder_loses_vector_weight_on_a_japanese_query():
    lw = leg_weights(AUTO, ("en",), "配列の要素を削除する", lexical_hits=True)
    assert lw.weights == {
        **DEFAULT_LEG_WEIGHTS,
        "vector": DEFAULT_LEG_WEIGHTS["vector"] * CJK_QUERY_VECTOR_FACTOR,
    }
    assert CJK_QUERY_VECTOR_FACTOR < 1
    assert lw.rule is not None and "cjk-query" in lw.rule


@pytest.mark.parametrize(
    ("languages", "query"),
    [(("multilingual",), "配列の要素を削除する"), (("ja",), "配列"), (("en",), "remove an array element")],
)
def test_full_vector_weight_when_the_model_reads_the_query(languages, query):
    lw = leg_weights(AUTO, languages, query, lexical_hits=True)
    assert lw.weights == DEFAULT_LEG_WEIGHTS and lw.rule is None


def test_a_cjk_query_with_no_lexical_hits_keeps_its_vector_leg():
    lw = leg_weights(AUTO, ("en",), "配列の要素を削除する", lexical_hits=False)
    assert lw.weights["vector"] == DEFAULT_LEG_WEIGHTS["vector"] and "no-lexical-hits" in (lw.rule or "")


def test_explicit_weights_replace_the_rule():
    explicit = {"fts": 2.0, "vector": 0.8, "cjk": None}
    lw = leg_weights(explicit, ("en",), "配列の要素を削除する", lexical_hits=True)
    assert lw.weights == {"fts": 2.0, "vector": 0.8, "cjk": DEFAULT_LEG_WEIGHTS["cjk"]} and lw.rule is None


def test_fingerprint_names_the_rule_only_where_it_can_apply():
    assert fusion_fingerprint(AUTO, ("en",))["cjk_query_vector_factor"] == CJK_QUERY_VECTOR_FACTOR
    assert fusion_fingerprint(AUTO, ("multilingual",))["cjk_query_vector_factor"] is None
    assert fusion_fingerprint({**AUTO, "vector": 0.7}, ("en",)) == {
        "fts": 1.0,
        "vector": 0.7,
        "cjk": 1.5,
        "cjk_query_vector_factor": None,
    }


@pytest.fixture
def store(tmp_path):
    emb = FakeEmbedder(16)
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(16)
    for i, text in enumerate(["配列の要素を削除する方法", "文字列を連結する", "Array deletion in English"]):
        chunks = [Chunk(0, None, None, text, len(text))]
        rec = DocumentRecord(f"d{i}.md", "md", None, False, None, False, None, None, (), None, "h", 1)
        s.replace_document(rec, chunks, emb.embed_documents([text]))
    yield s, emb
    s.close()


def test_the_pipeline_applies_and_explains_the_weights(store):
    s, emb = store  # FakeEmbedder declares the Embedder default, ("en",)
    req = SearchRequest("配列の要素", limit=3, explain=True, fusion=FusionSettings(method="rrf"))
    response = run_search(s, ModelQueries(emb), req)
    top = response.results[0]
    assert top.path == "d0.md"
    assert top.explain["fusion_rule"].startswith("cjk-query-english-embedder")
    vector_hits = [h for h in response.results if "vector" in h.explain]
    expected = DEFAULT_LEG_WEIGHTS["vector"] * CJK_QUERY_VECTOR_FACTOR
    assert vector_hits and all(h.explain["vector"]["weight"] == expected for h in vector_hits)
    for hit in response.results:
        shares = sum(leg["rrf"] for name, leg in hit.explain.items() if name in ("fts", "vector", "cjk"))
        assert shares == pytest.approx(hit.score)


def test_explicit_vector_weight_reaches_the_pipeline(store):
    s, emb = store
    req = SearchRequest("配列の要素", limit=3, explain=True, fusion=FusionSettings(vector_weight=2.0))
    response = run_search(s, ModelQueries(emb), req)
    assert all(h.explain.get("vector", {"weight": 2.0})["weight"] == 2.0 for h in response.results)
    assert "fusion_rule" not in response.results[0].explain

"""Issue 27: section grouping (``search.sections``) and score-aware fusion (``fusion.convex``, the
"auto" method), on a real SQLite store with fake vectors."""

from __future__ import annotations

import pytest

from grooveseek.search.fusion import convex, fuse, fusion_method, rrf, similarity
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import FusionSettings, SearchRequest
from grooveseek.search.sections import group_sections
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk


def test_similarity_turns_bm25_and_distance_into_higher_is_better():
    assert similarity("fts", -7.5) == 7.5 and similarity("cjk", -2.0) == 2.0
    assert similarity("vector", 0.0) == 1.0 and similarity("vector", 2**0.5) == pytest.approx(0.0)


def test_convex_keeps_a_legs_clear_win_that_rrf_gives_away():
    # The bigram leg is sure of chunk 1 (score far above the rest); the vector leg ranks 2 and 3 above
    # it by a hair. RRF sees only ranks; the convex combination sees the margins.
    legs = [
        ("cjk", [1, 2, 3, 4], {1: -30.0, 2: -10.0, 3: -9.5, 4: -9.0}),
        ("vector", [2, 3, 1, 4], {2: 0.80, 3: 0.81, 1: 0.82, 4: 1.2}),
    ]
    assert rrf([ids for _, ids, _ in legs], 60.0)[0][0] == 2
    fused = convex(legs, [1.0, 1.0])
    assert fused[0][0] == 1
    # every score is the weighted mean of normalised scores: within 0..1
    assert all(0.0 <= s <= 1.0 for _, s in fused)


def test_convex_ignores_an_empty_or_zero_weight_leg_and_breaks_ties_by_id():
    legs = [("fts", [5, 3], {5: -2.0, 3: -2.0}), ("cjk", [], {}), ("vector", [9], {9: 0.1})]
    fused = convex(legs, [1.0, 1.5, 0.0])
    assert fused == [(3, 1.0), (5, 1.0)]
    assert convex([("fts", [], {})], [1.0]) == []
    with pytest.raises(ValueError, match="normalisation"):
        convex(legs, [1.0, 1.0, 1.0], normalise="zscore")


def test_auto_fuses_cjk_queries_by_score_and_others_by_rank():
    assert fusion_method("auto", "配列の要素を削除する") == "convex"
    assert fusion_method("auto", "install from the lockfile") == "rrf"
    assert fusion_method("rrf", "配列") == "rrf" and fusion_method("convex", "npm ci") == "convex"
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([], [], method="bm25", k=60.0)


def test_group_sections_folds_later_pieces_into_the_first():
    keys = {1: "a", 2: "b", 3: "a", 4: "c", 5: "a"}
    groups = group_sections([(3, 0.9), (2, 0.8), (1, 0.7), (4, 0.6), (5, 0.5), (7, 0.4)], keys)
    assert [(g.chunk_id, g.score, g.members) for g in groups] == [
        (3, 0.9, (3, 1, 5)),
        (2, 0.8, (2,)),
        (4, 0.6, (4,)),
        (7, 0.4, (7,)),  # no key (deleted since the legs ran): a hit of its own
    ]


@pytest.fixture
def store(tmp_path):
    """One long section cut into three pieces (lines 3-20) plus two short sections elsewhere."""
    emb = FakeEmbedder(16)
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(16)
    pieces = [
        Chunk(
            0,
            "Install",
            2,
            "npm install reads the lockfile and installs packages",
            10,
            start_line=3,
            end_line=8,
        ),
        Chunk(
            1,
            "Install",
            2,
            "npm install also updates the lockfile when ranges allow",
            10,
            start_line=9,
            end_line=14,
        ),
        Chunk(
            2,
            "Install",
            2,
            "npm install with no arguments installs every dependency",
            10,
            start_line=15,
            end_line=20,
        ),
    ]
    docs = {
        "install.md": pieces,
        "ci.md": [
            Chunk(
                0,
                "Clean install",
                2,
                "npm ci installs exactly from the lockfile",
                8,
                start_line=3,
                end_line=5,
            )
        ],
        "audit.md": [
            Chunk(0, "Audit", 2, "npm audit reports vulnerable packages", 6, start_line=3, end_line=4)
        ],
    }
    for path, chunks in docs.items():
        rec = DocumentRecord(path, "md", None, False, None, False, None, None, (), None, path, 1)
        s.replace_document(rec, chunks, emb.embed_documents([c.content for c in chunks]))
    yield s, emb
    s.close()


def test_the_pipeline_returns_one_hit_per_section_unless_asked_for_pieces(store):
    s, emb = store
    grouped = run_search(s, ModelQueries(emb), SearchRequest("npm install lockfile", limit=5)).results
    assert [h.path for h in grouped].count("install.md") == 1
    hit = next(h for h in grouped if h.path == "install.md")
    assert hit.section == {"start_line": 3, "end_line": 20, "pieces": 3}  # the pieces that matched
    assert hit.end_line - hit.start_line == 5  # the hit's own lines stay its content's (snippets)
    assert hit.as_dict()["section"] == hit.section
    assert len(grouped) == 3
    pieces = run_search(
        s, ModelQueries(emb), SearchRequest("npm install lockfile", limit=5, sections=False)
    ).results
    assert [h.path for h in pieces].count("install.md") == 3
    assert all(h.end_line - h.start_line == 5 for h in pieces if h.path == "install.md")
    # The grouped hit is the best piece: the same chunk, score and text as the first piece listed.
    first = next(h for h in pieces if h.path == "install.md")
    assert (hit.chunk_id, hit.score, hit.content) == (first.chunk_id, first.score, first.content)


def test_convex_explains_its_score_under_its_own_name(store):
    s, emb = store
    req = SearchRequest("npm lockfile", limit=3, explain=True, fusion=FusionSettings(method="convex"))
    top = run_search(s, ModelQueries(emb), req).results[0]
    assert "convex" in top.explain and "rrf" not in top.explain
    assert top.explain["convex"] == top.score and "rrf" not in top.explain.get("fts", {})


def test_tune_ranks_under_the_configured_method_grouping_and_weights(store):
    """Issue 27: tune's grid conditions keep the config's fusion method, leg weights and grouping
    (only the RRF constant and bm25 weights vary), and the snippet it proposes carries them."""
    from grooveseek.cli.tune import kept_fusion
    from grooveseek.config.model import FusionConfig, GrooveConfig, SearchConfig
    from grooveseek.eval.grid import condition_search
    from grooveseek.eval.tune import DEFAULT_CONDITION, fusion_snippet
    from grooveseek.search.request import resolve_request

    s, emb = store
    fusion = FusionConfig(method="convex", vector_weight=0.5)
    config = GrooveConfig(search=SearchConfig(group_sections=False, fusion=fusion))
    base = resolve_request(config, "", rerank=False, mmr=False, parent_retriever=False)
    tuned = condition_search(s, ModelQueries(emb), DEFAULT_CONDITION, 5, base)("npm install lockfile", 5)
    req = resolve_request(
        config, "npm install lockfile", limit=5, rerank=False, mmr=False, parent_retriever=False
    )
    searched = run_search(s, ModelQueries(emb), req).results
    assert [(h.chunk_id, h.score) for h in tuned] == [(h.chunk_id, h.score) for h in searched]
    assert [h.path for h in tuned].count("install.md") == 3  # pieces, as the config asks
    default = condition_search(s, ModelQueries(emb), DEFAULT_CONDITION, 5)("npm install lockfile", 5)
    assert [h.score for h in default] != [h.score for h in tuned]  # RRF scores, grouped: not the same
    snippet = fusion_snippet(DEFAULT_CONDITION, kept_fusion(base.fusion))
    assert 'method = "convex"' in snippet and "vector_weight = 0.5" in snippet


@pytest.mark.parametrize("method", ["rrf", "convex"])
def test_a_tie_goes_to_the_chunk_whose_words_a_lexical_leg_matched(method):
    # Issue 27: in a 20 MB note the only chunk holding "zebrafish quokka" (chunk 900, first in the
    # trigram leg) tied with the vector leg's first chunk (chunk 7, neither word), which won on its
    # smaller id. Found by one leg each at the same rank, the lexical leg's chunk wins now.
    legs = [
        ("fts", [900], {900: -12.0}),
        ("vector", [7, 8], {7: 0.9, 8: 1.0}),
        ("cjk", [], {}),
    ]
    fused = fuse(legs, [1.0, 1.0, 1.5], method=method, k=60.0)
    assert fused[0][0] == 900 and fused[1][0] == 7
    assert fused[0][1] == fused[1][1]
    # Between two lexical ties the better lexical rank wins, then the smaller id.
    legs = [
        ("fts", [30, 20], {30: -5.0, 20: -4.0}),
        ("vector", [20, 30], {20: 0.5, 30: 0.6}),
        ("cjk", [], {}),
    ]
    assert [cid for cid, _ in fuse(legs, [1.0, 1.0, 1.5], method="rrf", k=60.0)] == [30, 20]
    # Without a lexical leg the order is by id, as before.
    assert [cid for cid, _ in rrf([[5], [3]], 60.0)] == [3, 5]

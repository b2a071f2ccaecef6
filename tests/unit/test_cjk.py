"""The CJK bigram leg: bigram extraction, NFKC folding, the bigram table, migrations and the leg itself."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grooveseek.cjk import (
    MAX_QUERY_BIGRAMS,
    bigram_text,
    char_class,
    cjk_runs,
    fold,
    mostly_cjk,
    query_bigrams,
)
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk, SearchFilters


def test_runs_join_kanji_and_kana_as_the_text_has_them():
    assert cjk_runs("配列のコピー方法をJSONで") == ["配列のコピー方法を", "で"]
    assert cjk_runs("plain english") == []


def test_bigrams_cover_every_run_and_a_lone_character_is_its_own_token():
    assert bigram_text("東京都の天気") == "東京 京都 都の の天 天気"
    assert (
        bigram_text("猫 is here") == "猫  is here"
    )  # the non-CJK rest is kept for unicode61    # half-width katakana is folded first
    assert bigram_text("ｵﾌﾞｼﾞｪｸﾄ") == "オブ ブジ ジェ ェク クト"


def test_query_bigrams_are_deduplicated_in_order_and_capped():
    assert query_bigrams("東京 天気 東京") == ["東京", "天気"]
    assert query_bigrams("null 値") == ["null", "値"]
    assert query_bigrams("Promise.all で") == ["promise", "all", "で"]
    assert query_bigrams("plain english only") == []  # no kana or kanji: the trigram leg's query
    long_query = "".join(chr(0x4E00 + i) for i in range(200))
    assert len(query_bigrams(long_query)) == MAX_QUERY_BIGRAMS


def test_fold_is_nfkc():
    assert fold("ＪＳＯＮ") == "JSON"
    assert fold("ｵﾌﾞｼﾞｪｸﾄ") == "オブジェクト"
    assert fold("①") == "1"


def test_mostly_cjk_counts_letters_not_spaces_or_punctuation():
    assert mostly_cjk("配列 要素 削除")
    assert mostly_cjk("Promise.all で複数の非同期処理をまとめる")
    assert not mostly_cjk("how to use Promise.all で")
    assert not mostly_cjk("?!")


@given(st.text(alphabet=st.sampled_from("東京都天気配列のコピー方法abc 。"), max_size=40))
def test_every_bigram_is_a_substring_of_its_source(text):
    for gram in bigram_text(text).split():
        assert gram in text
        if any(char_class(c) in ("kanji", "hiragana", "katakana") for c in gram):
            assert 1 <= len(gram) <= 2 and all(char_class(c) != "word" for c in gram)


def _add(store: Store, emb: FakeEmbedder, path: str, texts: list[str]) -> None:
    chunks = [Chunk(i, None, None, t, len(t.encode()) // 4) for i, t in enumerate(texts)]
    rec = DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h", 1)
    store.replace_document(rec, chunks, emb.embed_documents(texts))


@pytest.fixture
def store(any_store):
    """Three Japanese documents on each backend (``any_store``)."""
    emb = FakeEmbedder(16)
    s = any_store(16)
    _add(s, emb, "tokyo.md", ["東京の天気は晴れです。明日も東京は暖かい。"])
    _add(s, emb, "array.md", ["配列をコピーするにはスプレッド構文を使います。"])
    _add(s, emb, "kyoto.md", ["京都の紅葉の名所を紹介します。"])
    return s, emb


def test_bigrams_find_a_two_character_word_inside_unspaced_text(store):
    """紅葉 sits inside the run 京都の紅葉の名所を紹介します; the old leg indexed only kanji runs."""
    s, emb = store
    response = run_search(s, ModelQueries(emb), SearchRequest("紅葉の名所", limit=3, legs=("cjk",)))
    assert [h.path for h in response.results] == ["kyoto.md"]


def test_full_width_and_half_width_queries_find_their_folded_forms(store):
    s, emb = store
    _add(s, emb, "json.md", ["JSONのオブジェクトを文字列にする"])
    for query in ("ＪＳＯＮ", "ｵﾌﾞｼﾞｪｸﾄ"):
        response = run_search(s, ModelQueries(emb), SearchRequest(query, limit=1, legs=("fts", "cjk")))
        assert [h.path for h in response.results] == ["json.md"], query
        assert response.results[0].content == "JSONのオブジェクトを文字列にする"


def test_full_width_text_is_found_by_an_ascii_query_and_keeps_its_content(store):
    s, emb = store
    _add(s, emb, "wide.md", ["ＮＰＭでパッケージを公開する"])
    response = run_search(s, ModelQueries(emb), SearchRequest("npm", limit=1, legs=("fts",)))
    assert [h.path for h in response.results] == ["wide.md"]
    assert response.results[0].content == "ＮＰＭでパッケージを公開する"


def test_a_japanese_querys_latin_word_ranks_in_the_bigram_leg(store):
    s, emb = store
    _add(s, emb, "spread.md", ["Spread構文でarrayをコピーする"])
    response = run_search(s, ModelQueries(emb), SearchRequest("spread の使い方", limit=2, legs=("cjk",)))
    assert response.results[0].path == "spread.md"
    a_query = run_search(
        s, ModelQueries(emb), SearchRequest("a の", limit=5, legs=("cjk",))
    )  # "a" is no prefix query
    assert "spread.md" not in [h.path for h in a_query.results]


def test_two_character_query_gets_lexical_hits(store):
    s, emb = store
    response = run_search(s, ModelQueries(emb), SearchRequest("東京", limit=3, explain=True))
    top = response.results[0]
    assert top.path == "tokyo.md"
    assert top.explain["cjk"]["rank"] == 1
    assert "fts" not in top.explain  # under the trigram floor: the trigram leg was skipped


def test_cjk_leg_off_finds_nothing_lexical(store):
    s, emb = store
    response = run_search(s, ModelQueries(emb), SearchRequest("東京", limit=3, legs=("cjk",)))
    assert [h.path for h in response.results] == ["tokyo.md"]
    assert run_search(s, ModelQueries(emb), SearchRequest("東京", limit=3, legs=("fts",))).results == ()


def test_query_of_short_words_only(store):
    s, emb = store
    response = run_search(s, ModelQueries(emb), SearchRequest("配列 コピー", limit=1, legs=("fts", "cjk")))
    assert response.results[0].path == "array.md"


def test_exclusions_apply_to_the_cjk_leg(store):
    s, emb = store
    response = run_search(s, ModelQueries(emb), SearchRequest("東京 -明日も", limit=5, legs=("cjk",)))
    assert response.results == ()


def test_deleting_a_document_removes_its_bigrams(store):
    s, _emb = store
    assert s.cjk_candidates(["東京"], 10, (2.0, 1.0, 1.0), SearchFilters())
    s.delete_documents(["tokyo.md"])
    assert s.cjk_candidates(["東京"], 10, (2.0, 1.0, 1.0), SearchFilters()) == []


def test_migration_4_refolds_both_tables_of_an_older_index(tmp_path):
    emb = FakeEmbedder(16)
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(16)
    _add(s, emb, "wide.md", ["ＪＳＯＮの読み込み"])
    # What versions 2 and 3 wrote: raw text in the trigram table, kanji/katakana-only bigrams.
    s.conn.execute("delete from fts_chunks; delete from fts_cjk")
    s.conn.execute(
        "insert into fts_chunks(rowid, heading, context, content) select id, '', '', content from chunks"
    )
    s.conn.execute(
        "insert into fts_cjk(rowid, heading, context, content) select id, '', '', '読込' from chunks"
    )
    s.conn.execute("pragma user_version=3")
    s.close()
    s = Store.open(tmp_path / ".groove.db")
    assert s.conn.execute("select rowid from fts_chunks where fts_chunks match '\"JSON\"'").fetchall()
    assert s.conn.execute("select rowid from fts_cjk where fts_cjk match '\"の読\"'").fetchall()
    s.close()


def test_migration_backfills_an_index_built_before_the_bigram_table(tmp_path):
    emb = FakeEmbedder(16)
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(16)
    _add(s, emb, "tokyo.md", ["東京の天気"])
    s.conn.execute("drop table fts_cjk; pragma user_version=1")
    s.close()
    s = Store.open(tmp_path / ".groove.db")
    assert s.conn.execute("select rowid from fts_cjk where fts_cjk match '天気'").fetchall()
    s.close()


def test_unicode61_keeps_the_long_vowel_mark_in_tokens(store):
    s, emb = store
    _add(s, emb, "copy.md", ["データのコピー"])
    assert s.cjk_candidates(["ピー"], 10, (2.0, 1.0, 1.0), SearchFilters())


def test_a_malformed_bigram_match_is_an_sqlite_error(temp_store):
    s = temp_store(16)
    with pytest.raises(apsw.SQLError):
        s.conn.execute("select * from fts_cjk where fts_cjk match '\"'").fetchall()


def _runs_by_class(text: str) -> list[str]:
    """cjk_runs by char_class in a Python loop: maximal runs of kanji and kana, scripts mixed as the
    text has them (the bigram leg's runs, docs/retrieval.md)."""
    runs: list[str] = []
    current = ""
    for ch in text:
        if char_class(ch) in ("kanji", "hiragana", "katakana"):
            current += ch
            continue
        if current:
            runs.append(current)
        current = ""
    return [*runs, current] if current else runs


def test_the_run_regex_matches_char_class_on_every_boundary() -> None:
    from hypothesis import settings

    edges = list(
        "東京都天気アイウカナーｦﾝ々〆ぁあ abc・\u30a0\u30ff\u309f\u4dbf\u3400\uf900\ufaff\U0002f800\U0002fa1f"
    )

    @settings(max_examples=300, derandomize=True, database=None)
    @given(st.lists(st.sampled_from(edges) | st.characters(), max_size=30).map("".join))
    def check(text: str) -> None:
        assert cjk_runs(text) == _runs_by_class(text)

    check()

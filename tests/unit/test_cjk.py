"""The CJK short-word leg: bigram extraction, the bigram table, migration backfill and the leg itself."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grooveseek.cjk import bigram_text, char_class, cjk_runs, short_terms
from grooveseek.search.pipeline import run_search
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk


def test_runs_split_by_script():
    assert cjk_runs("配列のコピー方法をJSONで") == ["配列", "コピー", "方法"]
    assert cjk_runs("plain english") == []


def test_bigrams_are_within_one_run():
    assert bigram_text("東京都の天気") == "東京 京都 天気"
    assert bigram_text("猫") == ""  # a single character has no bigram


def test_short_terms_are_two_character_words_only():
    assert short_terms("東京 天気 配列のコピー方法 猫 東京") == ["東京", "天気", "配列", "方法"]
    assert short_terms("東京都庁") == []  # four characters: the trigram leg matches it exactly
    assert len(short_terms(" ".join(f"{chr(0x4E00 + i)}{chr(0x4E10 + i)}" for i in range(40)))) == 32


@given(st.text(alphabet=st.sampled_from("東京都天気配列のコピー方法abc 。"), max_size=40))
def test_every_bigram_is_a_substring_of_its_source(text):
    for gram in bigram_text(text).split():
        assert len(gram) == 2 and gram in text
        assert all(char_class(c) in ("kanji", "katakana") for c in gram)


def _add(store: Store, emb: FakeEmbedder, path: str, texts: list[str]) -> None:
    chunks = [Chunk(i, None, None, t, len(t.encode()) // 4) for i, t in enumerate(texts)]
    rec = DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h", 1)
    store.replace_document(rec, chunks, emb.embed_documents(texts))


@pytest.fixture
def store(tmp_path):
    emb = FakeEmbedder(16)
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(16)
    _add(s, emb, "tokyo.md", ["東京の天気は晴れです。明日も東京は暖かい。"])
    _add(s, emb, "array.md", ["配列をコピーするにはスプレッド構文を使います。"])
    _add(s, emb, "kyoto.md", ["京都の紅葉の名所を紹介します。"])
    yield s, emb
    s.close()


def test_two_character_query_gets_lexical_hits(store):
    s, emb = store
    response = run_search(s, emb, SearchRequest("東京", limit=3, explain=True))
    top = response.results[0]
    assert top.path == "tokyo.md"
    assert top.explain["cjk"]["rank"] == 1
    assert "fts" not in top.explain  # under the trigram floor: the trigram leg was skipped


def test_cjk_leg_off_finds_nothing_lexical(store):
    s, emb = store
    response = run_search(s, emb, SearchRequest("東京", limit=3, legs=("cjk",)))
    assert [h.path for h in response.results] == ["tokyo.md"]
    assert run_search(s, emb, SearchRequest("東京", limit=3, legs=("fts",))).results == ()


def test_query_of_short_words_only(store):
    s, emb = store
    response = run_search(s, emb, SearchRequest("配列 コピー", limit=1, legs=("fts", "cjk")))
    assert response.results[0].path == "array.md"


def test_exclusions_apply_to_the_cjk_leg(store):
    s, emb = store
    response = run_search(s, emb, SearchRequest("東京 -明日も", limit=5, legs=("cjk",)))
    assert response.results == ()


def test_deleting_a_document_removes_its_bigrams(store):
    s, _emb = store
    s.delete_documents(["tokyo.md"])
    assert s.conn.execute("select count(*) from fts_cjk where fts_cjk match '東京'").fetchall()[0][0] == 0


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
    rows = s.conn.execute("""select count(*) from fts_cjk where fts_cjk match '"ピー"'""").fetchall()
    assert rows[0][0] >= 1
    with pytest.raises(apsw.SQLError):
        s.conn.execute("select * from fts_cjk where fts_cjk match '\"'").fetchall()


def _runs_by_class(text: str) -> list[str]:
    """cjk_runs as R6.10 words it: maximal runs of one CJK class by char_class (a Python loop)."""
    runs: list[str] = []
    current, current_class = "", None
    for ch in text:
        cls = char_class(ch)
        if cls in ("kanji", "katakana") and cls == current_class:
            current += ch
            continue
        if current:
            runs.append(current)
        current, current_class = (ch, cls) if cls in ("kanji", "katakana") else ("", None)
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

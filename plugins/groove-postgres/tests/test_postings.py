"""The English leg from term postings (``postings.py``) ranks exactly as the ``LIKE`` scan of the
folded text: same chunks, same order, same bm25, on text built to find the differences (a phrase
inside longer words and repeated in one word, diacritics, ligatures and full-width letters folded
by NFKC, words glued to kana and kanji, underscores and hyphens, upper case, all three columns),
with filters and a negative phrase. The scan is itself checked against FTS5 by the contract suite."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from groove_postgres.backend import PostgresBackend

from grooveseek.storekit import Chunk, DocumentRecord, SearchFilters, StoreTarget

WORDS = (
    "package", "unpackaged", "PACKAGES", "repackage", "café", "cafe", "ﬁle", "file", "ＦＩＬＥ", "profile",
    "node_modules", "pre-package", "配列package", "installパッケージ", "aaaa", "aaaaaaa", "naïve", "Zürich",
    "zurich", "v2", "v22", "lockfile", "lock", "files", "x", "東京", "ok",
)  # fmt: skip
QUERIES = ("package", "file", "cafe", "aaa", "zur", "naive", "lock", "v22", "modules", "pack", "ile", "age")


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))


@pytest.fixture
def store(postgres_url, tmp_path: Path):
    s = PostgresBackend.shared().open(StoreTarget(postgres_url, tmp_path / "kb", tmp_path / "x.db"))
    s.ensure_vec_table(4)
    rng = random.Random(5)
    for d in range(40):
        chunks = [
            Chunk(j, _text(rng) if rng.random() < 0.5 else None, 2, _text(rng), 5, context=_text(rng))
            for j in range(3)
        ]
        rec = DocumentRecord(
            f"c{d % 3}/d{d}.md", "md", None, False, None, False, f"c{d % 3}", None, (), None, "h", 1
        )
        s.replace_document(rec, chunks, np.eye(4, dtype=np.float32)[[0, 1, 2]])
    yield s
    s.close()


def _both(store, expression: str, filters: SearchFilters, weights=(10.0, 2.0, 1.0)):
    ranked = []
    for on in (True, False):
        store.use_term_postings(on)
        ranked.append(store.fts_candidates(expression, 500, weights, filters))
    store.use_term_postings(True)
    return ranked


@pytest.mark.parametrize("category", [None, "c1"])
def test_postings_rank_as_the_text_scan(store, category):
    rng = random.Random(9)
    compared = 0
    for _ in range(40):
        phrases = rng.sample(QUERIES, rng.randint(1, 3))
        expression = " OR ".join(f'"{p}"' for p in phrases)
        postings, scan = _both(store, expression, SearchFilters(category=category))
        assert [cid for cid, _ in postings] == [cid for cid, _ in scan], expression
        assert [s for _, s in postings] == pytest.approx([s for _, s in scan], rel=1e-12, abs=1e-12)
        compared += len(scan)
    assert compared > 500  # the phrases match: the comparison is not between empty lists


def _same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    return [c for c, _ in a] == [c for c, _ in b] and [s for _, s in a] == pytest.approx([s for _, s in b])


def test_a_negative_phrase_and_a_limit(store):
    expression = '("package" OR "file") NOT ("lock")'
    postings, scan = _both(store, expression, SearchFilters())
    assert scan and _same(postings, scan)
    top3 = store.fts_candidates(expression, 3, (10.0, 2.0, 1.0), SearchFilters())
    assert _same(top3, scan[:3])


def test_a_generation_without_its_vocabulary_keeps_the_scan(store):
    expected = store.fts_candidates('"package"', 50, (1.0, 1.0, 1.0), SearchFilters())
    gen = store.generation
    store.conn.execute("update groove_gen_stats set term_vocab = false where gen = %s", (gen,))
    store.conn.execute("delete from groove_terms where gen = %s", (gen,))
    assert store.fts_candidates('"package"', 50, (1.0, 1.0, 1.0), SearchFilters()) == expected
